//! Own code: registrations of the workspace's own `no_std` crates (`lwcbench-draco`,
//! `lwcbench-estream`, `lwcbench-lightweight`) and of their C/C++ twins from `lwcbench-cpp`.
pub mod draco;
pub mod draco_cpp;
pub mod estream;
pub mod lightweight;
