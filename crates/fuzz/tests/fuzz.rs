//! The fuzz targets as tests: in CI a fixed seed and a fixed number of inputs per target (a
//! few seconds each); `scripts/ci/fuzz.sh` runs them longer (see the crate documentation).
use lwcbench_fuzz::{fuzz_and_assert, targets};
use lwcbench_link::wire::frame::Proto;

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
            let mut k = suite::Keyed::derived(&s, &m, Proto::Sensor, d, unauth).unwrap();
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

/// The run-dir seeds are whole runs that load and render (a run.json without its final line
/// end once swallowed the `=== samples.csv ===` line, so every seed failed at run.json and
/// nothing past it was fuzzed).
#[test]
fn run_dir_corpus_holds_runs_that_load() {
    let seeds = lwcbench_fuzz::corpus(targets::RUN_DIR.name);
    let whole: Vec<&String> = seeds
        .iter()
        .filter(|(_, b)| targets::unpack(b).iter().any(|(n, _)| n == "samples.csv"))
        .map(|(n, _)| n)
        .collect();
    assert!(whole.len() >= 3, "seeds with a samples.csv: {whole:?}");
    let d = tempfile::tempdir().unwrap();
    for (name, bytes) in seeds.iter().filter(|(n, _)| whole.contains(&n)) {
        let dir = d.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        for (f, b) in targets::unpack(bytes) {
            std::fs::write(dir.join(f), b).unwrap();
        }
        match lwcbench_report::Run::load(&dir) {
            // the seed with a NaN sample is refused where it is
            Err(e) if name.starts_with("nan-") => {
                assert!(
                    e.ends_with("samples.csv:3:11: ns_per_op 'NaN' is not a number of ns above 0 and at most 1e15"),
                    "{e}"
                )
            }
            Ok(run) if !name.starts_with("nan-") => assert!(!run.samples.is_empty(), "{name}"),
            r => panic!("{name}: {:?}", r.map(|_| ())),
        }
    }
}

/// The fixups reach what they are for: a repeated header field behind a valid CRC, a bad value
/// in a samples.csv or summary.csv cell, a broken dataset.
#[test]
fn fixups_make_the_faults_they_are_for() {
    let mut rng = lwcbench_fuzz::Rng::new(7);
    let good = "LWCP H 1 sensor=ina219 shunt_uohm=100000 *00000000\n";
    let mut repeated = 0;
    for _ in 0..60 {
        let t = String::from_utf8(targets::repeat_field(&mut rng, good.as_bytes().to_vec())).unwrap();
        let log = lwcbench_engine::collect::logger::parse_logger(&t);
        if t.matches("sensor=").count() + t.matches("shunt_uohm=").count() == 3 {
            repeated += 1;
            // the line passes its CRC and is refused for the repeat
            assert!(log.fatal.as_deref().is_some_and(|f| f.contains("is given twice")), "{t}: {:?}", log.fatal);
        }
    }
    assert!(repeated >= 20, "{repeated} of 60 inputs with a repeated field");
    let pack = b"=== samples.csv ===\ncipher,x,ns_per_op\nA,1,2.5\n".to_vec();
    let bad: usize = (0..60)
        .filter(|_| {
            let t = String::from_utf8(targets::bad_cell(&mut rng, pack.clone())).unwrap();
            targets::NON_FINITE.iter().any(|v| t.ends_with(&format!("A,1,{v}\n")) || t.contains(&format!("A,{v},")))
        })
        .count();
    assert!(bad >= 20, "{bad} of 60 packs with a bad cell");
    let csv = b"time,a,b\n1,2,3\n".to_vec();
    let broken = (0..60).filter(|_| targets::dataset_faults(&mut rng, csv.clone()) != csv).count();
    assert!(broken >= 20, "{broken} of 60 datasets changed");
}
