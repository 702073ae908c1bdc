//! Misuse torture in the manner of SUPERCOP's `try.c`, run by `lwcbench verify` for every
//! AEAD, AES mode and stream-cipher implementation (in-process here; external engines through
//! `lwcbench_engine::external::vectors::torture`).
//!
//! Per loop (random message length 0–4 KiB, skewed towards short; AD 0–1 KiB for AEADs; random
//! key, nonce, message):
//! * every buffer handed to the implementation sits between canary bytes that must survive
//!   (for the C libraries this is the only guard against a write past the end);
//! * key, nonce, AD and the tag handed to decryption are unchanged after the call;
//! * two identical calls give identical output, the output buffers holding different stale
//!   bytes before each (catches output that depends on uninitialised or previous memory);
//! * stream ciphers: in-place `apply` equals `keystream` XOR message (the traits are in-place
//!   only, so AEADs and modes have no out-of-place form to compare with);
//! * decrypt(encrypt(m)) = m;
//! * AEADs: two random byte flips in each of ciphertext, tag, nonce and AD, each refused with
//!   no plaintext released (the buffer zeroed or left as the ciphertext).
//!
//! And one checksum per primitive: SHA-256 over the outputs of a fixed pseudo-random sequence
//! of encryptions, each key and nonce chained from the previous output (SUPERCOP's
//! `checksum`), which every implementation of the primitive must reproduce.
use lwcbench_core::{Aead, CipherMode, StreamCipher};
use sha2::{Digest, Sha256};

use crate::entry::{Entry, Make};
use crate::verify::Check;

/// Loops per implementation (`lwcbench verify`; 8× with `VerifyCtx::thorough`).
pub const LOOPS: usize = 24;
/// Encryptions in the checksum sequence.
pub const CHECKSUM_OPS: usize = 32;
/// Random byte flips per loop in each of ciphertext, tag, nonce and AD.
const FLIPS: usize = 2;
const CANARY: usize = 16;

/// splitmix64: a fixed, portable pseudo-random sequence (the checksum must not depend on a
/// crate's generator).
pub struct Rng(u64);

impl Rng {
    /// The sequence of this seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    /// The next output.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0; the modulo bias is irrelevant here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// 0..=max, skewed towards short lengths (mean about max/4) so edge cases near 0 come often.
    pub fn len(&mut self, max: usize) -> usize {
        let m = self.below(max + 1);
        self.below(m + 1)
    }
    /// `n` bytes, the low byte of one output each.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// What kind of operation a subject performs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Authenticated encryption.
    Aead,
    /// Confidentiality-only mode; `whole_blocks`: the message must be whole 16-byte blocks
    /// (an engine's ECB/CBC without padding).
    Mode {
        /// Only whole 16-byte blocks are accepted.
        whole_blocks: bool,
    },
    /// A stream cipher.
    Stream,
}

/// An implementation under torture: in-process ([`Local`]) or an external engine.
pub trait Subject {
    /// "cipher/implementation".
    fn id(&self) -> String;
    /// The primitive whose checksum this implementation must reproduce, e.g. "AES-128-GCM".
    fn primitive(&self) -> String;
    /// What kind of operation it performs.
    fn shape(&self) -> Shape;
    /// Key, nonce/IV and tag sizes in bytes.
    fn sizes(&self) -> (usize, usize, usize);
    /// Encrypt; returns ciphertext ‖ tag. `stale` is the byte the output buffers hold before
    /// the call. Memory-contract violations seen during the call are pushed to `bad`.
    fn seal(
        &mut self,
        key: &[u8],
        nonce: &[u8],
        ad: &[u8],
        pt: &[u8],
        stale: u8,
        bad: &mut Vec<String>,
    ) -> Result<Vec<u8>, String>;
    /// Decrypt ciphertext ‖ tag; `Err` when refused.
    fn open(
        &mut self,
        key: &[u8],
        nonce: &[u8],
        ad: &[u8],
        sealed: &[u8],
        stale: u8,
        bad: &mut Vec<String>,
    ) -> Result<Vec<u8>, String>;
    /// A documented limitation that explains this refusal (reported as a finding).
    fn limitation(&self, _mlen: usize, _err: &str) -> Option<String> {
        None
    }
}

