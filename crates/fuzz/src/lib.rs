//! Fuzzing of everything lwcbench reads from outside on stable Rust: a seeded mutation loop
//! over seed corpora in `tests/fuzz-corpus/<target>/` (repository root), with each input run
//! under `catch_unwind`. A target fails when its code panics or breaks its contract (an error
//! must be one line of bounded length; an accepted input must be internally consistent).
//!
//! Modes (see `scripts/ci/fuzz.sh`):
//! * CI (default): a fixed seed and [`CI_ITERATIONS`] mutated inputs per target, so the run is
//!   reproducible and takes a few seconds.
//! * On demand: `LWCBENCH_FUZZ_SECS=N` runs each target for N seconds with a fresh seed
//!   (printed; `LWCBENCH_FUZZ_SEED` replays one).
//!
//! A failing input is written to `target/fuzz-failures/<target>/<hash>`; copy it into the
//! target's corpus directory once fixed, so it is replayed on every run.
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub mod targets;

/// Mutated inputs per target in CI mode.
pub const CI_ITERATIONS: u64 = 3000;
/// Largest input the mutator builds (bytes).
pub const MAX_INPUT: usize = 256 * 1024;
/// Longest error message a target may return (bytes); every error is also one line.
pub const MAX_ERROR: usize = 2000;

/// xorshift64* — enough randomness for mutation, and reproducible from a seed.
pub struct Rng(u64);

impl Rng {
    /// The sequence of this seed (any seed, zero included).
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next output.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform-ish in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    /// True with probability about 1 / `one_in`.
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// Values that broke parsers before, or tend to: extremes, non-numbers, multi-byte UTF-8,
/// separators and quotes.
const TOKENS: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1e-300",
    "1e308",
    "1e19",
    "5e-324",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "18446744073709551615",
    "18446744073709551616",
    "4294967296",
    "2147483648",
    "99999999999",
    "\u{e9}",
    "\u{1F600}",
    "\u{FEFF}",
    "\u{0}",
    "\r",
    "\n",
    "\r\n",
    " ",
    ",",
    "\"",
    "'",
    "=",
    "%",
    "%ff",
    "%2",
    "%00",
    ":",
    "*",
    "<script>",
    "FRAME\n",
    "LWCB ",
    "W32768 ",
    "H32768 ",
    "C444 ",
];

/// One mutated copy of `input` (sometimes spliced with `other`).
pub fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(6) {
        let len = v.len();
        let at = rng.below(len + 1);
        match rng.below(10) {
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                v[i] = [0u8, 0xff, 0x7f, 0x80, b'0', b'9', b'-', b'.', b'e', 0xc3][rng.below(10)];
            }
            2 => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                v.splice(at..at, t.iter().copied());
            }
            3 if len > 0 => {
                // replace a run of digits/letters (a number, a name) with a token
                let start = rng.below(len);
                let end = (start..len).find(|&i| !v[i].is_ascii_alphanumeric() && v[i] != b'.').unwrap_or(len);
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                v.splice(start..end, t.iter().copied());
            }
            4 if len > 0 => {
                let end = (at + 1 + rng.below(64)).min(len);
                v.drain(at.min(end)..end);
            }
            5 if len > 0 => {
                // duplicate a range (repeated lines, headers, frames)
                let s = rng.below(len);
                let e = (s + 1 + rng.below(256)).min(len);
                let chunk = v[s..e].to_vec();
                v.splice(at..at, chunk);
            }
            6 if !other.is_empty() => {
                let s = rng.below(other.len());
                let e = (s + 1 + rng.below(512)).min(other.len());
                v.splice(at..at, other[s..e].iter().copied());
            }
            7 => {
                // a long run of one byte (huge cells, lines without an end)
                let b = [b'x', b'9', b' ', b'"', 0xe9][rng.below(5)];
                let cap = if rng.chance(8) { 100_000 } else { 300 };
                let n = 1 + rng.below(cap);
                v.splice(at..at, std::iter::repeat_n(b, n));
            }
            8 if len > 0 => v.truncate(at),
            _ => {
                let b = rng.next_u64() as u8;
                v.insert(at, b);
            }
        }
        v.truncate(MAX_INPUT);
    }
    v
}

/// A repair applied to a mutated input.
pub type Fixup = fn(&mut Rng, Vec<u8>) -> Vec<u8>;

/// A fuzz target: a name (its corpus directory) and a check of one input.
pub struct Target {
    /// The target's name, also its corpus directory under tests/fuzz-corpus.
    pub name: &'static str,
    /// Ok, or the contract the input broke. A panic is caught by the driver.
    pub check: fn(&[u8], &mut Scratch) -> Result<(), String>,
    /// Optional repair after mutation (e.g. recompute checksums so the input gets past them).
    pub fixup: Option<Fixup>,
}

