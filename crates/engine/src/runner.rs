//! The measurement loop — the only one in the code base. Every scenario is an [`Op`]: an
//! untimed `prepare` (fresh key/IV, buffers restored) and a timed `run`. A sample is one
//! timed batch of `batch` consecutive `run`s; its value is elapsed time / batch.
use std::hint::black_box;

use lwcbench_catalog::Make;
use lwcbench_core::{Aead, BlockCipher, CipherError, CipherMode, StreamCipher};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::clock::Stamp;
use crate::plan::{Group, Scenario};

/// Measurement settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// Measured samples per group.
    pub reps: usize,
    /// Samples measured first and excluded from statistics (kept in warmup.csv).
    pub warmup: usize,
    /// Seed of all random keys, IVs and payloads.
    pub seed: u64,
    /// A sample is batched until it lasts at least this long (ns).
    pub min_sample_ns: f64,
    /// Static key/IV used by the `s` variants; None = the documented default pattern.
    pub static_key: Option<Vec<u8>>,
    pub static_iv: Option<Vec<u8>>,
    /// Interleaved rounds the run's samples are spread over ([`measure_rounds`]).
    pub rounds: usize,
}

/// Default number of interleaved rounds (and of parts of the between-round spread).
pub const ROUNDS: usize = 5;

impl Default for Config {
    fn default() -> Self {
        Config {
            reps: 100,
            warmup: 10,
            seed: 1,
            min_sample_ns: 20_000.0,
            static_key: None,
            static_iv: None,
            rounds: ROUNDS,
        }
    }
}

/// One sample: time (and TSC ticks) per operation.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub ns: f64,
    pub cycles: Option<f64>,
    /// Operations timed in this sample: the group's batch, or more when the batch finished
    /// before the minimum sample time and was extended (the floor, see [`time_batch_floor`]).
    pub ops: u64,
}

/// All samples of one group.
#[derive(Clone)]
pub struct GroupResult {
    pub group: Group,
    pub batch: u64,
    pub samples: Vec<Sample>,
    pub warmup: Vec<Sample>,
}

/// Default static key/IV: bytes 0x00, 0x01, 0x02, … (documented in docs/measurement.md).
pub fn default_static(len: usize) -> Vec<u8> {
    (0..len).map(|i| i as u8).collect()
}

/// One timed operation and its untimed preparation.
trait Op {
    /// Untimed: install key/IV, restore buffers so every `run` does the same work.
    fn prepare(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError>;
    /// Timed.
    fn run(&mut self) -> Result<(), CipherError>;
    /// Untimed check before measuring (the frame scenario's round trip); Err = message.
    fn verify(&mut self, _key: &[u8]) -> Result<(), String> {
        Ok(())
    }
}

struct StreamOp {
    c: Box<dyn StreamCipher + Send>,
    scenario: Scenario,
    nbits: usize,
    buf: Vec<u8>,
    payload: Vec<u8>,
    key: Vec<u8>,
    iv: Vec<u8>,
}

impl Op for StreamOp {
    fn prepare(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        self.key.clear();
        self.key.extend_from_slice(key);
        self.iv.clear();
        self.iv.extend_from_slice(iv);
        self.buf.copy_from_slice(&self.payload);
        self.c.init(key, iv)
    }
    #[inline(never)]
    fn run(&mut self) -> Result<(), CipherError> {
        let r = match self.scenario {
            Scenario::Init => self.c.init(&self.key, &self.iv),
            Scenario::Keystream => self.c.keystream_bits(&mut self.buf, self.nbits),
            Scenario::Full => self.c.apply_bits(&mut self.buf, self.nbits),
            _ => unreachable!("stream scenarios only"),
        };
        black_box(&mut self.buf);
        r
    }
}

struct BlockOp {
    c: Box<dyn BlockCipher + Send>,
    scenario: Scenario,
    block: usize,
    buf: Vec<u8>,
    key: Vec<u8>,
}

impl Op for BlockOp {
    fn prepare(&mut self, key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
        self.key.clear();
        self.key.extend_from_slice(key);
        self.c.set_key(key)
    }
    #[inline(never)]
    fn run(&mut self) -> Result<(), CipherError> {
        match self.scenario {
            Scenario::Keysetup => self.c.set_key(&self.key)?,
            Scenario::Encrypt => self.buf.chunks_exact_mut(self.block).for_each(|b| self.c.encrypt_block(b)),
            Scenario::Decrypt => self.buf.chunks_exact_mut(self.block).for_each(|b| self.c.decrypt_block(b)),
            _ => unreachable!("block scenarios only"),
        }
        black_box(&mut self.buf);
        Ok(())
    }
}

struct AeadOp {
    c: Box<dyn Aead + Send>,
    scenario: Scenario,
    payload: Vec<u8>,
    buf: Vec<u8>,
    ct: Vec<u8>,
    tag: Vec<u8>,
    key: Vec<u8>,
    nonce: Vec<u8>,
}

impl Op for AeadOp {
    fn prepare(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        self.key.clear();
        self.key.extend_from_slice(key);
        self.nonce.clear();
        self.nonce.extend_from_slice(iv);
        self.c.set_key(key)?;
        if self.scenario == Scenario::Keysetup {
            return Ok(()); // no message involved (and e.g. OpenSSL 3.0's AES-SIV refuses an empty one)
        }
        // Decrypt needs a valid ciphertext + tag for this key and nonce.
        self.ct.copy_from_slice(&self.payload);
        self.c.encrypt(&self.nonce, &[], &mut self.ct, &mut self.tag)?;
        self.buf.copy_from_slice(&self.payload);
        Ok(())
    }
    #[inline(never)]
    fn run(&mut self) -> Result<(), CipherError> {
        let r = match self.scenario {
            Scenario::Keysetup => self.c.set_key(&self.key),
            Scenario::Encrypt => self.c.encrypt(&self.nonce, &[], &mut self.buf, &mut self.tag),
            Scenario::Decrypt => {
                // In place decryption destroys the ciphertext: restore it (a memcpy, timed).
                self.buf.copy_from_slice(&self.ct);
                self.c.decrypt(&self.nonce, &[], &mut self.buf, &self.tag)
            }
            _ => unreachable!("AEAD scenarios only"),
        };
        black_box(&mut self.buf);
        r
    }
}

/// A confidentiality-only mode (AES-ECB/CBC/CFB/OFB/CTR): set_key = key schedule (and the
/// library's per-key context); encrypt = IV setup + padding + encryption of the message;
/// decrypt = restore the ciphertext (a memcpy, timed, as for AEADs) + decryption + unpadding.
struct ModeOp {
    c: Box<dyn CipherMode + Send>,
    scenario: Scenario,
    payload: Vec<u8>,
    buf: Vec<u8>,
    ct: Vec<u8>,
    key: Vec<u8>,
    iv: Vec<u8>,
}

impl Op for ModeOp {
    fn prepare(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        self.key.clear();
        self.key.extend_from_slice(key);
        self.iv.clear();
        self.iv.extend_from_slice(iv);
        self.c.set_key(key)?;
        if self.scenario == Scenario::Keysetup {
            return Ok(());
        }
        let n = self.payload.len();
        self.ct.clear();
        self.ct.extend_from_slice(&self.payload);
        self.ct.resize(self.c.ciphertext_len(n), 0);
        let m = self.c.encrypt(&self.iv, &mut self.ct, n)?;
        self.ct.truncate(m);
        self.buf.clear();
        self.buf.extend_from_slice(&self.payload);
        self.buf.resize(self.ct.len().max(n), 0);
        Ok(())
    }
    #[inline(never)]
    fn run(&mut self) -> Result<(), CipherError> {
        let r = match self.scenario {
            Scenario::Keysetup => self.c.set_key(&self.key),
            // encrypt reads buf[..n] and overwrites it: the next run encrypts the previous
            // ciphertext prefix, the same amount of work
            Scenario::Encrypt => self.c.encrypt(&self.iv, &mut self.buf, self.payload.len()).map(|_| ()),
            Scenario::Decrypt => {
                let n = self.ct.len();
                self.buf[..n].copy_from_slice(&self.ct);
                self.c.decrypt(&self.iv, &mut self.buf[..n]).map(|_| ())
            }
            _ => unreachable!("mode scenarios: keysetup, encrypt, decrypt"),
        };
        black_box(&mut self.buf);
        r
    }
}

/// A stream cipher or an AEAD holding one key and encrypting each message under the next
/// value of a counter IV/nonce (big-endian, only ever increasing within a group, so no
/// key/IV pair is used twice — not across samples, not across batches). The reading and
/// frame operations both encrypt this way.
struct CounterKeyed {
    stream: Option<Box<dyn StreamCipher + Send>>,
    aead: Option<Box<dyn Aead + Send>>,
    key: Vec<u8>,
    iv: Vec<u8>,
    counter: u64,
    tag: Vec<u8>,
}

impl CounterKeyed {
    fn new(g: &Group, scenario: &str) -> Self {
        let (stream, aead) = match g.entry.make {
            Make::Stream(mk) => (Some(mk()), None),
            Make::Aead(mk) => (None, Some(mk())),
            Make::Block(_) | Make::Mode(_) => unreachable!("{scenario} applies to stream ciphers and AEADs"),
        };
        let info = g.entry.info;
        CounterKeyed {
            stream,
            aead,
            key: Vec::new(),
            iv: vec![0u8; info.iv_bytes()],
            counter: 0,
            tag: vec![0u8; info.tag_bytes()],
        }
    }
    /// Untimed: keep the key (a stream cipher is initialised per message) or key the AEAD.
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        self.key.clear();
        self.key.extend_from_slice(key);
        match &mut self.aead {
            Some(a) => a.set_key(key),
            None => Ok(()),
        }
    }
    /// Encrypt the first `nbits` of `buf` in place under the next counter IV (an AEAD's tag
    /// goes to `self.tag`).
    #[inline(always)]
    fn encrypt_next(&mut self, buf: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        next_counter_iv(&mut self.counter, &mut self.iv);
        match (&mut self.stream, &mut self.aead) {
            (Some(s), _) => s.init(&self.key, &self.iv).and_then(|_| s.apply_bits(buf, nbits)),
            (_, Some(a)) => a.encrypt(&self.iv, &[], buf, &mut self.tag),
            _ => unreachable!("one of the two is set in new()"),
        }
    }
}

