//! The operations a group times, one per scenario and family: stream/block/mode/AEAD
//! encryption, per-reading and per-frame encryption under a counter IV, the AEAD round trip,
//! and the A/A experiment's planted slowdown. `build_op` picks one for a group.
use std::hint::black_box;

use lwcbench_catalog::Make;
use lwcbench_core::{Aead, BlockCipher, CipherError, CipherMode, StreamCipher};
use rand::RngCore;
use rand_chacha::ChaCha20Rng;

use crate::plan::{Group, Scenario};

/// One timed operation and its untimed preparation.
pub(super) trait Op {
    /// Untimed: install key/IV, restore buffers so every `run` does the same work.
    fn prepare(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError>;
    /// Timed.
    fn run(&mut self) -> Result<(), CipherError>;
    /// Untimed check before measuring (the frame scenario's round trip); Err = message.
    fn verify(&mut self, _key: &[u8]) -> Result<(), String> {
        Ok(())
    }
}

pub(super) struct StreamOp {
    pub(super) c: Box<dyn StreamCipher + Send>,
    pub(super) scenario: Scenario,
    pub(super) nbits: usize,
    pub(super) buf: Vec<u8>,
    pub(super) payload: Vec<u8>,
    pub(super) key: Vec<u8>,
    pub(super) iv: Vec<u8>,
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

pub(super) struct BlockOp {
    pub(super) c: Box<dyn BlockCipher + Send>,
    pub(super) scenario: Scenario,
    pub(super) block: usize,
    pub(super) buf: Vec<u8>,
    pub(super) key: Vec<u8>,
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

pub(super) struct AeadOp {
    pub(super) c: Box<dyn Aead + Send>,
    pub(super) scenario: Scenario,
    pub(super) payload: Vec<u8>,
    pub(super) buf: Vec<u8>,
    pub(super) ct: Vec<u8>,
    pub(super) tag: Vec<u8>,
    pub(super) key: Vec<u8>,
    pub(super) nonce: Vec<u8>,
    /// The nonce's last (up to 8) bytes: the group label's hash in the high half, the messages
    /// encrypted so far in the low half, so no (key, nonce) pair repeats in a run — across the
    /// samples of a fixed key/IV variant and the groups sharing the default key too. (The
    /// benchmark's keys are public test keys, never a deployment's.)
    pub(super) counter: u64,
}

impl AeadOp {
    /// The op of AEAD group `g` with cipher `c` and message `payload`.
    pub(super) fn new(g: &Group, c: Box<dyn Aead + Send>, payload: Vec<u8>) -> AeadOp {
        AeadOp {
            c,
            scenario: g.scenario,
            buf: payload.clone(),
            ct: payload.clone(),
            payload,
            tag: vec![0u8; g.entry.info.tag_bytes()],
            key: Vec::new(),
            nonce: Vec::new(),
            // the group's own counter range (the fixed-key variants share the default key)
            counter: fnv1a(&g.label()) & !0xffff_ffff,
        }
    }
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
        if self.scenario == Scenario::Decrypt {
            // Decrypt needs a valid ciphertext + tag for this key and a nonce of its own.
            next_counter_iv(&mut self.counter, &mut self.nonce);
            self.ct.copy_from_slice(&self.payload);
            self.c.encrypt(&self.nonce, &[], &mut self.ct, &mut self.tag)?;
        }
        self.buf.copy_from_slice(&self.payload);
        Ok(())
    }
    #[inline(never)]
    fn run(&mut self) -> Result<(), CipherError> {
        let r = match self.scenario {
            Scenario::Keysetup => self.c.set_key(&self.key),
            Scenario::Encrypt => {
                // each message under the next nonce, as a device sends them (a few instructions)
                next_counter_iv(&mut self.counter, &mut self.nonce);
                self.c.encrypt(&self.nonce, &[], &mut self.buf, &mut self.tag)
            }
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
pub(super) struct ModeOp {
    pub(super) c: Box<dyn CipherMode + Send>,
    pub(super) scenario: Scenario,
    pub(super) payload: Vec<u8>,
    pub(super) buf: Vec<u8>,
    pub(super) ct: Vec<u8>,
    pub(super) key: Vec<u8>,
    pub(super) iv: Vec<u8>,
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
pub(super) struct CounterKeyed {
    pub(super) stream: Option<Box<dyn StreamCipher + Send>>,
    pub(super) aead: Option<Box<dyn Aead + Send>>,
    pub(super) key: Vec<u8>,
    pub(super) iv: Vec<u8>,
    pub(super) counter: u64,
    pub(super) tag: Vec<u8>,
}

impl CounterKeyed {
    fn new(g: &Group, make: Make, scenario: &str) -> Self {
        let (stream, aead) = match make {
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
pub(super) struct ReadingOp {
    pub(super) c: CounterKeyed,
    pub(super) pool: Vec<u8>,
    pub(super) pos: usize,
    pub(super) buf: [u8; 4],
}

impl ReadingOp {
    fn new(g: &Group, make: Make, pool: Vec<u8>) -> Self {
        ReadingOp { c: CounterKeyed::new(g, make, "reading"), pool, pos: 0, buf: [0; 4] }
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
pub(super) struct FrameOp {
    pub(super) make: Make,
    pub(super) c: CounterKeyed,
    pub(super) id: String,
    pub(super) label: String,
    pub(super) frames: std::sync::Arc<Vec<u8>>,
    pub(super) frame_bytes: usize,
    pub(super) next: usize,
    /// Index of the frame the last `run` encrypted.
    pub(super) last: usize,
    pub(super) buf: Vec<u8>,
}

impl FrameOp {
    pub(super) fn new(g: &Group, make: Make) -> Self {
        let frame_bytes = g.size_bits / 8;
        let frames = g
            .payload
            .bytes
            .clone()
            .filter(|b| frame_bytes > 0 && b.len() >= frame_bytes)
            .expect("frame groups carry a video payload");
        FrameOp {
            make,
            c: CounterKeyed::new(g, make, "frame"),
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
    pub(super) fn check_last(&self, key: &[u8]) -> Result<(), String> {
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
pub(super) struct RoundtripOp {
    pub(super) c: Box<dyn Aead + Send>,
    pub(super) payload: Vec<u8>,
    pub(super) buf: Vec<u8>,
    pub(super) tag: Vec<u8>,
    pub(super) nonce: Vec<u8>,
    pub(super) counter: u64,
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
pub(super) struct Planted {
    pub(super) inner: Box<dyn Op>,
    pub(super) every: u64,
    pub(super) n: u64,
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

/// The operation that times group `g`, built from the implementation's constructor.
pub(super) fn build_op(g: &Group, make: Make, rng: &mut ChaCha20Rng) -> Box<dyn Op> {
    let op = build_plain_op(g, make, rng);
    match planted_slowdown(g.entry.info.implementation) {
        Some(p) => Box::new(Planted { inner: op, every: (100 / p).max(1), n: 0 }),
        None => op,
    }
}

fn build_plain_op(g: &Group, make: Make, rng: &mut ChaCha20Rng) -> Box<dyn Op> {
    let nbytes = g.size_bits.div_ceil(8);
    if g.scenario == Scenario::Frame {
        return Box::new(FrameOp::new(g, make));
    }
    if g.scenario == Scenario::Reading {
        // A pool of readings to send one after another (the dataset's, or random words).
        let pool = payload_bytes(g, 4 * 1024, rng);
        return Box::new(ReadingOp::new(g, make, pool));
    }
    if let (Scenario::Roundtrip, Make::Aead(mk)) = (g.scenario, make) {
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
    match make {
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
        Make::Aead(mk) => Box::new(AeadOp::new(g, mk(), payload_bytes(g, nbytes, rng))),
    }
}
