//! Registration of every implementation, one module per family of sources.
//! `rustcrypto`: RustCrypto crates. `draco`, `estream`, `lightweight`: own `no_std` crates
//! (and their C/C++ twins from `lwcbench-cpp`).
pub mod draco;
pub mod draco_cpp;
pub mod estream;
pub mod lightweight;
pub mod rustcrypto;
