//! Registration of every implementation, grouped by where the code comes from:
//! * [`rustcrypto`]: adapters over RustCrypto crates — `chacha.rs` (ChaCha20, ChaCha20-Poly1305
//!   and its Wycheproof runner), `block.rs` (the generic `RcBlock` adapter: AES-128, SPECK,
//!   XTEA), `ascon.rs` (Ascon-AEAD128, Ascon-128 v1.2), `salsa_rabbit.rs` (Salsa20, Rabbit).
//! * [`own`]: the workspace's own `no_std` crates and their C/C++ twins — `draco.rs`
//!   (`lwcbench-draco`), `draco_cpp.rs` (`lwcbench-cpp`), `estream.rs` (`lwcbench-estream`),
//!   `lightweight.rs` (`lwcbench-lightweight`).
//!
//! Elsewhere in the catalogue: the AES matrix (system libraries OpenSSL, libgcrypt, wolfSSL
//! and the RustCrypto AES modes) is [`crate::aes`]; vector parsers and runners shared by
//! several adapters are in [`crate::kat`] (e.g. `kat/block.rs`, `kat/estream.rs`), contract
//! checks in [`crate::conformance`]. External engines (other processes speaking the engine
//! protocol) are not catalogue entries: `crates/engine` (`external`) finds and runs them.
//!
//! Listing order is fixed in `registry.rs`.
pub mod own;
pub mod rustcrypto;