/// A copy of `data` (plus `room` bytes of `stale`) between two canaries.
pub struct Guarded {
    v: Vec<u8>,
    n: usize,
}

fn canary_byte(i: usize) -> u8 {
    (i as u8).wrapping_mul(37) ^ 0xc5
}

impl Guarded {
    /// Guard a copy of `data` followed by `room` bytes of `stale`.
    pub fn new(data: &[u8], room: usize, stale: u8) -> Self {
        let n = data.len() + room;
        let mut v: Vec<u8> = (0..CANARY).map(canary_byte).collect();
        v.extend_from_slice(data);
        v.resize(CANARY + n, stale);
        v.extend((0..CANARY).map(|i| canary_byte(i + CANARY)));
        Guarded { v, n }
    }
    /// The guarded bytes, to hand to the implementation.
    pub fn inner(&mut self) -> &mut [u8] {
        &mut self.v[CANARY..CANARY + self.n]
    }
    /// The guarded bytes.
    pub fn get(&self) -> &[u8] {
        &self.v[CANARY..CANARY + self.n]
    }
    /// Both canaries intact.
    pub fn intact(&self) -> bool {
        (0..CANARY).all(|i| self.v[i] == canary_byte(i) && self.v[CANARY + self.n + i] == canary_byte(i + CANARY))
    }
}

/// Record canary damage and changed inputs after a call.
fn audit(bad: &mut Vec<String>, outs: &[(&str, &Guarded)], ins: &[(&str, &Guarded, &[u8])]) {
    for (name, g) in outs {
        if !g.intact() {
            bad.push(format!("write outside the {name} buffer"));
        }
    }
    for (name, g, orig) in ins {
        if !g.intact() {
            bad.push(format!("write outside the {name} input"));
        }
        if g.get() != *orig {
            bad.push(format!("{name} input modified"));
        }
    }
}

/// An in-process registry entry.
pub struct Local {
    id: String,
    name: &'static str,
    implementation: &'static str,
    kind: Kind,
    sizes: (usize, usize, usize),
}

enum Kind {
    Aead(Box<dyn Aead + Send>),
    Mode(Box<dyn CipherMode + Send>),
    Stream(Box<dyn StreamCipher + Send>),
}

impl Local {
    /// None for block ciphers (no message-level API to torture).
    pub fn new(e: &Entry) -> Option<Self> {
        let kind = match e.make? {
            Make::Aead(mk) => Kind::Aead(mk()),
            Make::Mode(mk) => Kind::Mode(mk()),
            Make::Stream(mk) => Kind::Stream(mk()),
            Make::Block(_) => return None,
        };
        let i = &e.info;
        Some(Local {
            id: e.id(),
            name: i.name,
            implementation: i.implementation,
            kind,
            sizes: (i.key_bytes(), i.iv_bytes(), i.tag_bytes()),
        })
    }
    /// Build from a maker directly (the planted-bug tests).
    pub fn from_aead(mk: fn() -> Box<dyn Aead + Send>) -> Self {
        let c = mk();
        let i = c.info();
        let id = format!("{}/{}", i.name, i.implementation);
        Local {
            id,
            name: i.name,
            implementation: i.implementation,
            kind: Kind::Aead(c),
            sizes: (i.key_bytes(), i.iv_bytes(), i.tag_bytes()),
        }
    }
    /// A stream cipher under torture.
    pub fn from_stream(mk: fn() -> Box<dyn StreamCipher + Send>) -> Self {
        let c = mk();
        let i = c.info();
        Local {
            id: format!("{}/{}", i.name, i.implementation),
            name: i.name,
            implementation: i.implementation,
            kind: Kind::Stream(c),
            sizes: (i.key_bytes(), i.iv_bytes(), 0),
        }
    }
}

