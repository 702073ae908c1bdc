//! The link's integration tests as one test binary: each file beside this one is a module
//! (they share `support`). One binary instead of one per file saves a thin-LTO link of the
//! link stack per file in `cargo test --release`; `autotests = false` in Cargo.toml.
mod gateway_stall;
mod gateway_survives;
mod netcond;
mod required;
mod support;
mod workers;

#[path = "../../../tests/support/one_binary.rs"]
mod one_binary;

#[test]
fn every_test_file_is_a_module_of_this_binary() {
    one_binary::assert_all_declared(env!("CARGO_MANIFEST_DIR"), include_str!("main.rs"));
}
