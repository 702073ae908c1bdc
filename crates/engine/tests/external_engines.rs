//! Real engine processes over the protocol: the awk mock (always) and the PyCryptodome engine
//! (skipped, with the reason printed, only where pycryptodome is not installed).
#[path = "../../../tests/support/required.rs"]
mod required;
use std::path::PathBuf;

use lwcbench_catalog::VerifyCtx;
use lwcbench_engine::external::{vectors, Engine, Failure, Offered};
use lwcbench_engine::plan::{Kiv, Scenario, Selection};
use lwcbench_engine::session::{self, Request};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn mock_cmd() -> String {
    format!("sh {}", root().join("engines/mock/engine.sh").display())
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lwcbench-ext-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn mock_engine_speaks_the_protocol() {
    let mut e = Engine::start(&mock_cmd()).unwrap();
    assert_eq!(e.hello.implementation, "mock-awk");
    assert_eq!(e.offers.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), vec!["TOY-ADD", "TOY-DIE"]);
    // by hand: 00+01, ff+02, 10+03 (mod 256)
    let (ct, tag) = e.encrypt("TOY-ADD", &[1, 2, 3, 4, 5, 6, 7, 8], &[], &[], &[0x00, 0xff, 0x10], None).unwrap();
    assert_eq!((ct, tag), (vec![0x01, 0x01, 0x13], vec![]));
    assert_eq!(
        e.decrypt("TOY-ADD", &[1, 2, 3, 4, 5, 6, 7, 8], &[], &[], &[0x01, 0x01, 0x13], &[]).unwrap(),
        vec![0x00, 0xff, 0x10]
    );
    let r = e.encrypt("TOY-ADD", &[1; 3], &[], &[], &[0], None);
    assert!(matches!(r, Err(Failure::Refused { ref code, .. }) if code == "bad-argument"), "{r:?}");
    let r = e.request("frobnicate", |_| Ok(()));
    assert!(matches!(r, Err(Failure::Refused { ref code, .. }) if code == "unknown-command"), "{r:?}");
    assert!(e.broken().is_none());
}

#[test]
fn a_run_with_a_mock_engine_writes_ordinary_results_and_survives_its_crash() {
    let (offered, failed) = Offered::start(&[mock_cmd(), "sh -c 'exit 3'".to_string()]);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].contains("its rows are off") && !failed[0].contains('\n'), "{}", failed[0]);
    let sel = Selection {
        ciphers: vec!["TOY-ADD".into(), "TOY-DIE".into(), "ChaCha20".into()],
        implementations: vec![],
        scenarios: vec![Scenario::Encrypt, Scenario::Init],
        kivs: vec![Kiv { random_key: false, random_iv: false }],
        sizes_bits: vec![64],
        ..Default::default()
    };
    let mut req = Request::new(sel);
    req.engines = offered;
    req.config.reps = 3;
    req.config.warmup = 1;
    req.config.min_sample_ns = 1000.0;
    let out = tmp("mock-run");
    req.out = Some(out.clone());
    let o = session::run(&req, |_, _, _| {}).unwrap();
    let ids: Vec<String> = o.results.iter().map(|r| r.group.entry.id()).collect();
    assert!(ids.iter().any(|i| i == "TOY-ADD/mock-awk"), "{ids:?}");
    assert!(ids.iter().any(|i| i.starts_with("ChaCha20/")), "in-process groups still measured: {ids:?}");
    assert!(!ids.iter().any(|i| i.starts_with("TOY-DIE")), "the crashed engine's group is skipped");
    let samples = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    let toy: Vec<&str> =
        samples.lines().filter(|l| l.starts_with("TOY-ADD,mock-awk,C,block,encrypt,\"s,s\",64,random,")).collect();
    assert_eq!(toy.len(), 3, "{samples}");
    assert!(toy.iter().all(|l| l.ends_with(",1,1064.0,")), "synthetic 1000 + 64 ns, no cycles: {toy:?}");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.lines().any(|l| l.starts_with("TOY-ADD,mock-awk,") && l.contains(",1064.0,")), "{summary}");
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let notes = run["notes"].to_string();
    assert!(notes.contains("inside an external engine") && notes.contains("timer synthetic"), "{notes}");
    assert!(notes.contains("skipped (engine failed)") && notes.contains("TOY-DIE"), "{notes}");
    assert!(notes.contains("closed its output"), "{notes}");
    let _ = std::fs::remove_dir_all(&out);
}

/// The real engine; pycryptodome is installed by `scripts/setup.sh --test`.
fn pycryptodome() -> Option<Engine> {
    match Engine::start("pycryptodome") {
        Ok(e) => Some(e),
        Err(m) if m.contains("not installed") || m.contains("cannot start") => {
            required::missing(&format!("the PyCryptodome engine is unavailable here: {m}"));
            None
        }
        Err(m) => panic!("{m}"),
    }
}

#[test]
fn pycryptodome_engine_passes_the_official_vectors() {
    let Some(mut e) = pycryptodome() else { return };
    assert_eq!(e.offers.len(), 30, "AES-128/192/256 × ten modes");
    let ctx = VerifyCtx::discover();
    let checks = vectors::verify(&mut e, &ctx, &|_, _| true);
    assert_eq!(checks.len(), 30);
    let mut passed = 0;
    for (id, cs) in &checks {
        for c in cs {
            assert!(c.ok(), "{id}: {} — {:?}", c.what, c.failures.iter().take(3).collect::<Vec<_>>());
            passed += c.passed;
        }
    }
    // transcribed vectors alone give > 40 comparisons; the shared folder several thousand
    assert!(passed > if ctx.vectors.is_some() { 3000 } else { 40 }, "{passed}");
}

#[test]
fn pycryptodome_engine_measures_through_a_session() {
    let Some(e) = pycryptodome() else { return };
    let mut offered = Offered::default();
    offered.add(e).unwrap();
    let sel = Selection {
        ciphers: vec!["AES-128-GCM/pycryptodome".into(), "AES-256-CBC/pycryptodome".into()],
        scenarios: vec![Scenario::Encrypt, Scenario::Decrypt, Scenario::Keysetup, Scenario::Reading],
        kivs: vec![Kiv { random_key: false, random_iv: false }, Kiv { random_key: true, random_iv: true }],
        sizes_bits: vec![128],
        ..Default::default()
    };
    let mut req = Request::new(sel);
    req.engines = offered;
    req.config.reps = 5;
    req.config.warmup = 2;
    req.config.min_sample_ns = 20_000.0;
    let out = tmp("pycryptodome-run");
    req.out = Some(out.clone());
    let o = session::run(&req, |_, _, _| {}).unwrap();
    // GCM: keysetup, encrypt, decrypt × 2 kiv + reading × 1 (static IV only); CBC: 3 × 2
    assert_eq!(o.results.len(), 7 + 6);
    for r in &o.results {
        assert_eq!(r.samples.len(), 5);
        assert_eq!(r.warmup.len(), 2);
        assert!(r.batch >= 1);
        // a Python call costs at least ~100 ns; an hour would be a unit error
        assert!(r.samples.iter().all(|s| s.ns > 50.0 && s.ns < 3.6e12), "{:?}: {:?}", r.group, r.samples);
    }
    let run = std::fs::read_to_string(out.join("run.json")).unwrap();
    assert!(run.contains("time.perf_counter_ns") && run.contains("interpreter overhead"), "{run}");
    let _ = std::fs::remove_dir_all(&out);
}