/// Per-reading encryption: what a sensor node does for each 32-bit reading, under a fresh
/// counter IV ([`CounterKeyed`]).
struct ReadingOp {
    c: CounterKeyed,
    pool: Vec<u8>,
    pos: usize,
    buf: [u8; 4],
}

impl ReadingOp {
    fn new(g: &Group, pool: Vec<u8>) -> Self {
        ReadingOp { c: CounterKeyed::new(g, "reading"), pool, pos: 0, buf: [0; 4] }
    }
}

impl Op for ReadingOp {
    fn prepare(&mut self, key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
        self.c.set_key(key)
    }
    #[inline(never)]
    fn run(&mut self) -> Result<(), CipherError> {
        self.buf.copy_from_slice(&self.pool[self.pos..self.pos + 4]);
        self.pos = (self.pos + 4) % self.pool.len();
        let r = self.c.encrypt_next(&mut self.buf, 32);
        black_box(&mut self.buf);
        r
    }
}

/// Per-frame encryption: what a camera node does for each frame of a live video (the
/// stream-cipher study's workload), under a fresh counter IV ([`CounterKeyed`]; the round-trip
/// check, calibration, warm-up and samples all draw from the one counter). Frames are taken
/// in turn from the clip, cycling; each one is copied into the output buffer and encrypted
/// there.
struct FrameOp {
    make: Make,
    c: CounterKeyed,
    id: String,
    label: String,
    frames: std::sync::Arc<Vec<u8>>,
    frame_bytes: usize,
    next: usize,
    /// Index of the frame the last `run` encrypted.
    last: usize,
    buf: Vec<u8>,
}

impl FrameOp {
    fn new(g: &Group) -> Self {
        let frame_bytes = g.size_bits / 8;
        let frames = g
            .payload
            .bytes
            .clone()
            .filter(|b| frame_bytes > 0 && b.len() >= frame_bytes)
            .expect("frame groups carry a video payload");
        FrameOp {
            make: g.entry.make,
            c: CounterKeyed::new(g, "frame"),
            id: g.entry.id(),
            label: g.payload.label.clone(),
            frames,
            frame_bytes,
            next: 0,
            last: 0,
            buf: vec![0u8; frame_bytes],
        }
    }
    fn n_frames(&self) -> usize {
        self.frames.len() / self.frame_bytes
    }
    fn frame(&self, i: usize) -> &[u8] {
        &self.frames[i * self.frame_bytes..(i + 1) * self.frame_bytes]
    }
    /// Decrypt `ct` (encrypted under `iv`, with `tag` for an AEAD) with a fresh instance.
    fn decrypt(&self, key: &[u8], iv: &[u8], ct: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        match self.make {
            Make::Stream(mk) => {
                let mut d = mk();
                d.init(key, iv)?;
                d.apply_bits(ct, ct.len() * 8)
            }
            Make::Aead(mk) => {
                let mut d = mk();
                d.set_key(key)?;
                d.decrypt(iv, &[], ct, tag)
            }
            Make::Block(_) | Make::Mode(_) => unreachable!("frame applies to stream ciphers and AEADs"),
        }
    }
    /// Round trip of one frame just encrypted by `run`: the ciphertext must differ from the
    /// frame, and decrypting it must restore the frame bit for bit.
    fn check_last(&self, key: &[u8]) -> Result<(), String> {
        let i = self.last;
        let plain = self.frame(i);
        let at = |what: &str| format!("round trip failed: {} frame {i} of {}: {what}", self.id, self.label);
        if self.buf == plain {
            return Err(at("the ciphertext equals the frame (nothing was encrypted)"));
        }
        let mut dec = self.buf.clone();
        self.decrypt(key, &self.c.iv, &mut dec, &self.c.tag).map_err(|e| at(&format!("decryption failed: {e}")))?;
        match crate::video::first_difference(plain, &dec) {
            Some(b) => {
                Err(at(&format!("the decrypted frame differs from the original at byte {b} of {}", self.frame_bytes)))
            }
            None => Ok(()),
        }
    }
}

