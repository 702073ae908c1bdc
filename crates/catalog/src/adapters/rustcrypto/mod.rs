//! Adapters over RustCrypto crates. The crate does the work; the adapter maps it onto the
//! lwcbench traits (and byte conventions) and reports the crate version in the metadata.
//! The RustCrypto AES modes are with the other AES libraries in `crate::aes`.
pub mod ascon;
pub mod block;
pub mod chacha;
pub mod salsa_rabbit;
