//! The CLI's integration tests as one test binary: each file beside this one is a module.
//! One binary instead of one per file saves a thin-LTO link of the whole tool per file in
//! `cargo test --release` (CI's compile time); `autotests = false` in Cargo.toml.
mod atomic;
mod choose;
mod cli;
mod collect;
mod collect_power;
mod engine_cli;
mod engine_faults;
mod hostile;
mod link;
mod link_chaos;
mod link_cli;
mod link_counters;
mod link_goose;
mod link_kill;
mod link_netcond;
mod link_replay;
mod link_services;
mod link_shared;
mod link_video;
mod mcu;
mod measured_energy;
mod readers;
mod video;

#[path = "../../../tests/support/one_binary.rs"]
mod one_binary;
// The link's service helpers (mosquitto, PostgreSQL), which carry tests/support/required.rs.
#[path = "../../link/tests/support/mod.rs"]
mod support;
use support::required;

#[test]
fn every_test_file_is_a_module_of_this_binary() {
    one_binary::assert_all_declared(env!("CARGO_MANIFEST_DIR"), include_str!("main.rs"));
}
