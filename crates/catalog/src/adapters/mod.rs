//! Registration of every implementation, grouped by where the code comes from:
//! * [`rustcrypto`]: adapters over RustCrypto crates (`chacha.rs`: ChaCha20 and
//!   ChaCha20-Poly1305 with their Wycheproof runner).
//! * [`own`]: the workspace's own `no_std` crates and their C/C++ twins (`draco.rs`,
//!   `draco_cpp.rs`, `estream.rs`, `lightweight.rs`).
//!
//! Elsewhere: the AES library matrix (OpenSSL, libgcrypt, wolfSSL and RustCrypto AES
//! modes) is `crate::aes`; external engines (processes speaking the engine protocol)
//! are not catalogue entries but are found by `crates/engine` (`external.rs`).
pub mod own;
pub mod rustcrypto;
