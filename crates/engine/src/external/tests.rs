//! Protocol parser and client tests on hand-written transcripts (no process involved).
use std::io::Cursor;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::plan::{Kiv, Payload, Scenario};
use lwcbench_core::Family;

const HELLO: &str = "ok protocol=1 engine=mock engine-version=0.1 implementation=mock language=C timer=clock_gettime resolution-ns=1 note=fake%20engine\n";
const LIST: &str = "cipher name=AES-128-GCM family=aead key-bits=128 iv-bits=96 block-bits=128 tag-bits=128 scenarios=keysetup,encrypt,decrypt\n\
cipher name=AES-128-ECB family=block key-bits=128 iv-bits=0 block-bits=128 tag-bits=0 scenarios=encrypt\n\
end count=2\n";

/// A writer whose bytes the test can read back (what the host sent).
#[derive(Clone, Default)]
struct Sent(Arc<Mutex<Vec<u8>>>);
impl Write for Sent {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
impl Sent {
    fn lines(&self) -> Vec<String> {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap().lines().map(str::to_string).collect()
    }
}

fn engine(answers: &str) -> (Engine, Sent) {
    let sent = Sent::default();
    (Engine::over("mock", Box::new(sent.clone()), Cursor::new(answers.as_bytes().to_vec())), sent)
}

fn started(rest: &str) -> (Engine, Sent) {
    let (mut e, s) = engine(&format!("{HELLO}{LIST}{rest}"));
    e.handshake().unwrap();
    // These tests script the bench exchange line by line; the output check that runs before
    // timing has its own tests (crates/cli/tests/engine_faults.rs), so here it counts as passed.
    let names: Vec<String> = e.offers.iter().map(|o| o.name.clone()).collect();
    for n in names {
        e.checked.insert(n, None);
    }
    (e, s)
}

#[test]
fn lines_parse() {
    assert_eq!(
        parse_line("ok a=1 b=x%20y").unwrap(),
        Line::Ok(Fields(vec![("a".into(), "1".into()), ("b".into(), "x y".into())]))
    );
    assert_eq!(parse_line("ok").unwrap(), Line::Ok(Fields::default()));
    assert_eq!(parse_line("ok a=1\r").unwrap(), Line::Ok(Fields(vec![("a".into(), "1".into())])));
    assert_eq!(
        parse_line("err bad-argument key: not hex").unwrap(),
        Line::Err { code: "bad-argument".into(), message: "key: not hex".into() }
    );
    assert!(matches!(parse_line("end count=3").unwrap(), Line::End(_)));
    assert!(matches!(parse_line("sample rep=0 ns=1.5").unwrap(), Line::Data(k, _) if k == "sample"));
    assert!(parse_line("end").unwrap_err().contains("count"));
    assert!(parse_line("end count=x").unwrap_err().contains("not a number"));
    assert!(parse_line("ok a").unwrap_err().contains("not name=value"));
    assert!(parse_line("ok a=1  b=2").unwrap_err().contains("single spaces"));
    assert!(parse_line("ok a=%zz").unwrap_err().contains("percent"));
    assert!(parse_line("ok a=%4").unwrap_err().contains("percent"));
    assert!(parse_line("OK a=1").unwrap_err().contains("line kind"));
    assert!(parse_line("").is_err());
    assert!(parse_line("err").unwrap_err().contains("code"));
    // One name, one value: the second `ns` of a sample line would otherwise be dropped silently.
    assert_eq!(parse_line("sample rep=0 ns=1.5 ns=9").unwrap_err(), "field 'ns' given twice");
    assert_eq!(unescape(&escape("a b%c=d\n")).unwrap(), "a b%c=d\n");
    assert_eq!(escape("x y"), "x%20y");
}

#[test]
fn handshake_reads_identity_and_offers() {
    let (e, sent) = started("");
    assert_eq!(sent.lines(), vec!["hello protocol=1", "list"]);
    assert_eq!(e.hello.implementation, "mock");
    assert_eq!(e.hello.fields.get("note"), Some("fake engine"));
    assert_eq!(e.offers.len(), 2);
    assert_eq!(e.offers[0].family, Family::Aead);
    assert_eq!(e.offers[1].scenarios, vec![Scenario::Encrypt]);
    let ids: Vec<String> = e.entries().iter().map(|x| x.id()).collect();
    assert_eq!(ids, vec!["AES-128-GCM/mock", "AES-128-ECB/mock"]);
    assert_eq!(e.entries()[0].info.language, Language::C);
    assert_eq!(e.entries()[0].info.tag_bits, 128);
}

#[test]
fn handshake_errors_are_one_line() {
    let err = |t: &str| {
        let (mut e, _) = engine(t);
        let m = e.handshake().unwrap_err();
        assert!(!m.contains('\n'), "{m}");
        m
    };
    assert!(err("err unavailable pycryptodome is not installed\n").contains("pycryptodome is not installed"));
    assert!(err("err version this engine speaks protocol 2\n").contains("protocol 2"));
    assert!(err(&HELLO.replace("protocol=1", "protocol=2")).contains("protocol 2"));
    assert!(err(&HELLO.replace("language=C", "language=Cobol")).contains("Cobol"));
    assert!(err(&HELLO.replace(" timer=clock_gettime", "")).contains("'timer' missing"));
    assert!(err(&HELLO.replace("implementation=mock", "implementation=a/b")).contains("without '/'"));
    assert!(err("").contains("closed its output"));
    // truncated: no newline before the end of output
    assert!(err(HELLO.trim_end()).contains("truncated"));
    assert!(err(&format!("{HELLO}{}", LIST.replace("count=2", "count=3"))).contains("count=3"));
    assert!(err(&format!("{HELLO}{}", LIST.replace("family=aead", "family=hash"))).contains("family 'hash'"));
    assert!(err(&format!("{HELLO}{}", LIST.replace("key-bits=128 iv-bits=96", "key-bits=128 iv-bits=95")))
        .contains("whole number of bytes"));
    assert!(err(&format!("{HELLO}{}", LIST.replace("keysetup,encrypt,decrypt", "keysetup,full")))
        .contains("scenario 'full'"));
    assert!(err(&format!("{HELLO}{}", LIST.replace("AES-128-ECB", "AES-128-GCM"))).contains("twice"));
    assert!(err(&format!("{HELLO}ok\n")).contains("end count"));
    assert!(err(&format!("ok {}\n", "x".repeat(MAX_LINE))).contains("longer than"));
    assert!(err("hello there\n").contains("malformed"));
}

#[test]
fn single_operations_and_refusals() {
    let (mut e, sent) = started("ok ct=0102 tag=ff\nerr auth-failed tag does not verify\nok pt=zz\n");
    let (ct, tag) = e.encrypt("AES-128-GCM", &[0; 16], &[1; 12], &[], &[9, 9], None).unwrap();
    assert_eq!((ct, tag), (vec![1, 2], vec![0xff]));
    assert_eq!(
        sent.lines()[2],
        format!("encrypt cipher=AES-128-GCM key={} iv={} aad= pt=0909", "00".repeat(16), "01".repeat(12))
    );
    let r = e.decrypt("AES-128-GCM", &[0; 16], &[1; 12], &[], &[1, 2], &[0xfe]);
    assert_eq!(r, Err(Failure::Refused { code: "auth-failed".into(), message: "tag does not verify".into() }));
    // still usable after a refusal; a bad field then breaks the session for good
    let r = e.decrypt("AES-128-GCM", &[0; 16], &[1; 12], &[], &[1, 2], &[0xff]);
    assert!(matches!(&r, Err(Failure::Broken(m)) if m.contains("'pt': not hex")), "{r:?}");
    assert!(e.broken().is_some());
    assert!(matches!(e.encrypt("AES-128-GCM", &[0; 16], &[1; 12], &[], &[], None), Err(Failure::Broken(_))));
}

#[test]
fn too_long_request_is_refused_not_sent() {
    let (mut e, sent) = started("");
    let r = e.encrypt("AES-128-GCM", &[0; 16], &[1; 12], &[], &vec![0u8; MAX_LINE], None);
    assert!(matches!(r, Err(Failure::Refused { ref code, .. }) if code == "too-long"), "{r:?}");
    assert_eq!(sent.lines().len(), 2, "nothing sent");
    assert!(e.broken().is_none());
}

fn group(e: &Engine, which: usize, kiv: Kiv) -> Group {
    Group {
        entry: e.entries()[which].clone(),
        scenario: Scenario::Encrypt,
        kiv,
        size_bits: 128,
        payload: Payload::random(),
    }
}

fn cfg(reps: usize, warmup: usize) -> Config {
    Config { reps, warmup, seed: 7, ..Config::default() }
}

#[test]
fn bench_turns_samples_into_a_group_result() {
    let answers = "sample rep=0 warmup=1 batch=4 ns=9.5\nsample rep=1 warmup=0 batch=4 ns=2.25\nsample rep=2 warmup=0 batch=4 ns=3\nend count=3 batch=4\n";
    let (mut e, sent) = started(answers);
    let g = group(&e, 0, Kiv { random_key: true, random_iv: false });
    let mut n = 0;
    let r = e.bench(&g, &cfg(2, 1), || n += 1).unwrap();
    assert_eq!(n, 3);
    assert_eq!(r.batch, 4);
    assert_eq!(r.warmup.len(), 1);
    assert_eq!(r.samples.iter().map(|s| s.ns).collect::<Vec<_>>(), vec![2.25, 3.0]);
    assert!(r.samples.iter().all(|s| s.cycles.is_none()));
    let req = &sent.lines()[2];
    let seed = 7 ^ crate::runner::fnv1a(&g.label());
    assert_eq!(
        req,
        &format!("bench cipher=AES-128-GCM scenario=encrypt kiv=rs size-bits=128 key={} iv={} seed={seed} reps=2 warmup=1 batch=auto min-sample-ns=20000", hex::encode(default_static(16)), hex::encode(default_static(12)))
    );
    let rows = crate::results::sample_rows(&[r]);
    assert_eq!(rows[0].implementation, "mock");
    assert_eq!(rows[0].language, "C");
    assert_eq!(rows[0].kiv, "r,s");
}

#[test]
fn bench_rejects_malformed_sample_streams() {
    let k = Kiv { random_key: false, random_iv: false };
    let broken = |answers: &str| {
        let (mut e, _) = started(answers);
        let g = group(&e, 0, k);
        match e.bench(&g, &cfg(2, 0), || {}) {
            Err(Failure::Broken(m)) => {
                assert!(!m.contains('\n'));
                m
            }
            other => panic!("expected a broken session, got {:?}", other.map(|r| r.samples.len())),
        }
    };
    assert!(broken("sample rep=1 warmup=0 batch=1 ns=1\n").contains("out of order"));
    assert!(broken("sample rep=0 warmup=1 batch=1 ns=1\n").contains("warmup=1"));
    assert!(broken("sample rep=0 warmup=0 batch=1 ns=1\nsample rep=1 warmup=0 batch=2 ns=1\n").contains("batch 2"));
    assert!(broken("sample rep=0 warmup=0 batch=1 ns=-1\n").contains("bad time: ns=-1e0 is not a positive duration"));
    assert!(broken("sample rep=0 warmup=0 batch=1 ns=NaN\n").contains("bad time: ns=NaN is not a positive duration"));
    assert!(broken("sample rep=0 warmup=0 batch=1\n").contains("'ns' missing"));
    assert!(broken("sample rep=0 warmup=0 batch=1 ns=1\nend count=1\n").contains("1 measured samples arrived"));
    assert!(broken("sample rep=0 warmup=0 batch=1 ns=1\nsample rep=1 warmup=0 batch=1 ns=1\nend count=5\n")
        .contains("count=5"));
    assert!(broken("cipher name=x\n").contains("unexpected 'cipher'"));
    assert!(broken("sample rep=0 warmup=0 batch=1 ns=1\nsample rep=1 warmup=0 batch=1 ns=1\nok\n")
        .contains("'ok' after 2 data lines"));
    assert!(broken("sample rep=0 warmup=0 batch=1 ns=1\nsample rep=1 war").contains("truncated"));
    // an engine error ends the answer: refused, and the engine stays usable
    let (mut e, _) = started("sample rep=0 warmup=0 batch=1 ns=1\nerr cipher-error boom\n");
    let g = group(&e, 0, k);
    assert!(matches!(e.bench(&g, &cfg(2, 0), || {}), Err(Failure::Refused { code, .. }) if code == "cipher-error"));
    assert!(e.broken().is_none());
}

#[test]
fn bench_checks_offered_scenarios_before_asking() {
    let (mut e, sent) = started("");
    let mut g = group(&e, 1, Kiv { random_key: false, random_iv: false });
    g.scenario = Scenario::Decrypt;
    assert!(matches!(e.bench(&g, &cfg(1, 0), || {}), Err(Failure::Refused { code, .. }) if code == "unsupported"));
    assert_eq!(sent.lines().len(), 2);
}

#[test]
fn silence_times_out() {
    /// A stream that never delivers a byte.
    struct Never;
    impl Read for Never {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            std::thread::sleep(Duration::from_secs(3600));
            Ok(0)
        }
    }
    let mut e = Engine::over("mute", Box::new(std::io::sink()), Never);
    e.timeout = Duration::from_millis(50);
    let t0 = Instant::now();
    // hello has its own, longer deadline; use a plain request
    let r = e.request("list", |_| Ok(()));
    assert!(matches!(&r, Err(Failure::Broken(m)) if m.contains("no answer within")), "{r:?}");
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[test]
fn unknown_engine_names_are_errors() {
    assert!(command_for("nosuch").unwrap_err().contains("unknown engine 'nosuch'"));
    assert_eq!(command_for("./x.sh --fast").unwrap(), vec!["sh", "-c", "./x.sh --fast"]);
}

#[test]
fn offered_selection_and_clashes() {
    let (e, _) = started("");
    let mut o = Offered::default();
    o.add(e).unwrap();
    assert_eq!(o.entries().len(), 2);
    let sel = crate::plan::Selection { ciphers: vec!["AES-128-GCM/mock".into()], ..Default::default() };
    let groups = crate::plan::expand_with(&sel, &o).unwrap();
    // only the scenarios the engine lists: keysetup (4 kiv) + encrypt/decrypt (4 kiv × 4
    // sizes); no reading, although it applies to AEADs
    assert_eq!(groups.len(), 4 + 2 * 16);
    let ecb = crate::plan::Selection { ciphers: vec!["AES-128-ECB/mock".into()], ..Default::default() };
    assert!(crate::plan::expand_with(&ecb, &o).unwrap().iter().all(|g| g.scenario == Scenario::Encrypt));
    assert!(o.engine_for(&groups[0].entry).is_some());
    assert!(o.notes(&groups)[0].contains("inside an external engine"));
    let (e2, _) = started("");
    assert!(o.add(e2).unwrap_err().contains("already provided"));
}