impl Op for FrameOp {
    fn prepare(&mut self, key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
        self.c.set_key(key)
    }
    #[inline(never)]
    fn run(&mut self) -> Result<(), CipherError> {
        let (i, fb) = (self.next, self.frame_bytes);
        self.last = i;
        self.next = if (i + 1) * fb >= self.frames.len() { 0 } else { i + 1 };
        self.buf.copy_from_slice(&self.frames[i * fb..(i + 1) * fb]);
        let r = self.c.encrypt_next(&mut self.buf, fb * 8);
        black_box(&mut self.buf);
        r
    }
    /// Every frame of the clip once, through the same `run` that is timed (so the counter
    /// advances past these IVs), each checked by [`FrameOp::check_last`].
    fn verify(&mut self, key: &[u8]) -> Result<(), String> {
        let start = self.next;
        self.next = 0;
        for _ in 0..self.n_frames() {
            self.run().map_err(|e| {
                format!("round trip failed: {} frame {} of {}: encryption failed: {e}", self.id, self.last, self.label)
            })?;
            self.check_last(key)?;
        }
        self.next = start;
        Ok(())
    }
}

/// One protocol message sealed and opened again, as an ICS device pair would per message:
/// the nonce is the big-endian value of a per-group counter (never reused within a group),
/// and the open checks the tag, so a failure aborts the run.
struct RoundtripOp {
    c: Box<dyn Aead + Send>,
    payload: Vec<u8>,
    buf: Vec<u8>,
    tag: Vec<u8>,
    nonce: Vec<u8>,
    counter: u64,
}

impl Op for RoundtripOp {
    fn prepare(&mut self, key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
        self.c.set_key(key)
    }
    #[inline(never)]
    fn run(&mut self) -> Result<(), CipherError> {
        next_counter_iv(&mut self.counter, &mut self.nonce);
        self.buf.copy_from_slice(&self.payload);
        self.c.encrypt(&self.nonce, &[], &mut self.buf, &mut self.tag)?;
        black_box(&mut self.buf);
        let r = self.c.decrypt(&self.nonce, &[], &mut self.buf, &self.tag);
        black_box(&mut self.buf);
        r
    }
}

/// Advance a per-group counter and write it big-endian into the IV's last (up to) 8 bytes.
/// The counter only increases within a group, so no key/IV pair repeats (reading, frame and
/// roundtrip ops).
fn next_counter_iv(counter: &mut u64, iv: &mut [u8]) {
    *counter += 1;
    let c = counter.to_be_bytes();
    let n = iv.len().min(8);
    let len = iv.len();
    iv[len - n..].copy_from_slice(&c[8 - n..]);
}

/// 64-bit FNV-1a, to derive a per-group RNG stream from the run seed and the group label, so
/// a group's keys do not depend on which other groups were selected.
pub(crate) fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3))
}

fn payload_bytes(g: &Group, nbytes: usize, rng: &mut ChaCha20Rng) -> Vec<u8> {
    match &g.payload.bytes {
        Some(p) if !p.is_empty() => p.iter().copied().cycle().take(nbytes).collect(),
        _ => {
            let mut v = vec![0u8; nbytes];
            rng.fill_bytes(&mut v);
            v
        }
    }
}

/// Marker in a twin group's implementation name (`<impl>~twin`, `<impl>~slow<P>`): the
/// A/A experiment's second measurement of the same implementation (see
/// [`crate::session::Request::twin`]).
pub const TWIN_MARK: char = '~';

/// A planted slowdown for the A/A experiment: every `every`-th operation runs the real
/// operation once more, so a batch does 1 + 1/every times the work (10 % for every = 10).
struct Planted {
    inner: Box<dyn Op>,
    every: u64,
    n: u64,
}

impl Op for Planted {
    fn prepare(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        self.inner.prepare(key, iv)
    }
    #[inline(never)]
    fn run(&mut self) -> Result<(), CipherError> {
        self.n += 1;
        if self.n.is_multiple_of(self.every) {
            self.inner.run()?;
        }
        self.inner.run()
    }
    fn verify(&mut self, key: &[u8]) -> Result<(), String> {
        self.inner.verify(key)
    }
}

/// The planted slowdown in % of a twin group's implementation name (`…~slow10` → 10).
pub fn planted_slowdown(implementation: &str) -> Option<u64> {
    let (_, tail) = implementation.rsplit_once(TWIN_MARK)?;
    tail.strip_prefix("slow")?.parse().ok().filter(|&p| p > 0 && p <= 100)
}

fn build_op(g: &Group, rng: &mut ChaCha20Rng) -> Box<dyn Op> {
    let op = build_plain_op(g, rng);
    match planted_slowdown(g.entry.info.implementation) {
        Some(p) => Box::new(Planted { inner: op, every: (100 / p).max(1), n: 0 }),
        None => op,
    }
}