impl Subject for Local {
    fn id(&self) -> String {
        self.id.clone()
    }
    fn primitive(&self) -> String {
        self.name.to_string()
    }
    fn shape(&self) -> Shape {
        match self.kind {
            Kind::Aead(_) => Shape::Aead,
            Kind::Mode(_) => Shape::Mode { whole_blocks: false },
            Kind::Stream(_) => Shape::Stream,
        }
    }
    fn sizes(&self) -> (usize, usize, usize) {
        self.sizes
    }
    fn limitation(&self, mlen: usize, _err: &str) -> Option<String> {
        let lib = crate::aes::Lib::parse(self.implementation)?;
        let kind = crate::aes::Kind::ALL.into_iter().find(|k| self.name.ends_with(k.as_str()))?;
        lib.limitation(kind, mlen).map(str::to_string)
    }

    fn seal(
        &mut self,
        key: &[u8],
        nonce: &[u8],
        ad: &[u8],
        pt: &[u8],
        stale: u8,
        bad: &mut Vec<String>,
    ) -> Result<Vec<u8>, String> {
        let (mut k, mut n, mut a) = (Guarded::new(key, 0, 0), Guarded::new(nonce, 0, 0), Guarded::new(ad, 0, 0));
        let tag_len = self.sizes.2;
        match &mut self.kind {
            Kind::Aead(c) => {
                c.set_key(k.inner()).map_err(|e| format!("set_key: {e}"))?;
                let mut buf = Guarded::new(pt, 0, stale);
                let mut tag = Guarded::new(&[], tag_len, stale);
                let r = c.encrypt(n.inner(), a.inner(), buf.inner(), tag.inner());
                audit(
                    bad,
                    &[("message", &buf), ("tag", &tag)],
                    &[("key", &k, key), ("nonce", &n, nonce), ("AD", &a, ad)],
                );
                r.map_err(|e| e.to_string())?;
                Ok([buf.get(), tag.get()].concat())
            }
            Kind::Mode(c) => {
                c.set_key(k.inner()).map_err(|e| format!("set_key: {e}"))?;
                let room = c.ciphertext_len(pt.len());
                if room < pt.len() {
                    return Err(format!("ciphertext_len({}) = {room}", pt.len()));
                }
                let mut buf = Guarded::new(pt, room - pt.len(), stale);
                let r = c.encrypt(n.inner(), buf.inner(), pt.len());
                audit(bad, &[("message", &buf)], &[("key", &k, key), ("IV", &n, nonce)]);
                let len = r.map_err(|e| e.to_string())?;
                if len != room {
                    bad.push(format!("encrypt returned {len} bytes, ciphertext_len said {room}"));
                }
                Ok(buf.get()[..len.min(room)].to_vec())
            }
            Kind::Stream(c) => {
                c.init(k.inner(), n.inner()).map_err(|e| format!("init: {e}"))?;
                let mut buf = Guarded::new(pt, 0, stale);
                let r = c.apply(buf.inner());
                // Out of place: keystream into a buffer of stale bytes, XORed with the message.
                let mut ks = Guarded::new(&[], pt.len(), stale);
                let r2 = c.init(k.inner(), n.inner()).and_then(|_| c.keystream(ks.inner()));
                audit(bad, &[("message", &buf), ("keystream", &ks)], &[("key", &k, key), ("IV", &n, nonce)]);
                r.and(r2).map_err(|e| e.to_string())?;
                if ks.get().iter().zip(pt).map(|(x, y)| x ^ y).ne(buf.get().iter().copied()) {
                    bad.push("in-place apply differs from keystream XOR message".into());
                }
                Ok(buf.get().to_vec())
            }
        }
    }

