//! Fixtures shared by the report's integration tests.
#![allow(dead_code)]
use lwcbench_engine::clock::ClockInfo;
use lwcbench_engine::machine::{Build, Machine};
use lwcbench_engine::results::RunRecord;

/// A run.json record of a synthetic run with `groups` groups of 20 samples, no warm-up.
pub fn record(groups: usize) -> RunRecord {
    RunRecord {
        tool: "lwcbench".into(),
        version: "test".into(),
        args: vec![],
        preset: None,
        seed: 1,
        reps: 20,
        warmup: 0,
        warmup_policy: String::new(),
        min_sample_ns: 1.0,
        static_key_hex: None,
        static_iv_hex: None,
        payload: String::new(),
        groups,
        machine: Machine::detect(),
        build: Build::current(vec![]),
        clock: ClockInfo {
            time_source: "t".into(),
            cycle_source: "c".into(),
            overhead_ns: 1.0,
            resolution_ns: 1.0,
            cycles_per_ns: None,
            counter: "none".into(),
            counter_hz: None,
            counter_hz_source: String::new(),
        },
        started_utc: "2026-01-01T00:00:00Z".into(),
        finished_utc: "2026-01-01T00:00:01Z".into(),
        duration_s: 1.0,
        files: vec![],
        notes: vec![],
    }
}