fn build_plain_op(g: &Group, rng: &mut ChaCha20Rng) -> Box<dyn Op> {
    let nbytes = g.size_bits.div_ceil(8);
    if g.scenario == Scenario::Frame {
        return Box::new(FrameOp::new(g));
    }
    if g.scenario == Scenario::Reading {
        // A pool of readings to send one after another (the dataset's, or random words).
        let pool = payload_bytes(g, 4 * 1024, rng);
        return Box::new(ReadingOp::new(g, pool));
    }
    if let (Scenario::Roundtrip, Make::Aead(mk)) = (g.scenario, g.entry.make) {
        let payload = payload_bytes(g, nbytes, rng);
        return Box::new(RoundtripOp {
            c: mk(),
            buf: payload.clone(),
            payload,
            tag: vec![0u8; g.entry.info.tag_bytes()],
            nonce: vec![0u8; g.entry.info.iv_bytes()],
            counter: 0,
        });
    }
    match g.entry.make {
        Make::Stream(mk) => {
            let payload = payload_bytes(g, nbytes, rng);
            Box::new(StreamOp {
                c: mk(),
                scenario: g.scenario,
                nbits: g.size_bits,
                buf: payload.clone(),
                payload,
                key: Vec::new(),
                iv: Vec::new(),
            })
        }
        Make::Block(mk) => {
            let block = g.entry.info.block_bytes().max(1);
            let n = nbytes.div_ceil(block) * block;
            Box::new(BlockOp { c: mk(), scenario: g.scenario, block, buf: payload_bytes(g, n, rng), key: Vec::new() })
        }
        Make::Mode(mk) => {
            let payload = payload_bytes(g, nbytes, rng);
            Box::new(ModeOp {
                c: mk(),
                scenario: g.scenario,
                buf: payload.clone(),
                ct: Vec::new(),
                payload,
                key: Vec::new(),
                iv: Vec::new(),
            })
        }
        Make::Aead(mk) => {
            let payload = payload_bytes(g, nbytes, rng);
            Box::new(AeadOp {
                c: mk(),
                scenario: g.scenario,
                buf: payload.clone(),
                ct: payload.clone(),
                payload,
                tag: vec![0u8; g.entry.info.tag_bytes()],
                key: Vec::new(),
                nonce: Vec::new(),
            })
        }
    }
}

/// Error while measuring a group: the cipher rejected its input.
#[derive(Debug)]
pub struct RunError {
    pub group: String,
    pub error: CipherError,
    /// A failed check that is not a cipher error (the frame round trip); shown instead of `error`.
    pub detail: Option<String>,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.detail {
            Some(d) => write!(f, "{}: {d}", self.group),
            None => write!(f, "{}: {}", self.group, self.error),
        }
    }
}
impl std::error::Error for RunError {}

fn time_batch(op: &mut dyn Op, batch: u64) -> Result<Sample, CipherError> {
    time_batch_floor(op, batch, 0.0)
}

/// Time `batch` operations; if they took less than `min_ns` in total (the machine got faster
/// than during calibration, or calibration was misled), keep running chunks of operations
/// inside the same timed region until it lasts ≥ `min_ns`. So every sample is at least the
/// minimum sample time and the clock overhead stays ≤ overhead / min_ns per sample.
fn time_batch_floor(op: &mut dyn Op, batch: u64, min_ns: f64) -> Result<Sample, CipherError> {
    let s = Stamp::now();
    for _ in 0..batch {
        op.run()?;
    }
    let mut ops = batch;
    let (mut ns, mut cy) = s.elapsed();
    while ns < min_ns && ops < MAX_BATCH {
        // the per-op rate seen so far says how many more are needed (+12 % headroom)
        let more = (((min_ns - ns) / (ns / ops as f64).max(0.1)) * 1.12).ceil().max(1.0) as u64;
        for _ in 0..more.min(MAX_BATCH - ops) {
            op.run()?;
        }
        ops += more.min(MAX_BATCH - ops);
        (ns, cy) = s.elapsed();
    }
    Ok(Sample { ns: ns / ops as f64, cycles: crate::clock::HAS_CYCLE_COUNTER.then(|| cy as f64 / ops as f64), ops })
}

/// Largest batch (operations per sample).
const MAX_BATCH: u64 = 1 << 26;
/// Untimed warm-up before calibration: at least this many operations …
const WARM_OPS: u64 = 8;
/// … and at least this many minimum sample times of wall time.
const WARM_SAMPLE_TIMES: f64 = 2.0;
/// Timed calibration trials; the batch comes from their median time per operation.
const CAL_TRIALS: usize = 5;

fn median_ns(v: &[Sample]) -> f64 {
    let mut x: Vec<f64> = v.iter().map(|s| s.ns).collect();
    x.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
    lwcbench_stats::quantile_sorted(&x, 0.5)
}

/// Batch size for `per_op_ns`: enough operations for one sample to last `min_ns`.
fn batch_for(min_ns: f64, per_op_ns: f64) -> u64 {
    ((min_ns / per_op_ns.max(0.1)).ceil() as u64).clamp(1, MAX_BATCH)
}

/// Calibration (docs/measurement.md): untimed warm-up operations first (one-time costs such
/// as CPU feature detection, page faults and cold caches are paid here, not in a timed
/// trial); then a doubling search for a batch that lasts ≥ ¼ of the minimum sample time;
/// then `CAL_TRIALS` timed trials at that batch whose **median** time per operation sets the
/// batch, so one preempted or slow trial cannot shrink it.
fn calibrate(op: &mut dyn Op, key: &[u8], iv: &[u8], min_ns: f64) -> Result<u64, CipherError> {
    let t = std::time::Instant::now();
    let mut n = 0u64;
    while n < WARM_OPS || (t.elapsed().as_nanos() as f64) < WARM_SAMPLE_TIMES * min_ns {
        op.run()?;
        n += 1;
        if n >= MAX_BATCH {
            break;
        }
    }
    op.prepare(key, iv)?;
    let mut batch = 1u64;
    loop {
        let s = time_batch(op, batch)?;
        if s.ns * batch as f64 >= min_ns / 4.0 || batch >= MAX_BATCH {
            break;
        }
        batch *= 2;
        op.prepare(key, iv)?;
    }
    let mut trials = Vec::with_capacity(CAL_TRIALS);
    for _ in 0..CAL_TRIALS {
        op.prepare(key, iv)?;
        trials.push(time_batch(op, batch)?);
    }
    op.prepare(key, iv)?;
    Ok(batch_for(min_ns, median_ns(&trials)))
}

/// Measure one group: calibrate the batch, then `warmup` + `reps` samples, each with its
/// own key/IV draw (for the random variants) prepared outside the timed region.
pub fn measure_group(g: &Group, cfg: &Config, mut on_sample: impl FnMut()) -> Result<GroupResult, RunError> {
    let mut run = GroupRun::start(g, cfg)?;
    while run.remaining() > 0 {
        run.step()?;
        on_sample();
    }
    Ok(run.finish())
}

/// Measure groups that differ only in their payload (e.g. dataset vs random) sample by
/// sample in turn, so slow drift of the machine (frequency, co-tenants) hits all of them
/// alike instead of whichever group happened to run during it.
pub fn measure_interleaved(
    groups: &[&Group],
    cfg: &Config,
    mut on_sample: impl FnMut(&Group),
) -> Result<Vec<GroupResult>, RunError> {
    let mut runs = groups.iter().map(|g| GroupRun::start(g, cfg)).collect::<Result<Vec<_>, _>>()?;
    while runs.iter().any(|r| r.remaining() > 0) {
        for r in runs.iter_mut().filter(|r| r.remaining() > 0) {
            r.step()?;
            on_sample(r.g);
        }
    }
    Ok(runs.into_iter().map(GroupRun::finish).collect())
}

