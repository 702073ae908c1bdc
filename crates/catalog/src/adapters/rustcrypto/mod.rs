//! Adapters over RustCrypto crates. The crate does the work; the adapter maps it onto the
//! lwcbench traits (and byte conventions) and reports the crate version in the metadata.
pub mod ascon;
pub mod block;
pub mod chacha;
pub mod salsa_rabbit;