/// Per-target state reused across inputs (a temporary directory).
pub struct Scratch {
    /// Removed when the run ends.
    pub dir: tempfile::TempDir,
}

/// The repository this crate was built in.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A target's seed directory, `tests/fuzz-corpus/<target>`.
pub fn corpus_dir(target: &str) -> PathBuf {
    repo_root().join("tests/fuzz-corpus").join(target)
}

/// The seed files of a target, sorted by name.
pub fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(corpus_dir(target))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_file())
                // The corpus is the repository's own test data: an unreadable seed fails the
                // fuzz test that asked for it, naming the file.
                .map(|e| {
                    let bytes = std::fs::read(e.path()).unwrap_or_else(|err| panic!("{}: {err}", e.path().display()));
                    (e.file_name().to_string_lossy().into_owned(), bytes)
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The contract on an error message.
pub fn check_error(e: &str) -> Result<(), String> {
    if e.len() > MAX_ERROR {
        return Err(format!(
            "error of {} bytes (limit {MAX_ERROR}): {}…",
            e.len(),
            e.chars().take(200).collect::<String>()
        ));
    }
    if e.contains('\n') || e.contains('\r') {
        return Err(format!("error spans several lines: {e:?}"));
    }
    Ok(())
}

/// What a fuzzing run found.
pub struct Outcome {
    /// Inputs checked, seeds included.
    pub inputs: u64,
    /// The seed of the mutations (`LWCBENCH_FUZZ_SEED` reproduces the run).
    pub seed: u64,
    /// (file written, what went wrong)
    pub failures: Vec<(PathBuf, String)>,
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf29ce484222325u64, |h, &x| (h ^ x as u64).wrapping_mul(0x100000001b3))
}

fn run_one(t: &Target, input: &[u8], scratch: &mut Scratch) -> Result<(), String> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| (t.check)(input, scratch))) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("panic: {msg}"))
        }
    }
}

fn record(t: &Target, input: &[u8], why: String, out: &mut Outcome) {
    let dir = repo_root().join("target/fuzz-failures").join(t.name);
    let _ = std::fs::create_dir_all(&dir);
    let p = dir.join(format!("{:016x}", fnv(input)));
    let _ = std::fs::write(&p, input);
    out.failures.push((p, why));
}

/// Replay the corpus, then mutate it: [`CI_ITERATIONS`] inputs from seed 1, or for
/// `LWCBENCH_FUZZ_SECS` seconds from `LWCBENCH_FUZZ_SEED` (default: from the clock).
pub fn fuzz(t: &Target) -> Outcome {
    let secs: Option<u64> = std::env::var("LWCBENCH_FUZZ_SECS").ok().and_then(|s| s.parse().ok());
    let seed = std::env::var("LWCBENCH_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        if secs.is_some() {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
        } else {
            1
        }
    });
    let mut scratch = Scratch { dir: tempfile::tempdir().expect("temp dir") };
    let seeds = corpus(t.name);
    assert!(!seeds.is_empty(), "no corpus in {}", corpus_dir(t.name).display());
    let mut out = Outcome { inputs: 0, seed, failures: Vec::new() };
    for (_, s) in &seeds {
        out.inputs += 1;
        if let Err(e) = run_one(t, s, &mut scratch) {
            record(t, s, e, &mut out);
        }
    }
    let mut rng = Rng::new(seed);
    let t0 = Instant::now();
    let mut i = 0u64;
    loop {
        match secs {
            Some(s) if t0.elapsed() >= Duration::from_secs(s) => break,
            None if i >= CI_ITERATIONS => break,
            _ => {}
        }
        i += 1;
        let a = &seeds[rng.below(seeds.len())].1;
        let b = &seeds[rng.below(seeds.len())].1;
        let mut input = mutate(&mut rng, a, b);
        if let Some(f) = t.fixup {
            if !rng.chance(5) {
                input = f(&mut rng, input);
            }
        }
        out.inputs += 1;
        if let Err(e) = run_one(t, &input, &mut scratch) {
            record(t, &input, e, &mut out);
            if out.failures.len() >= 10 {
                break;
            }
        }
    }
    out
}

/// Run a target and panic with every failure (for the tests).
pub fn fuzz_and_assert(t: &Target) {
    let o = fuzz(t);
    println!("fuzz {}: {} inputs, seed {}, {} failures", t.name, o.inputs, o.seed, o.failures.len());
    if !o.failures.is_empty() {
        let list: Vec<String> = o.failures.iter().map(|(p, w)| format!("  {}: {w}", p.display())).collect();
        panic!(
            "fuzz target {} failed on {} input(s) (seed {}; replay with LWCBENCH_FUZZ_SEED):\n{}",
            t.name,
            o.failures.len(),
            o.seed,
            list.join("\n")
        );
    }
}