/// Measure clusters of groups in `rounds` interleaved rounds spread over the whole run: all
/// groups are calibrated first; then in each round every group takes its share of samples
/// (warm-up first), cluster after cluster (the order reversed every other round), and within
/// a cluster sample by sample in turn as in [`measure_interleaved`]. Slow drift of a shared
/// machine then hits every group alike instead of whichever ran during it, and the samples
/// of round r are the r-th consecutive part of a group's samples (the between-round spread of
/// `summary.csv` compares those parts).
pub fn measure_rounds(
    clusters: &[Vec<&Group>],
    cfg: &Config,
    rounds: usize,
    mut on_sample: impl FnMut(&Group),
) -> Result<Vec<Vec<GroupResult>>, RunError> {
    let rounds = rounds.clamp(1, cfg.reps.max(1));
    let mut runs: Vec<Vec<GroupRun>> = clusters
        .iter()
        .map(|c| c.iter().map(|g| GroupRun::start(g, cfg)).collect::<Result<Vec<_>, _>>())
        .collect::<Result<_, _>>()?;
    for r in 0..rounds {
        // samples taken (warm-up included) by the end of round r
        let target = cfg.warmup + cfg.reps * (r + 1) / rounds;
        let order: Vec<usize> = if r % 2 == 0 { (0..runs.len()).collect() } else { (0..runs.len()).rev().collect() };
        for ci in order {
            let c = &mut runs[ci];
            while c.iter().any(|g| g.taken() < target) {
                for g in c.iter_mut().filter(|g| g.taken() < target) {
                    g.step()?;
                    on_sample(g.g);
                }
            }
        }
    }
    Ok(runs.into_iter().map(|c| c.into_iter().map(GroupRun::finish).collect()).collect())
}

/// Deterministic counting (docs/measurement.md, `--counter instructions`): build the group's
/// operation with the per-group RNG of `cfg.seed`, prepare it (drawing the random key/IV
/// parts once), check it, run `warm` untimed operations (one-time costs), then call `on`,
/// run `ops` operations and call `off`. Under callgrind, `on`/`off` toggle collection, so the
/// count covers exactly the `ops` operations.
pub fn count_ops(
    g: &Group,
    cfg: &Config,
    warm: u64,
    ops: u64,
    on: impl FnOnce(),
    off: impl FnOnce(),
) -> Result<(), RunError> {
    let mut run = GroupRun::start_uncalibrated(g, cfg)?;
    let err = |e| RunError { group: g.label(), error: e, detail: None };
    if g.kiv.random_key {
        run.rng.fill_bytes(&mut run.key);
    }
    if g.kiv.random_iv {
        run.rng.fill_bytes(&mut run.iv);
        if let Some(rule) = g.entry.iv_rule {
            rule(&mut run.iv);
        }
    }
    run.op.prepare(&run.key, &run.iv).map_err(err)?;
    for _ in 0..warm {
        run.op.run().map_err(err)?;
    }
    on();
    for _ in 0..ops {
        run.op.run().map_err(err)?;
    }
    off();
    black_box(&mut run.op);
    Ok(())
}

/// One group in progress: validated and calibrated by [`GroupRun::start`], one sample per
/// [`GroupRun::step`].
pub struct GroupRun<'g> {
    g: &'g Group,
    warmup_n: usize,
    total: usize,
    rng: ChaCha20Rng,
    op: Box<dyn Op>,
    key: Vec<u8>,
    iv: Vec<u8>,
    batch: u64,
    /// Every sample lasts at least this long (0 = no floor: the roundtrip scenario).
    floor_ns: f64,
    samples: Vec<Sample>,
    warmup: Vec<Sample>,
}

impl<'g> GroupRun<'g> {
    pub fn start(g: &'g Group, cfg: &Config) -> Result<Self, RunError> {
        let mut run = Self::start_uncalibrated(g, cfg)?;
        let err = |e| RunError { group: g.label(), error: e, detail: None };
        if g.scenario != Scenario::Roundtrip {
            run.batch = calibrate(run.op.as_mut(), &run.key, &run.iv, cfg.min_sample_ns).map_err(err)?;
        }
        Ok(run)
    }

    /// Validated, op built, prepared and checked; batch 1.
    fn start_uncalibrated(g: &'g Group, cfg: &Config) -> Result<Self, RunError> {
        let err = |e| RunError { group: g.label(), error: e, detail: None };
        let mut rng = ChaCha20Rng::seed_from_u64(cfg.seed ^ fnv1a(&g.label()));
        let info = g.entry.info;
        let key = cfg.static_key.clone().unwrap_or_else(|| default_static(info.key_bytes()));
        let iv = cfg.static_iv.clone().unwrap_or_else(|| default_static(info.iv_bytes()));
        if key.len() != info.key_bytes() {
            return Err(err(CipherError::KeyLength { expected: info.key_bytes(), got: key.len() }));
        }
        if iv.len() != info.iv_bytes() {
            return Err(err(CipherError::IvLength { expected: info.iv_bytes(), got: iv.len() }));
        }
        let mut op = build_op(g, &mut rng);

        op.prepare(&key, &iv).map_err(err)?;
        op.verify(&key).map_err(|d| RunError {
            group: g.label(),
            error: CipherError::AuthenticationFailed,
            detail: Some(d),
        })?;
        // Roundtrip: worst case per message is the point, every message is its own sample
        // (batch 1, no floor); everything else is calibrated by `start`.
        let roundtrip = g.scenario == Scenario::Roundtrip;
        let batch = 1;
        Ok(GroupRun {
            g,
            warmup_n: cfg.warmup,
            total: cfg.warmup + cfg.reps,
            rng,
            op,
            key,
            iv,
            batch,
            floor_ns: if roundtrip { 0.0 } else { cfg.min_sample_ns },
            samples: Vec::with_capacity(cfg.reps),
            warmup: Vec::with_capacity(cfg.warmup),
        })
    }

    /// The calibrated batch (operations per sample before any floor extension).
    pub fn batch(&self) -> u64 {
        self.batch
    }

    /// Samples taken so far (warm-up included).
    pub fn taken(&self) -> usize {
        self.samples.len() + self.warmup.len()
    }

    /// Samples still to take (warm-up included).
    pub fn remaining(&self) -> usize {
        self.total - self.samples.len() - self.warmup.len()
    }

