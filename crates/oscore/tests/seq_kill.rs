//! No sender sequence number is handed out twice across a SIGKILL (RFC 8613 Appendix B.1.1):
//! a child process (this test binary, running the ignored test below) takes numbers from a
//! persisted state and prints each one it has; the parent kills it with SIGKILL mid-stream,
//! reopens the state, and checks the next number is above every number the child printed.
// The helpers outside #[test] functions panic on bad input too: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lwcbench_oscore::seq::SequenceStore;
use lwcbench_oscore::{Algorithm, SecurityContext, SecurityParams, SequenceSource};

const CHILD_ENV: &str = "LWCBENCH_OSCORE_SEQ_CHILD";
const BLOCK: u64 = 16;

fn ctx() -> SecurityContext {
    SecurityContext::derive(&SecurityParams {
        alg: Algorithm::AesCcm16_64_128,
        master_secret: &[0x42; 16],
        master_salt: b"",
        id_context: None,
        sender_id: b"\x07",
        recipient_id: b"",
    })
    .unwrap()
}

/// The child: take numbers and print them, until killed (or 20 s, so it always ends).
#[test]
#[ignore = "run by sigkill_never_repeats_a_sequence_number as its child process"]
fn child_takes_numbers_until_killed() {
    let Ok(path) = std::env::var(CHILD_ENV) else { return };
    let mut s = SequenceStore::open(std::path::Path::new(&path), &ctx(), BLOCK).unwrap();
    let out = std::io::stdout();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        let n = s.next_seq().unwrap();
        let mut o = out.lock();
        writeln!(o, "seq {n}").unwrap();
        o.flush().unwrap();
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[test]
fn sigkill_never_repeats_a_sequence_number() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("sender.seq");
    let mut printed: Vec<u64> = Vec::new();
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["child_takes_numbers_until_killed", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut seen = 0;
        // Kill after a number of lines that is not a block boundary, in a different place each round.
        let kill_after = 37 + 11 * round;
        while seen < kill_after {
            let line = lines.next().expect("the child ended before it was killed").unwrap();
            if let Some((_, n)) = line.rsplit_once("seq ") {
                printed.push(n.parse().unwrap());
                seen += 1;
            }
        }
        // While the child holds the state, a second sender is refused.
        let e = SequenceStore::open(&path, &ctx(), BLOCK).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("in use by another sender"), "round {round}: {e}");
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Lines the child wrote before dying are numbers it had taken, too. (libtest writes
        // its "test NAME ... " before the first number, on the same line: hence rsplit.)
        for line in lines.map_while(Result::ok) {
            if let Some((_, n)) = line.rsplit_once("seq ") {
                printed.push(n.parse().unwrap());
            }
        }
    }
    assert_eq!(printed[0], 0, "a fresh state starts at 0");
    let mut sorted = printed.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), printed.len(), "a number was handed out twice: {printed:?}");
    let mut s = SequenceStore::open(&path, &ctx(), BLOCK).unwrap();
    let next = s.next_seq().unwrap();
    let max = *printed.iter().max().unwrap();
    assert!(next > max, "after the kills the next number is {next}, but {max} was handed out");
    assert!(next - max <= BLOCK, "a kill skips at most one block: next {next}, highest handed out {max}");
}
