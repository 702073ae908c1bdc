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
}

impl Default for Config {
    fn default() -> Self {
        Config { reps: 100, warmup: 10, seed: 1, min_sample_ns: 20_000.0, static_key: None, static_iv: None }
    }
}

/// One sample: time (and TSC ticks) per operation.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub ns: f64,
    pub cycles: Option<f64>,
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

/// Per-reading encryption: what a sensor node does for each 32-bit reading. The IV/nonce is
/// the big-endian value of a device counter that only ever increases within a group, so no
/// key/IV pair is used twice — not across samples, not across batches.
struct ReadingOp {
    stream: Option<Box<dyn StreamCipher + Send>>,
    aead: Option<Box<dyn Aead + Send>>,
    key: Vec<u8>,
    iv: Vec<u8>,
    counter: u64,
    pool: Vec<u8>,
    pos: usize,
    buf: [u8; 4],
    tag: Vec<u8>,
}

impl ReadingOp {
    fn new(g: &Group, pool: Vec<u8>) -> Self {
        let (stream, aead) = match g.entry.make {
            Make::Stream(mk) => (Some(mk()), None),
            Make::Aead(mk) => (None, Some(mk())),
            Make::Block(_) | Make::Mode(_) => unreachable!("reading applies to stream ciphers and AEADs"),
        };
        ReadingOp {
            stream,
            aead,
            key: Vec::new(),
            iv: vec![0u8; g.entry.info.iv_bytes()],
            counter: 0,
            pool,
            pos: 0,
            buf: [0; 4],
            tag: vec![0u8; g.entry.info.tag_bytes()],
        }
    }
}

impl Op for ReadingOp {
    fn prepare(&mut self, key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
        self.key.clear();
        self.key.extend_from_slice(key);
        match &mut self.aead {
            Some(a) => a.set_key(key),
            None => Ok(()),
        }
    }
    #[inline(never)]
    fn run(&mut self) -> Result<(), CipherError> {
        self.counter += 1;
        let c = self.counter.to_be_bytes();
        let n = self.iv.len().min(8);
        let ivlen = self.iv.len();
        self.iv[ivlen - n..].copy_from_slice(&c[8 - n..]);
        self.buf.copy_from_slice(&self.pool[self.pos..self.pos + 4]);
        self.pos = (self.pos + 4) % self.pool.len();
        let r = match (&mut self.stream, &mut self.aead) {
            (Some(s), _) => s.init(&self.key, &self.iv).and_then(|_| s.apply_bits(&mut self.buf, 32)),
            (_, Some(a)) => a.encrypt(&self.iv, &[], &mut self.buf, &mut self.tag),
            _ => unreachable!("one of the two is set in new()"),
        };
        black_box(&mut self.buf);
        r
    }
}

/// 64-bit FNV-1a, to derive a per-group RNG stream from the run seed and the group label, so
/// a group's keys do not depend on which other groups were selected.
fn fnv1a(s: &str) -> u64 {
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

fn build_op(g: &Group, rng: &mut ChaCha20Rng) -> Box<dyn Op> {
    let nbytes = g.size_bits.div_ceil(8);
    if g.scenario == Scenario::Reading {
        // A pool of readings to send one after another (the dataset's, or random words).
        let pool = payload_bytes(g, 4 * 1024, rng);
        return Box::new(ReadingOp::new(g, pool));
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
            Box::new(ModeOp { c: mk(), scenario: g.scenario, buf: payload.clone(), ct: Vec::new(), payload, key: Vec::new(), iv: Vec::new() })
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
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.group, self.error)
    }
}
impl std::error::Error for RunError {}

fn time_batch(op: &mut dyn Op, batch: u64) -> Result<Sample, CipherError> {
    let s = Stamp::now();
    for _ in 0..batch {
        op.run()?;
    }
    let (ns, cy) = s.elapsed();
    Ok(Sample {
        ns: ns / batch as f64,
        cycles: crate::clock::HAS_CYCLE_COUNTER.then(|| cy as f64 / batch as f64),
    })
}

/// Measure one group: calibrate the batch, then `warmup` + `reps` samples, each with its
/// own key/IV draw (for the random variants) prepared outside the timed region.
pub fn measure_group(g: &Group, cfg: &Config, mut on_sample: impl FnMut()) -> Result<GroupResult, RunError> {
    let err = |e| RunError { group: g.label(), error: e };
    let mut rng = ChaCha20Rng::seed_from_u64(cfg.seed ^ fnv1a(&g.label()));
    let info = g.entry.info;
    let static_key = cfg.static_key.clone().unwrap_or_else(|| default_static(info.key_bytes()));
    let static_iv = cfg.static_iv.clone().unwrap_or_else(|| default_static(info.iv_bytes()));
    if static_key.len() != info.key_bytes() {
        return Err(err(CipherError::KeyLength { expected: info.key_bytes(), got: static_key.len() }));
    }
    if static_iv.len() != info.iv_bytes() {
        return Err(err(CipherError::IvLength { expected: info.iv_bytes(), got: static_iv.len() }));
    }
    let mut op = build_op(g, &mut rng);
    let mut key = static_key.clone();
    let mut iv = static_iv.clone();
    let draw = |rng: &mut ChaCha20Rng, key: &mut Vec<u8>, iv: &mut Vec<u8>| {
        if g.kiv.random_key {
            rng.fill_bytes(key);
        }
        if g.kiv.random_iv {
            rng.fill_bytes(iv);
        }
    };

    // Calibrate: double the batch until one sample lasts ≥ min_sample_ns.
    op.prepare(&key, &iv).map_err(err)?;
    let mut batch = 1u64;
    loop {
        let s = time_batch(op.as_mut(), batch).map_err(err)?;
        if s.ns * batch as f64 >= cfg.min_sample_ns || batch >= 1 << 26 {
            let per_op = s.ns.max(0.1);
            batch = ((cfg.min_sample_ns / per_op).ceil() as u64).clamp(1, 1 << 26);
            break;
        }
        batch *= 2;
        op.prepare(&key, &iv).map_err(err)?;
    }

    let mut samples = Vec::with_capacity(cfg.reps);
    let mut warmup = Vec::with_capacity(cfg.warmup);
    for i in 0..cfg.warmup + cfg.reps {
        draw(&mut rng, &mut key, &mut iv);
        op.prepare(&key, &iv).map_err(err)?;
        let s = time_batch(op.as_mut(), batch).map_err(err)?;
        if i < cfg.warmup {
            warmup.push(s);
        } else {
            samples.push(s);
        }
        on_sample();
    }
    Ok(GroupResult { group: g.clone(), batch, samples, warmup })
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