    /// Take the next sample: draw the random key/IV parts, prepare, time one batch.
    pub fn step(&mut self) -> Result<(), RunError> {
        let g = self.g;
        let err = |e| RunError { group: g.label(), error: e, detail: None };
        if g.kiv.random_key {
            self.rng.fill_bytes(&mut self.key);
        }
        if g.kiv.random_iv {
            self.rng.fill_bytes(&mut self.iv);
            if let Some(rule) = g.entry.iv_rule {
                rule(&mut self.iv);
            }
        }
        self.op.prepare(&self.key, &self.iv).map_err(err)?;
        let s = time_batch_floor(self.op.as_mut(), self.batch, self.floor_ns).map_err(err)?;
        if self.warmup.len() < self.warmup_n {
            self.warmup.push(s);
            if self.warmup.len() == self.warmup_n && self.floor_ns > 0.0 {
                // Re-check after the warm-up samples: if they show the operation is faster
                // than calibration measured, raise the batch so measured samples need no
                // extension (the warm-up samples are excluded, so this changes no statistic).
                let b = batch_for(self.floor_ns, median_ns(&self.warmup));
                self.batch = self.batch.max(b);
            }
        } else {
            self.samples.push(s);
        }
        Ok(())
    }

    pub fn finish(self) -> GroupResult {
        GroupResult { group: self.g.clone(), batch: self.batch, samples: self.samples, warmup: self.warmup }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{expand, Payload, Scenario, Selection};

    #[test]
    fn rounds_spread_every_group_over_the_run() {
        let sel = Selection {
            ciphers: vec!["ChaCha20".into()],
            scenarios: vec![Scenario::Full],
            sizes_bits: vec![64, 128],
            kivs: vec![crate::plan::Kiv::parse("ss").unwrap()],
            ..Default::default()
        };
        let groups = expand(&sel).unwrap();
        assert_eq!(groups.len(), 2);
        let cfg = Config { reps: 6, warmup: 1, min_sample_ns: 1.0, ..Default::default() };
        let clusters: Vec<Vec<&Group>> = groups.iter().map(|g| vec![g]).collect();
        let mut order = Vec::new();
        let rs = measure_rounds(&clusters, &cfg, 3, |g| order.push(g.size_bits)).unwrap();
        // round 0: warm-up + 2 of 64, then 3 of 128; round 1 reversed: 2 of 128, 2 of 64; round 2: 2 + 2
        assert_eq!(order, [64, 64, 64, 128, 128, 128, 128, 128, 64, 64, 64, 64, 128, 128]);
        assert!(rs.iter().all(|c| c[0].samples.len() == 6 && c[0].warmup.len() == 1));
    }

    #[test]
    fn planted_slowdown_runs_ten_percent_more_operations() {
        assert_eq!(planted_slowdown("rust-ref~slow10"), Some(10));
        assert_eq!(planted_slowdown("rust-ref~twin"), None);
        assert_eq!(planted_slowdown("rust-ref"), None);
        // count the inner operations: 100 outer runs → 110 inner runs (hand count: every 10th twice)
        struct Count(std::rc::Rc<std::cell::Cell<u64>>);
        impl Op for Count {
            fn prepare(&mut self, _: &[u8], _: &[u8]) -> Result<(), CipherError> {
                Ok(())
            }
            fn run(&mut self) -> Result<(), CipherError> {
                self.0.set(self.0.get() + 1);
                Ok(())
            }
        }
        let n = std::rc::Rc::new(std::cell::Cell::new(0));
        let mut p = Planted { inner: Box::new(Count(n.clone())), every: 10, n: 0 };
        for _ in 0..100 {
            p.run().unwrap();
        }
        assert_eq!(n.get(), 110);
    }

    #[test]
    fn interleaved_groups_alternate_and_keep_their_counts() {
        let sel = Selection {
            ciphers: vec!["ChaCha20".into()],
            scenarios: vec![Scenario::Full],
            sizes_bits: vec![64],
            kivs: vec![crate::plan::Kiv::parse("ss").unwrap()],
            payloads: vec![Payload::dataset("t", vec![0xAB; 8]), Payload::random()],
            ..Default::default()
        };
        let groups = expand(&sel).unwrap();
        assert_eq!(groups.len(), 2);
        let cfg = Config { reps: 3, warmup: 2, min_sample_ns: 1.0, ..Default::default() };
        let refs: Vec<&Group> = groups.iter().collect();
        let mut order = Vec::new();
        let rs = measure_interleaved(&refs, &cfg, |g| order.push(g.payload.label.clone())).unwrap();
        // 5 samples each, taken in turn: A B A B …
        assert_eq!(order.len(), 10);
        for (i, l) in order.iter().enumerate() {
            assert_eq!(l, &groups[i % 2].payload.label, "sample {i}");
        }
        for (r, g) in rs.iter().zip(&groups) {
            assert_eq!(r.group.payload.label, g.payload.label);
            assert_eq!((r.samples.len(), r.warmup.len()), (3, 2));
            assert!(r.samples.iter().all(|s| s.ns > 0.0));
        }
    }
}

#[cfg(test)]
mod frame_tests {
    use super::*;
    use crate::plan::{expand, Kiv, Selection};
    use crate::video::Clip;
    use lwcbench_catalog::Entry;
    use lwcbench_core::{BitOrder, CipherInfo, Family, Language, Origin};
    use std::sync::Arc;

    /// Three 16×8 mono frames with distinct contents (hand-built y4m).
    fn clip() -> Arc<Clip> {
        let mut y = b"YUV4MPEG2 W16 H8 F25:1 Cmono\n".to_vec();
        for f in 0..3u8 {
            y.extend(b"FRAME\n");
            y.extend((0..128u8).map(|i| i.wrapping_mul(3).wrapping_add(f * 50)));
        }
        Arc::new(Clip::parse(&y, "t.y4m", "t", None).unwrap())
    }

    fn frame_groups(cipher: &str) -> Vec<Group> {
        let sel = Selection {
            ciphers: vec![cipher.into()],
            scenarios: vec![Scenario::Frame],
            video: Some(clip()),
            ..Default::default()
        };
        expand(&sel).unwrap()
    }

    #[test]
    fn plan_gives_one_frame_per_op_and_counter_ivs() {
        let g = frame_groups("ChaCha20");
        // static IV variants only (s,s and r,s): the IV is the frame counter
        assert_eq!(g.iter().map(|g| g.kiv.label()).collect::<Vec<_>>(), vec!["s,s", "r,s"]);
        assert!(g.iter().all(|g| g.size_bits == 128 * 8 && g.payload.label == "video:t"));
        assert_eq!(g[0].label(), "ChaCha20/rustcrypto frame <s,s | 1024> video:t");
        // AEADs too, block ciphers not; frame never runs unless named
        assert_eq!(frame_groups("ChaCha20-Poly1305/rustcrypto").len(), 2);
        let every = expand(&Selection { ciphers: vec!["ChaCha20".into()], ..Default::default() }).unwrap();
        assert!(every.iter().all(|g| g.scenario != Scenario::Frame));
        assert_eq!(Scenario::parse("FRAME"), Some(Scenario::Frame));
    }

