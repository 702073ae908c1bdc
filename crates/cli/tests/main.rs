//! The CLI's integration tests as one test binary: each file beside this one is a module.
//! One binary instead of one per file saves a thin-LTO link of the whole tool per file in
//! `cargo test --release` (CI's compile time); `autotests = false` in Cargo.toml.
// Integration tests, helpers included: a panic is the failure report, as .clippy.toml
// allows in #[test] functions.
#![allow(clippy::unwrap_used)]
mod atomic;
mod choose;
mod choose_scenarios;
mod cli;
mod collect;
mod collect_power;
mod engine_cli;
mod engine_faults;
mod esp8266;
mod golden;
mod hostile;
mod link;
mod link_chaos;
mod link_cli;
mod link_counters;
mod link_goose;
mod link_kill;
mod link_netcond;
mod link_oscore;
mod link_replay;
mod link_services;
mod link_shared;
mod link_video;
mod mcu;
mod measured_energy;
mod readers;
mod relocatable;
mod video;

#[path = "../../../tests/support/one_binary.rs"]
mod one_binary;
// The link's service helpers (mosquitto, PostgreSQL), which carry tests/support/required.rs.
#[path = "../../link/tests/support/mod.rs"]
mod support;
use support::required;

/// The `--board` choices, "rp2040, nrf52840, ...": the `[board.ID.power]` headers of
/// data/boards.toml in file order, read from the text here (not by the loaders under test).
pub(crate) fn boards_by_hand() -> String {
    let toml = include_str!("../../../data/boards.toml");
    let ids: Vec<&str> =
        toml.lines().filter_map(|l| l.trim().strip_prefix("[board.")?.strip_suffix(".power]")).collect();
    assert!(ids.len() >= 5, "{ids:?}");
    ids.join(", ")
}

#[test]
fn every_test_file_is_a_module_of_this_binary() {
    one_binary::assert_all_declared(env!("CARGO_MANIFEST_DIR"), include_str!("main.rs"));
}
