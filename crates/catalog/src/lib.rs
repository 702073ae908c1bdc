//! The registry of every cipher implementation lwcbench knows.
//!
//! Where things live:
//! * own `no_std` code: `crates/draco`, `crates/estream`, `crates/lightweight`;
//! * C/C++ code: `cpp/` (wrapped by `crates/cpp-ffi`);
//! * registrations grouped by source: [`adapters`] (`rustcrypto/`: RustCrypto crates; `own/`: the
//!   own crates and their C/C++ twins); the AES library matrix (system libraries + RustCrypto
//!   AES modes): [`aes`]; external engines are not entries (`crates/engine`);
//! * known-answer tests and vector-file parsers: [`kat`]; contract checks: [`conformance`].
//!
//! Each family module registers its entries in [`registry`], which is the one list the CLI,
//! the engine and `lwcbench verify` read.

pub mod adapters;
pub mod aes;
pub mod conformance;
mod entry;
pub mod kat;
pub mod link_ids;
pub mod mcu_glue;
pub mod paths;
mod registry;
pub mod sizes;
pub mod torture;
pub mod verify;

pub use entry::{Entry, KatFiles, Make, McuImage, McuState, Verify};
pub use mcu_glue::mcu_manifest;
pub use registry::{find, registry, tag_variants};
pub use verify::{Check, VerifyCtx};

/// Compilers other than rustc that built code in this binary, as (name, version and flags),
/// for the result files' build record.
pub fn build_info() -> Vec<(String, String)> {
    vec![(
        "C++ (cpp/, via cc)".to_string(),
        format!("{} — flags: {}", lwcbench_cpp::CXX_COMPILER, lwcbench_cpp::CXX_FLAGS),
    )]
}
