//! The fuzz targets as tests: in CI a fixed seed and a fixed number of inputs per target (a
//! few seconds each); `scripts/fuzz.sh` runs them longer (see the crate documentation).
use lwcbench_fuzz::{fuzz_and_assert, targets};

#[test]
fn fuzz_board_log() {
    fuzz_and_assert(&targets::BOARD_LOG);
}

#[test]
fn fuzz_power_log() {
    fuzz_and_assert(&targets::POWER_LOG);
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

#[test]
fn fuzz_link_frame() {
    fuzz_and_assert(&targets::LINK_FRAME);
}

/// The link corpus reaches the tag check and past it: its genuine frames open at a gateway of
/// their suite (otherwise mutations would only ever be refused before the cipher).
#[test]
fn link_corpus_holds_genuine_frames() {
    use lwcbench_link::{gateway::checks::Gateway, wire::keys::MasterKey, wire::suite};
    let m = MasterKey::from_bytes(targets::LINK_MASTER);
    let mut opened = std::collections::BTreeSet::new();
    for (name, bytes) in lwcbench_fuzz::corpus(targets::LINK_FRAME.name) {
        for s in targets::LINK_SUITES {
            let s = suite::find(s).unwrap();
            for unauth in targets::link_modes(&s) {
                let mut gw = Gateway::new(&s, &m, targets::LINK_DEVICES, 64, unauth).unwrap();
                if gw.open(&bytes).is_ok() {
                    opened.insert((s.name(), unauth, name.clone()));
                }
            }
        }
    }
    let suites: std::collections::BTreeSet<_> = opened.iter().map(|(s, u, _)| (s.clone(), *u)).collect();
    let modes: usize = targets::LINK_SUITES.iter().map(|s| targets::link_modes(&suite::find(s).unwrap()).len()).sum();
    assert_eq!(suites.len(), modes, "suites and modes with a genuine seed: {suites:?}");
}

/// Writes the genuine seeds of the link corpus (run once by hand with --ignored; the other
/// seeds are written by hand).
#[test]
#[ignore]
fn write_link_seeds() {
    use lwcbench_link::wire::{keys::MasterKey, suite};
    let m = MasterKey::from_bytes(targets::LINK_MASTER);
    let dir = lwcbench_fuzz::corpus_dir(targets::LINK_FRAME.name);
    std::fs::create_dir_all(&dir).unwrap();
    for (i, s) in targets::LINK_SUITES.iter().enumerate() {
        let s = suite::find(s).unwrap();
        for unauth in targets::link_modes(&s) {
            let d = i as u32 + 1;
            let mut k = suite::Keyed::new(&s, &m.device_key(s.id, d, s.key_len()), unauth).unwrap();
            let mut f = Vec::new();
            k.seal(d, 1000 + i as u64, &[0x41, 0x8c, 0xcc, 0xcd, 0x42, 0x48, 0, 0], &mut f).unwrap();
            let tag = if unauth { "unsafe" } else { "sealed" };
            let file = format!("{tag}-{}.bin", s.name().replace('/', "-").to_lowercase());
            std::fs::write(dir.join(file), f).unwrap();
        }
    }
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