    /// The measured ciphertext, decrypted with a fresh instance of the catalogue's (KAT-verified)
    /// implementation under the op's counter IV, is the frame; the keystream it was XORed with
    /// is that instance's keystream.
    #[test]
    fn measured_ciphertext_decrypts_to_the_frame() {
        for cipher in ["ChaCha20", "Trivium", "Grain-128a", "ChaCha20-Poly1305"] {
            let g = &frame_groups(cipher)[0];
            let c = clip();
            let key: Vec<u8> = (0..g.entry.info.key_bytes() as u8).map(|i| i ^ 0x5a).collect();
            let mut op = FrameOp::new(g);
            op.prepare(&key, &[]).unwrap();
            for round in 0..5 {
                op.run().unwrap();
                let i = op.last;
                assert_eq!(i, round % 3, "{cipher}: frames are taken in turn, cycling");
                assert_ne!(op.buf, c.frame(i));
                let mut dec = op.buf.clone();
                match g.entry.make {
                    Make::Stream(mk) => {
                        let mut d = mk();
                        d.init(&key, &op.c.iv).unwrap();
                        let mut ks = vec![0u8; dec.len()];
                        d.keystream(&mut ks).unwrap();
                        dec.iter_mut().zip(&ks).for_each(|(b, k)| *b ^= k);
                    }
                    Make::Aead(mk) => {
                        let mut d = mk();
                        d.set_key(&key).unwrap();
                        d.decrypt(&op.c.iv, &[], &mut dec, &op.c.tag).unwrap();
                    }
                    Make::Block(_) | Make::Mode(_) => unreachable!(),
                }
                assert_eq!(dec, c.frame(i), "{cipher} frame {i}");
            }
            op.verify(&key).unwrap();
        }
    }

    #[test]
    fn counter_ivs_never_repeat_within_a_group() {
        let g = &frame_groups("Trivium")[0];
        let mut op = FrameOp::new(g);
        let mut seen = std::collections::HashSet::new();
        let key = vec![7u8; 10];
        // the order measure_group uses: prepare, verify, calibration batches, samples (each
        // sample re-prepares with a possibly new key; prepare must not reset the counter)
        op.prepare(&key, &[]).unwrap();
        op.verify(&key).unwrap();
        let mut count = 3; // verify encrypted the three frames
        for batch in [1, 2, 4, 8, 3, 3, 3] {
            op.prepare(&key, &[]).unwrap();
            for _ in 0..batch {
                op.run().unwrap();
                count += 1;
                assert!(seen.insert(op.c.iv.clone()), "IV {:02x?} used twice", op.c.iv);
            }
        }
        assert_eq!(op.c.counter, count);
        // Trivium's 80-bit IV: the counter sits big-endian in the last 8 bytes
        assert_eq!(op.c.iv, [0, 0, 0, 0, 0, 0, 0, 0, 0, count as u8]);
    }

    // A deliberately broken stream cipher: `init` forgets to reset the keystream position,
    // so the second frame's keystream differs from a fresh instance's.
    struct NoReset {
        pos: u8,
    }
    const BROKEN: CipherInfo = CipherInfo {
        name: "NoReset",
        implementation: "test",
        family: Family::Stream,
        key_bits: 8,
        iv_bits: 64,
        block_bits: 0,
        tag_bits: 0,
        state_bytes: 1,
        origin: Origin::Own,
        language: Language::Rust,
        bit_order: BitOrder::MsbFirst,
        bit_granular: false,
        note: "",
    };
    impl StreamCipher for NoReset {
        fn info(&self) -> CipherInfo {
            BROKEN
        }
        fn init(&mut self, _key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
            Ok(())
        }
        fn keystream_bits(&mut self, out: &mut [u8], _n: usize) -> Result<(), CipherError> {
            out.iter_mut().for_each(|b| {
                self.pos = self.pos.wrapping_add(1);
                *b = self.pos | 1;
            });
            Ok(())
        }
        fn apply_bits(&mut self, data: &mut [u8], _n: usize) -> Result<(), CipherError> {
            data.iter_mut().for_each(|b| {
                self.pos = self.pos.wrapping_add(1);
                *b ^= self.pos | 1;
            });
            Ok(())
        }
    }
    // A cipher that encrypts nothing.
    struct Identity;
    impl StreamCipher for Identity {
        fn info(&self) -> CipherInfo {
            CipherInfo { name: "Identity", ..BROKEN }
        }
        fn init(&mut self, _key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
            Ok(())
        }
        fn keystream_bits(&mut self, out: &mut [u8], _n: usize) -> Result<(), CipherError> {
            out.fill(0);
            Ok(())
        }
        fn apply_bits(&mut self, _data: &mut [u8], _n: usize) -> Result<(), CipherError> {
            Ok(())
        }
    }

    fn fake_group(make: fn() -> Box<dyn StreamCipher + Send>) -> Group {
        let c = clip();
        Group {
            entry: Entry::from_parts(make().info(), Make::Stream(make), |_, _| Vec::new()),
            scenario: Scenario::Frame,
            kiv: Kiv { random_key: false, random_iv: false },
            size_bits: c.frame_bytes * 8,
            payload: crate::plan::Payload::video(&c),
        }
    }

    #[test]
    fn broken_ciphers_are_caught_before_timing() {
        let g = fake_group(|| Box::new(NoReset { pos: 0 }));
        let mut op = FrameOp::new(&g);
        op.prepare(&[0], &[]).unwrap();
        assert_eq!(
            op.verify(&[0]).unwrap_err(),
            "round trip failed: NoReset/test frame 1 of video:t: the decrypted frame differs from the original at byte 0 of 128"
        );
        let g = fake_group(|| Box::new(Identity));
        let e = measure_group(&g, &Config { reps: 2, warmup: 0, min_sample_ns: 1.0, ..Default::default() }, || {})
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "Identity/test frame <s,s | 1024> video:t: round trip failed: Identity/test frame 0 of video:t: the ciphertext equals the frame (nothing was encrypted)"
        );
        // A tampered ciphertext is caught by the same comparison.
        let g = &frame_groups("ChaCha20")[0];
        let key = vec![1u8; 32];
        let mut op = FrameOp::new(g);
        op.prepare(&key, &[]).unwrap();
        op.run().unwrap();
        op.buf[77] ^= 0x10;
        assert!(op.check_last(&key).unwrap_err().ends_with("differs from the original at byte 77 of 128"));
    }

