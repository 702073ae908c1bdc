//! The fuzz targets as tests: in CI a fixed seed and a fixed number of inputs per target (a
//! few seconds each); `scripts/fuzz.sh` runs them longer (see the crate documentation).
use lwcbench_fuzz::{fuzz_and_assert, targets};

#[test]
fn fuzz_board_log() {
    fuzz_and_assert(&targets::BOARD_LOG);
}

#[test]
fn fuzz_dataset() {
    fuzz_and_assert(&targets::DATASET);
}

#[test]
fn fuzz_y4m() {
    fuzz_and_assert(&targets::Y4M);
}

#[test]
fn fuzz_engine_lines() {
    fuzz_and_assert(&targets::ENGINE_LINES);
}

#[test]
fn fuzz_run_dir() {
    fuzz_and_assert(&targets::RUN_DIR);
}

/// The mutator reaches the parsers: checksum repair makes mutated board-log lines pass the CRC
/// (otherwise every input would stop at "checksum mismatch" and fuzz nothing).
#[test]
fn crc_repair_gives_valid_lines() {
    let line = b"LWCB I 1 hello *00000000\n".to_vec();
    let fixed = targets::fix_crcs(&mut lwcbench_fuzz::Rng::new(1), line);
    let text = String::from_utf8(fixed).unwrap();
    // zlib.crc32(b"LWCB I 1 hello") = 0x3a47c58d (Python's zlib, independent of this crate)
    assert_eq!(text, "LWCB I 1 hello *3a47c58d\n");
    let p = lwcbench_engine::collect::parse_log(&text);
    assert!(p.malformed.iter().all(|m| !m.reason.contains("checksum")), "{:?}", p.malformed);
}
