//! DRACO stream cipher (provisional reconstruction): bit-serial reference, fast single-stream, bit-sliced multi-stream
#![no_std]