    /// IVs a cipher was initialised with (for the drawn-IV rule test).
    static SEEN_IVS: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());
    struct RecordIv;
    impl StreamCipher for RecordIv {
        fn info(&self) -> CipherInfo {
            CipherInfo { name: "RecordIv", iv_bits: 96, ..BROKEN }
        }
        fn init(&mut self, _key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
            SEEN_IVS.lock().unwrap().push(iv.to_vec());
            Ok(())
        }
        fn keystream_bits(&mut self, out: &mut [u8], _n: usize) -> Result<(), CipherError> {
            out.fill(0x5a);
            Ok(())
        }
        fn apply_bits(&mut self, data: &mut [u8], _n: usize) -> Result<(), CipherError> {
            data.iter_mut().for_each(|b| *b ^= 0x5a);
            Ok(())
        }
    }

    #[test]
    fn drawn_ivs_follow_the_entry_rule() {
        let make: fn() -> Box<dyn StreamCipher + Send> = || Box::new(RecordIv);
        let entry =
            Entry::from_parts(make().info(), Make::Stream(make), |_, _| Vec::new()).with_iv_rule(|iv| iv[0] &= 0x7f);
        let g = Group {
            entry,
            scenario: Scenario::Keystream,
            kiv: Kiv { random_key: false, random_iv: true },
            size_bits: 64,
            payload: crate::plan::Payload::random(),
        };
        SEEN_IVS.lock().unwrap().clear();
        measure_group(&g, &Config { reps: 40, warmup: 0, min_sample_ns: 1.0, ..Default::default() }, || {}).unwrap();
        let seen = SEEN_IVS.lock().unwrap();
        // after the static IV of calibration, one random draw per sample
        let drawn: Vec<&Vec<u8>> = seen.iter().filter(|iv| **iv != default_static(12)).collect();
        assert!(drawn.len() >= 40, "{} random IVs", drawn.len());
        assert!(drawn.iter().all(|iv| iv[0] & 0x80 == 0), "an IV with the mode bit set was drawn");
        // the rule clears one bit only: the other bits still vary (2^-39 chance of a false alarm)
        assert!(drawn.iter().any(|iv| iv[0] & 0x40 != 0) && drawn.iter().any(|iv| iv[0] & 0x40 == 0));
        assert!(drawn.windows(2).any(|w| w[0][1..] != w[1][1..]));
    }

    /// A cipher whose first keystream call on an instance costs 50 ms (a one-time cost such
    /// as CPU feature detection); every later call does a fixed small amount of work.
    struct SlowFirst {
        first: bool,
    }
    impl StreamCipher for SlowFirst {
        fn info(&self) -> CipherInfo {
            CipherInfo { name: "SlowFirst", ..BROKEN }
        }
        fn init(&mut self, _key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
            Ok(())
        }
        fn keystream_bits(&mut self, out: &mut [u8], _n: usize) -> Result<(), CipherError> {
            if std::mem::take(&mut self.first) {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let mut x = 1u64;
            for i in 0..64u64 {
                x = black_box(x.wrapping_mul(0x9e37_79b9).wrapping_add(i));
            }
            out.fill(x as u8);
            Ok(())
        }
        fn apply_bits(&mut self, data: &mut [u8], n: usize) -> Result<(), CipherError> {
            self.keystream_bits(data, n)
        }
    }

    /// The slow first call must not shrink the batch. Before untimed warm-up and median
    /// calibration, the first timed trial (batch 1) took the 50 ms and the batch was set to
    /// ⌈200 µs / 50 ms⌉ = 1. Now it is ⌈200 µs / t_op⌉ with t_op a few tens of ns (the bound
    /// below allows t_op up to 4 µs, 100× slack for a loaded machine), and the floor makes
    /// every sample last ≥ the minimum sample time regardless of timing.
    #[test]
    fn slow_first_call_does_not_shrink_the_batch() {
        let make: fn() -> Box<dyn StreamCipher + Send> = || Box::new(SlowFirst { first: true });
        let g = Group {
            entry: Entry::from_parts(make().info(), Make::Stream(make), |_, _| Vec::new()),
            scenario: Scenario::Keystream,
            kiv: Kiv { random_key: false, random_iv: false },
            size_bits: 64,
            payload: crate::plan::Payload::random(),
        };
        let cfg = Config { reps: 20, warmup: 2, min_sample_ns: 200_000.0, ..Default::default() };
        let r = measure_group(&g, &cfg, || {}).unwrap();
        assert!(r.batch >= 50, "batch {} was taken from the slow first call", r.batch);
        // Warm-up samples may precede a raise of the batch (the re-check after warm-up), so
        // only the measured ones must reach the final batch; every sample reaches the floor.
        for s in r.samples.iter() {
            assert!(s.ops >= r.batch, "{s:?} below the batch {}", r.batch);
        }
        for s in r.samples.iter().chain(&r.warmup) {
            assert!(s.ns * s.ops as f64 >= cfg.min_sample_ns * (1.0 - 1e-9), "{s:?} below the floor");
        }
        let mut ns: Vec<f64> = r.samples.iter().map(|s| s.ns).collect();
        ns.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert!(ns[10] < 4_000.0, "median {} ns per op is dominated by the slow call", ns[10]);
    }

    #[test]
    fn measure_group_runs_frames() {
        let g = &frame_groups("ChaCha20")[1];
        let r = measure_group(g, &Config { reps: 3, warmup: 1, min_sample_ns: 1000.0, ..Default::default() }, || {})
            .unwrap();
        assert_eq!(r.samples.len(), 3);
        assert!(r.samples.iter().all(|s| s.ns > 0.0));
    }
}

#[cfg(test)]
mod mode_tests {
    use super::*;
    use crate::plan::{expand, Selection};

    /// Every scenario of an unauthenticated AES mode measures through ModeOp, and the
    /// reading scenario does not apply to it.
    #[test]
    fn aes_modes_measure_keysetup_encrypt_decrypt() {
        let sel = Selection {
            ciphers: vec!["AES-128-CBC/rustcrypto".into(), "AES-256-CTR/rustcrypto".into()],
            scenarios: vec![Scenario::Keysetup, Scenario::Encrypt, Scenario::Decrypt],
            sizes_bits: vec![8 * 17],
            ..Default::default()
        };
        let groups = expand(&sel).unwrap();
        assert!(groups.len() >= 6, "{} groups", groups.len());
        let cfg = Config { reps: 2, warmup: 0, min_sample_ns: 1000.0, ..Default::default() };
        for g in &groups {
            let r = measure_group(g, &cfg, || {}).unwrap_or_else(|e| panic!("{e}"));
            assert!(r.samples.iter().all(|s| s.ns > 0.0), "{}", g.label());
        }
        assert!(!Scenario::Reading.applies_to(lwcbench_core::Family::Mode));
    }
}
