//! Own no_std implementations of eSTREAM-portfolio stream ciphers
#![no_std]