    fn open(
        &mut self,
        key: &[u8],
        nonce: &[u8],
        ad: &[u8],
        sealed: &[u8],
        stale: u8,
        bad: &mut Vec<String>,
    ) -> Result<Vec<u8>, String> {
        let (mut k, mut n, mut a) = (Guarded::new(key, 0, 0), Guarded::new(nonce, 0, 0), Guarded::new(ad, 0, 0));
        let tag_len = self.sizes.2;
        match &mut self.kind {
            Kind::Aead(c) => {
                if sealed.len() < tag_len {
                    return Err("shorter than the tag".into());
                }
                let (ct, tg) = sealed.split_at(sealed.len() - tag_len);
                c.set_key(k.inner()).map_err(|e| format!("set_key: {e}"))?;
                let mut buf = Guarded::new(ct, 0, stale);
                let mut tag = Guarded::new(tg, 0, 0);
                let r = c.decrypt(n.inner(), a.inner(), buf.inner(), tag.inner());
                audit(
                    bad,
                    &[("message", &buf)],
                    &[("key", &k, key), ("nonce", &n, nonce), ("AD", &a, ad), ("tag", &tag, tg)],
                );
                match r {
                    Ok(()) => Ok(buf.get().to_vec()),
                    Err(e) => {
                        // Refused: nothing but zeros or the untouched ciphertext may remain.
                        if !(buf.get().iter().all(|&b| b == 0) || buf.get() == ct) {
                            bad.push(
                                "refused decryption left other bytes than zeros or the ciphertext in the buffer".into(),
                            );
                        }
                        Err(e.to_string())
                    }
                }
            }
            Kind::Mode(c) => {
                c.set_key(k.inner()).map_err(|e| format!("set_key: {e}"))?;
                let mut buf = Guarded::new(sealed, 0, stale);
                let r = c.decrypt(n.inner(), buf.inner());
                audit(bad, &[("message", &buf)], &[("key", &k, key), ("IV", &n, nonce)]);
                let len = r.map_err(|e| e.to_string())?;
                Ok(buf.get()[..len.min(sealed.len())].to_vec())
            }
            Kind::Stream(_) => self.seal(key, nonce, ad, sealed, stale, bad),
        }
    }
}

