//! Own no_std implementations of lightweight block ciphers and AEADs
#![no_std]
