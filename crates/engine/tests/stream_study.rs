//! End to end: the `stream-study` preset, with few repetitions, writes stream_study.csv with
//! every column filled for every registered stream cipher, the study's section in summary.md,
//! and the modelled-energy note in run.json.
use lwcbench_catalog::registry;
use lwcbench_core::Family;
use lwcbench_engine::session::{run, Request};
use lwcbench_engine::studies;

#[test]
fn stream_study_preset_fills_every_column() {
    // Without the video clip (frames/s derived from throughput), to keep the test short; the
    // frame scenario itself is tested in the engine's video tests.
    std::env::set_var(lwcbench_engine::video::ENV_VAR, "/nonexistent/lwcbench-test.y4m");
    let p = studies::find("stream-study").expect("preset exists");
    let mut req = Request::from_preset(p);
    req.config.reps = 3;
    req.config.warmup = 0;
    req.config.min_sample_ns = 1_000.0;
    req.args = vec!["test".into()];
    let dir = std::env::temp_dir().join(format!("lwcbench-stream-study-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    req.out = Some(dir.clone());
    run(&req, |_, _, _| {}).expect("run succeeds");

    let mut rd = csv::Reader::from_path(dir.join("stream_study.csv")).unwrap();
    let headers = rd.headers().unwrap().clone();
    for col in [
        "throughput_mb_s",
        "cycles_per_byte",
        "init_us",
        "frames_per_s",
        "code_bytes",
        "peak_stack_bytes",
        "rss_growth_per_byte",
        "energy_per_frame_uj_modelled",
        "rank_mb_s_per_byte",
        "erank_mb_s_per_byte_uj_modelled",
    ] {
        assert!(headers.iter().any(|h| h == col), "missing column {col}");
    }
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    let streams: Vec<String> = registry().iter().filter(|e| e.info.family == Family::Stream).map(|e| e.id()).collect();
    assert_eq!(rows.len(), streams.len(), "one row per stream-cipher implementation");
    for r in &rows {
        let id = format!("{}/{}", &r[0], &r[1]);
        assert!(streams.contains(&id), "{id}");
        for (h, v) in headers.iter().zip(r.iter()) {
            if h.ends_with("_measured") || h == "energy_measured_source" {
                // filled by --energy-from only
                assert!(v.is_empty(), "{id}: {h} is '{v}' without --energy-from");
            } else {
                assert!(!v.is_empty() && v != "NaN" && v != "inf", "{id}: column {h} is '{v}'");
            }
        }
        let num = |c: &str| r[headers.iter().position(|h| h == c).unwrap()].parse::<f64>().unwrap();
        assert!(
            num("throughput_ci95_lo_mb_s") <= num("throughput_mb_s")
                && num("throughput_mb_s") <= num("throughput_ci95_hi_mb_s"),
            "{id}"
        );
        assert!(
            num("rank_ci95_lo") <= num("rank_mb_s_per_byte") && num("rank_mb_s_per_byte") <= num("rank_ci95_hi"),
            "{id}"
        );
        assert!(num("code_bytes") > 100.0 && num("peak_stack_bytes") > 0.0, "{id}");
    }
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("## Stream-cipher study") && md.contains("MODELLED"));
    let rj = std::fs::read_to_string(dir.join("run.json")).unwrap();
    assert!(rj.contains("energy columns are MODELLED") && rj.contains("\"stream_study.csv\""));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn watts_override_and_bad_profile() {
    std::env::set_var(lwcbench_engine::video::ENV_VAR, "/nonexistent/lwcbench-test.y4m");
    let p = studies::find("stream-study").unwrap();
    let mut req = Request::from_preset(p);
    req.selection.ciphers = vec!["ChaCha20".into()];
    req.config.reps = 2;
    req.config.warmup = 0;
    req.config.min_sample_ns = 1_000.0;
    let dir = std::env::temp_dir().join(format!("lwcbench-stream-study-w-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    req.out = Some(dir.clone());
    req.study_options.watts = Some(2.0);
    run(&req, |_, _, _| {}).unwrap();
    let csv = std::fs::read_to_string(dir.join("stream_study.csv")).unwrap();
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let h = rd.headers().unwrap().clone();
    let r = rd.records().next().unwrap().unwrap();
    let get = |c: &str| r[h.iter().position(|x| x == c).unwrap()].to_string();
    assert_eq!(get("power_w"), "2.0");
    // energy per byte (nJ) = ns per byte × W: 2 W doubles it relative to the time.
    let nj: f64 = get("energy_per_byte_nj_modelled").parse().unwrap();
    let mbs: f64 = get("throughput_mb_s").parse().unwrap();
    assert!((nj - 2.0 * 1e3 / mbs).abs() / nj < 1e-9, "{nj} vs {mbs}");
    std::fs::remove_dir_all(&dir).unwrap();

    req.study_options.watts = None;
    req.study_options.power_profile = Some("no-such-device".into());
    let e = run(&req, |_, _, _| {}).err().expect("unknown profile is an error");
    assert!(e.contains("--power-profile: 'no-such-device'"), "{e}");
    assert!(!dir.join("run.json").exists(), "nothing half-written");
    let _ = std::fs::remove_dir_all(&dir);
}