/// Run the torture loops on one subject. `seed` varies the random sequence per run.
pub fn torture(s: &mut dyn Subject, loops: usize, seed: u64) -> Check {
    let mut chk = Check::new(s.id(), format!("torture: {loops} random loops"));
    let mut rng = Rng::new(seed ^ fnv(&s.id()));
    let (kl, nl, tl) = s.sizes();
    let shape = s.shape();
    let mut findings: Vec<String> = Vec::new();
    let mut bad = Vec::new();
    for it in 0..loops {
        // The first loops take the edge lengths, the rest random ones.
        let mut mlen = [0usize, 1, 16, 17].get(it).copied().unwrap_or_else(|| rng.len(4096));
        if shape == (Shape::Mode { whole_blocks: true }) {
            mlen -= mlen % 16;
        }
        let adlen = if shape == Shape::Aead && it > 0 { rng.len(1024) } else { 0 };
        let (key, nonce, pt, ad) = (rng.bytes(kl), rng.bytes(nl), rng.bytes(mlen), rng.bytes(adlen));
        let at = format!("loop {it} (message {mlen} B, AD {adlen} B)");
        let note = |bad: &mut Vec<String>, chk: &mut Check, what: &str| {
            for b in bad.drain(..) {
                chk.fail(format!("{at}: {what}: {b}"));
            }
        };
        let first = s.seal(&key, &nonce, &ad, &pt, 0x00, &mut bad);
        note(&mut bad, &mut chk, "encrypt");
        let sealed = match first {
            Ok(v) => v,
            Err(e) => {
                match s.limitation(mlen, &e) {
                    Some(l) if !findings.contains(&l) => findings.push(l),
                    Some(_) => {}
                    None => chk.fail(format!("{at}: encrypt refused: {e}")),
                }
                continue;
            }
        };
        chk.expect(format!("{at}: canaries and inputs intact"), true);
        let again = s.seal(&key, &nonce, &ad, &pt, 0xff, &mut bad);
        note(&mut bad, &mut chk, "second encrypt");
        chk.expect(
            format!("{at}: a second identical call (other stale bytes in the output buffers) gives the same output"),
            again.as_ref() == Ok(&sealed),
        );
        let want_len = match shape {
            Shape::Aead => Some(mlen + tl),
            Shape::Stream | Shape::Mode { whole_blocks: true } => Some(mlen),
            Shape::Mode { whole_blocks: false } => None,
        };
        chk.expect(
            format!("{at}: output length {} (want {want_len:?})", sealed.len()),
            want_len.is_none_or(|w| w == sealed.len()) && sealed.len() >= mlen,
        );
        let opened = s.open(&key, &nonce, &ad, &sealed, 0x5a, &mut bad);
        note(&mut bad, &mut chk, "decrypt");
        chk.expect(format!("{at}: decrypt(encrypt(m)) = m"), opened.as_deref() == Ok(&pt[..]));
        if shape != Shape::Aead {
            continue;
        }
        // Forgeries: byte flips in ciphertext, tag, nonce and AD must each be refused.
        for target in ["ciphertext", "tag", "nonce", "AD"] {
            let len = match target {
                "ciphertext" => mlen,
                "tag" => tl,
                "nonce" => nl,
                _ => adlen,
            };
            for _ in 0..FLIPS.min(len.max(1)) {
                if len == 0 {
                    break;
                }
                let pos = rng.below(len);
                let x = 1 + rng.below(255) as u8;
                let (mut sl, mut n2, mut a2) = (sealed.clone(), nonce.clone(), ad.clone());
                match target {
                    "ciphertext" => sl[pos] ^= x,
                    "tag" => sl[mlen + pos] ^= x,
                    "nonce" => n2[pos] ^= x,
                    _ => a2[pos] ^= x,
                }
                let r = s.open(&key, &n2, &a2, &sl, 0x3c, &mut bad);
                note(&mut bad, &mut chk, &format!("decrypt of a forgery ({target})"));
                chk.expect(format!("{at}: {target} byte {pos} ^= {x:02x} is refused"), r.is_err());
            }
        }
    }
    if !findings.is_empty() {
        chk.what += &format!(" — finding: {}", findings.join("; "));
    }
    chk
}

/// SUPERCOP-style checksum: hex of the first 16 bytes of SHA-256 over the outputs of
/// [`CHECKSUM_OPS`] encryptions whose lengths and data come from a sequence fixed per primitive
/// and whose key and nonce are XORed with each previous output. Messages are 1–300 bytes
/// (whole blocks for ECB/CBC, which engines take unpadded); of padded outputs only the
/// message-length prefix counts. Lengths a library refuses (empty SIV messages) stay out.
pub fn checksum(s: &mut dyn Subject) -> Result<String, String> {
    let prim = s.primitive();
    let (kl, nl, tl) = s.sizes();
    let shape = s.shape();
    let whole = prim.ends_with("-ECB") || prim.ends_with("-CBC");
    let mut rng = Rng::new(fnv(&prim));
    let (mut key, mut nonce) = (rng.bytes(kl), rng.bytes(nl));
    let mut h = Sha256::new();
    let mut bad = Vec::new();
    for i in 0..CHECKSUM_OPS {
        let mut mlen = 1 + rng.below(300);
        if whole {
            mlen = 16 * mlen.div_ceil(16);
        }
        let adlen = if shape == Shape::Aead { rng.below(64) } else { 0 };
        let (pt, ad) = (rng.bytes(mlen), rng.bytes(adlen));
        let out = s.seal(&key, &nonce, &ad, &pt, 0, &mut bad).map_err(|e| format!("operation {i}: {e}"))?;
        let used: Vec<u8> = match shape {
            Shape::Mode { .. } => out.get(..mlen).ok_or("short output")?.to_vec(),
            _ => out,
        };
        if shape == Shape::Aead && used.len() != mlen + tl {
            return Err(format!("operation {i}: output of {} bytes", used.len()));
        }
        h.update((used.len() as u64).to_le_bytes());
        h.update(&used);
        for (j, k) in key.iter_mut().chain(nonce.iter_mut()).enumerate() {
            *k ^= used[j % used.len()];
        }
    }
    Ok(hex::encode(&h.finalize()[..16]))
}

