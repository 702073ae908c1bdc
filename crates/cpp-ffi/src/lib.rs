//! C/C++ implementations behind the lwcbench traits.
//!
//! The C++ sources live in `cpp/` at the repository root and are compiled by `build.rs` with
//! the `cc` crate. [`CXX_COMPILER`] and [`CXX_FLAGS`] say how, for the result files.
//!
//! * [`draco`]: DRACO (shared/specs/draco.md), `cpp/draco/draco.{h,cpp}`, reference and fast.

pub mod draco;

/// The C++ compiler `build.rs` used: its path and the first line of `--version`.
pub const CXX_COMPILER: &str = env!("LWCBENCH_CXX");
/// The flags the C++ sources were compiled with.
pub const CXX_FLAGS: &str = env!("LWCBENCH_CXX_FLAGS");