/// FNV-1a, to derive fixed seeds from names.
pub fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// One implementation's checksum result, for [`compare`].
#[derive(Clone, Debug)]
pub struct Sum {
    /// The primitive whose checksum it is.
    pub primitive: String,
    /// "cipher/implementation".
    pub id: String,
    /// The checksum (hex), or why it could not be computed.
    pub result: Result<String, String>,
}

/// One check per primitive: every implementation's checksum must be the same. A disagreement
/// names the odd ones out against the most common value.
pub fn compare(sums: &[Sum]) -> Vec<Check> {
    let mut prims: Vec<&str> = sums.iter().map(|s| s.primitive.as_str()).collect();
    prims.sort();
    prims.dedup();
    let mut out = Vec::new();
    for p in prims {
        let group: Vec<&Sum> = sums.iter().filter(|s| s.primitive == p).collect();
        let mut values: Vec<(&str, usize)> = Vec::new();
        for s in &group {
            if let Ok(v) = &s.result {
                match values.iter_mut().find(|(x, _)| x == v) {
                    Some(e) => e.1 += 1,
                    None => values.push((v, 1)),
                }
            }
        }
        values.sort_by_key(|v| std::cmp::Reverse(v.1));
        let majority = values.first().map(|v| v.0).unwrap_or("-");
        let impls: Vec<String> =
            group.iter().map(|s| s.id.rsplit_once('/').map_or(s.id.clone(), |(_, i)| i.to_string())).collect();
        let mut chk = Check::new(
            format!("checksum {p}"),
            format!(
                "checksum {majority} over {CHECKSUM_OPS} chained operations, {} implementation(s): {}",
                group.len(),
                impls.join(", ")
            ),
        );
        for s in &group {
            match &s.result {
                Ok(v) if v == majority => chk.passed += 1,
                Ok(v) => chk.fail(format!("{} gives checksum {v}, {} others give {majority}", s.id, values[0].1)),
                Err(e) => chk.fail(format!("{}: checksum sequence failed: {e}", s.id)),
            }
        }
        out.push(chk);
    }
    out
}

#[cfg(test)]
mod tests {
    use lwcbench_core::{BitOrder, CipherError, CipherInfo, Family, Language, Origin};

    use super::*;

    /// The generator is splitmix64 (Vigna); first outputs for seed 0 from the reference C code
    /// (prng.di.unimi.it/splitmix64.c), as also printed by many ports' tests.
    #[test]
    fn splitmix64_reference_outputs() {
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220a8397b1dcdaf);
        assert_eq!(r.next_u64(), 0x6e789e6aa1b965f4);
    }

    const FAKE: CipherInfo = CipherInfo {
        name: "FAKE-AEAD",
        implementation: "planted",
        family: Family::Aead,
        key_bits: 128,
        iv_bits: 96,
        block_bits: 0,
        tag_bits: 128,
        state_bytes: 0,
        origin: Origin::Own,
        language: Language::Rust,
        bit_order: BitOrder::MsbFirst,
        bit_granular: false,
        note: "",
    };

    /// A toy AEAD with a real (if insecure) MAC: ct = m XOR keystream(key, nonce), tag = a
    /// keyed FNV-style hash over nonce, AD and ciphertext. `Bug` plants one defect.
    #[derive(Clone, Copy, PartialEq)]
    enum Bug {
        None,
        AcceptsOneFlippedByte,
        WritesPastEnd,
        TagFromStaleMemory,
        ReleasesPlaintext,
    }
    struct Toy {
        key: Vec<u8>,
        bug: Bug,
    }
    impl Toy {
        fn ks(&self, nonce: &[u8], i: usize) -> u8 {
            let mut h = 0x811c9dc5u32;
            for b in self.key.iter().chain(nonce).chain(&(i as u64).to_le_bytes()) {
                h = (h ^ *b as u32).wrapping_mul(0x0100_0193);
            }
            (h >> 8) as u8
        }
        fn mac(&self, nonce: &[u8], ad: &[u8], ct: &[u8]) -> [u8; 16] {
            let mut t = [0u8; 16];
            let mut h = 0xcbf2_9ce4_8422_2325u64;
            let lens = [(ad.len() as u64).to_le_bytes(), (ct.len() as u64).to_le_bytes()].concat();
            for (i, b) in self.key.iter().chain(nonce).chain(&lens).chain(ad).chain(ct).enumerate() {
                h = (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3);
                t[i % 16] ^= (h >> 32) as u8;
            }
            // Finalisation: every tag byte depends on every input byte.
            for (j, x) in t.iter_mut().enumerate() {
                h = (h ^ j as u64).wrapping_mul(0x0100_0000_01b3);
                *x ^= (h >> 24) as u8;
            }
            t
        }
    }
    impl Aead for Toy {
        fn info(&self) -> CipherInfo {
            FAKE
        }
        fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
            self.key = key.to_vec();
            Ok(())
        }
        fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
            for (i, b) in buf.iter_mut().enumerate() {
                *b ^= self.ks(nonce, i);
            }
            let t = self.mac(nonce, ad, buf);
            for (o, x) in tag.iter_mut().zip(t) {
                *o = if self.bug == Bug::TagFromStaleMemory { *o ^ x } else { x };
            }
            if self.bug == Bug::WritesPastEnd && !buf.is_empty() {
                // Planted: one byte past the end, as a C routine with an off-by-one would.
                // The torture always passes a slice inside a larger guarded allocation.
                unsafe { *buf.as_mut_ptr().add(buf.len()) ^= 1 };
            }
            Ok(())
        }
        fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
            let t = self.mac(nonce, ad, buf);
            let diff = t.iter().zip(tag).filter(|(a, b)| a != b).count();
            let ok = diff == 0 || (self.bug == Bug::AcceptsOneFlippedByte && diff == 1);
            for (i, b) in buf.iter_mut().enumerate() {
                *b ^= self.ks(nonce, i);
            }
            if !ok {
                if self.bug != Bug::ReleasesPlaintext {
                    buf.fill(0);
                }
                return Err(CipherError::AuthenticationFailed);
            }
            Ok(())
        }
    }

    fn planted(bug: Bug) -> Check {
        // fn pointers cannot capture: one maker per bug.
        let mk: fn() -> Box<dyn Aead + Send> = match bug {
            Bug::None => || Box::new(Toy { key: vec![], bug: Bug::None }),
            Bug::AcceptsOneFlippedByte => || Box::new(Toy { key: vec![], bug: Bug::AcceptsOneFlippedByte }),
            Bug::WritesPastEnd => || Box::new(Toy { key: vec![], bug: Bug::WritesPastEnd }),
            Bug::TagFromStaleMemory => || Box::new(Toy { key: vec![], bug: Bug::TagFromStaleMemory }),
            Bug::ReleasesPlaintext => || Box::new(Toy { key: vec![], bug: Bug::ReleasesPlaintext }),
        };
        torture(&mut Local::from_aead(mk), LOOPS, 1)
    }

    #[test]
    fn the_toy_without_bugs_passes() {
        let c = planted(Bug::None);
        assert!(c.ok() && c.passed > 100, "{c:?}");
    }

    #[test]
    fn tag_check_accepting_one_flipped_byte_is_caught() {
        let c = planted(Bug::AcceptsOneFlippedByte);
        assert!(!c.ok(), "{c:?}");
        assert!(c.failures.iter().any(|f| f.contains("tag byte") && f.contains("is refused")), "{:?}", c.failures);
        // Ciphertext, nonce and AD flips change many tag bytes at once, so only tag flips slip through.
        assert!(c.failures.iter().all(|f| f.contains("tag byte")), "{:?}", c.failures);
    }

    #[test]
    fn write_one_byte_past_the_end_is_caught() {
        let c = planted(Bug::WritesPastEnd);
        assert!(c.failures.iter().any(|f| f.contains("write outside the message buffer")), "{:?}", c.failures);
    }

    #[test]
    fn output_depending_on_previous_memory_is_caught() {
        let c = planted(Bug::TagFromStaleMemory);
        assert!(c.failures.iter().any(|f| f.contains("second identical call")), "{:?}", c.failures);
    }

    #[test]
    fn plaintext_released_on_refusal_is_caught() {
        let c = planted(Bug::ReleasesPlaintext);
        assert!(c.failures.iter().any(|f| f.contains("refused decryption left")), "{:?}", c.failures);
    }

    /// A stream cipher whose keystream XORs into the output buffer instead of overwriting it.
    #[derive(Default)]
    struct XorsIntoOutput(u8);
    impl StreamCipher for XorsIntoOutput {
        fn info(&self) -> CipherInfo {
            CipherInfo { name: "FAKE-STREAM", family: Family::Stream, tag_bits: 0, ..FAKE }
        }
        fn init(&mut self, key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
            self.0 = key[0] | 1;
            Ok(())
        }
        fn keystream_bits(&mut self, out: &mut [u8], nbits: usize) -> Result<(), CipherError> {
            for b in out[..nbits / 8].iter_mut() {
                self.0 = self.0.wrapping_mul(5).wrapping_add(1);
                *b ^= self.0; // planted: should be `=`
            }
            Ok(())
        }
        fn apply_bits(&mut self, data: &mut [u8], nbits: usize) -> Result<(), CipherError> {
            self.keystream_bits(data, nbits)
        }
    }

    #[test]
    fn keystream_depending_on_stale_output_bytes_is_caught() {
        let c = torture(&mut Local::from_stream(|| Box::new(XorsIntoOutput::default())), LOOPS, 1);
        assert!(c.failures.iter().any(|f| f.contains("in-place apply differs")), "{:?}", c.failures);
    }

    /// Every in-process implementation passes; runs the same code `lwcbench verify` runs.
    #[test]
    fn every_registered_implementation_survives_and_checksums_agree() {
        let mut sums = Vec::new();
        for e in crate::registry() {
            let Some(mut s) = Local::new(&e) else { continue };
            let c = torture(&mut s, 4, 7);
            assert!(c.ok(), "{}: {:?}", e.id(), c.failures);
            sums.push(Sum { primitive: s.primitive(), id: s.id(), result: checksum(&mut s) });
        }
        let checks = compare(&sums);
        for c in &checks {
            assert!(c.ok(), "{}: {} {:?}", c.id, c.what, c.failures);
        }
        // The AES primitives have several independent libraries: the agreement is a real check.
        let gcm = checks.iter().find(|c| c.id == "checksum AES-128-GCM").expect("AES-128-GCM");
        assert!(gcm.passed >= 2, "{gcm:?}");
    }

    #[test]
    fn a_disagreeing_checksum_is_named() {
        let s = |id: &str, v: &str| Sum { primitive: "P".into(), id: id.into(), result: Ok(v.into()) };
        let c = compare(&[s("P/a", "11"), s("P/b", "11"), s("P/c", "22")]);
        assert!(!c[0].ok() && c[0].failures[0].starts_with("P/c gives checksum 22"), "{c:?}");
    }
}
