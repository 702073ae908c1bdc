//! Which catalogue ciphers protect the link, and how.
//!
//! * AEADs from the catalogue are used as they are: nonce from [`crate::wire::frame::nonce`], associated
//!   data = the 15-byte frame header, the cipher's own tag.
//! * Stream ciphers get integrity from **this project's composition** (not the cipher's own
//!   design): per message the cipher is initialised with (device key, nonce); keystream bytes
//!   0..32 are a one-time Poly1305 key (r ‖ s), bytes 32..64 are discarded, the reading is
//!   XORed with keystream from byte 64 on, and the 16-byte tag is Poly1305 over
//!   `AD ‖ pad16 ‖ CT ‖ pad16 ‖ le64(|AD|) ‖ le64(|CT|)` — RFC 8439 §2.6/§2.8 with the stream
//!   cipher in place of ChaCha20. With ChaCha20 it is exactly RFC 8439's AEAD (a test checks that).
//! * Confidentiality only (no tag) exists for stream ciphers behind an explicit unsafe flag.
//! * An AEAD whose nonce is 192 bits or longer (XChaCha20-Poly1305) takes a **random nonce per
//!   frame** from the OS RNG, carried right after the header (and its extension) and before the
//!   ciphertext: unique nonces then do not depend on the counter state surviving (VM snapshots,
//!   restored images). The counter stays in the header for replay protection.
use lwcbench_catalog::{Entry, Make};
use lwcbench_core::{Aead, StreamCipher};
use poly1305::universal_hash::{KeyInit, UniversalHash};
use zeroize::{Zeroize, Zeroizing};

use crate::wire::frame::{self, Header, Proto, HEADER_LEN};
use crate::wire::keys::KeySource;

/// Smallest key the link takes without `--unsafe-short-key`, in bits (NIST SP 800-131A's floor).
pub const MIN_KEY_BITS: usize = 112;

/// How a suite protects a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The catalogue AEAD, unchanged.
    Aead,
    /// Stream cipher + one-time Poly1305 key from its keystream (this project's composition).
    StreamPoly1305,
}

/// The suite whose frames the gateway opens in bit-sliced batches (DRACO/rust-fast).
pub const DRACO_BATCH_SUITE: u8 = 32;

/// Tag length of the Poly1305 composition.
pub const POLY_TAG: usize = 16;
/// Keystream bytes used before the reading: 32 for the Poly1305 key, 32 discarded.
pub const STREAM_SKIP: usize = 64;
/// The catalogue ciphers whose nonce each frame draws at random and carries: XChaCha20-Poly1305
/// is designed for it (192 bits: a collision among 2^64 random nonces has probability about
/// 2^-65, where 96-bit random nonces stop at 2^32 messages per key, NIST SP 800-38D §8.3).
/// Named, not inferred from the nonce length: SCHWAEMM256-128's 256-bit nonce keeps the
/// (counter, device) nonce its link id has always had.
pub const RANDOM_NONCE_CIPHERS: &[&str] = &["XChaCha20-Poly1305"];

/// One cipher the link can use.
#[derive(Clone)]
pub struct Suite {
    /// The cipher id on the wire.
    pub id: u8,
    /// How it protects a frame.
    pub kind: Kind,
    /// Its catalogue entry.
    pub entry: Entry,
}

impl Suite {
    /// "cipher/implementation" as the catalogue names it.
    pub fn name(&self) -> String {
        self.entry.id()
    }
    /// Key length in bytes.
    pub fn key_len(&self) -> usize {
        self.entry.info.key_bytes()
    }
    /// Nonce bytes the cipher takes per message (from [`crate::wire::frame::nonce`], or random:
    /// [`Suite::random_nonce_len`]).
    pub fn nonce_len(&self) -> usize {
        self.entry.info.iv_bytes()
    }
    /// Bytes of the random nonce each frame carries after its header ([`RANDOM_NONCE_CIPHERS`]:
    /// its whole nonce), 0 for the suites whose nonce comes from (counter, device).
    pub fn random_nonce_len(&self) -> usize {
        let random = RANDOM_NONCE_CIPHERS.iter().any(|n| self.entry.info.name.eq_ignore_ascii_case(n));
        if self.kind == Kind::Aead && random {
            self.nonce_len()
        } else {
            0
        }
    }
    /// Whether each frame carries a random nonce ([`Suite::random_nonce_len`] > 0).
    pub fn takes_random_nonce(&self) -> bool {
        self.random_nonce_len() > 0
    }
    /// Bytes a seal adds after the header it is given: the random nonce (if any) and the tag.
    pub fn nonce_and_tag_len(&self, unauthenticated: bool) -> usize {
        self.random_nonce_len() + self.tag_len(unauthenticated)
    }
    /// Tag bytes on the wire (0 in the unsafe confidentiality-only mode).
    pub fn tag_len(&self, unauthenticated: bool) -> usize {
        match (self.kind, unauthenticated) {
            (_, true) => 0,
            (Kind::Aead, false) => self.entry.info.tag_bytes(),
            (Kind::StreamPoly1305, false) => POLY_TAG,
        }
    }
    /// Frame bytes beyond the plaintext reading (header, random nonce, tag).
    pub fn overhead(&self, unauthenticated: bool) -> usize {
        HEADER_LEN + self.nonce_and_tag_len(unauthenticated)
    }
    /// Whether this is the provisional DRACO reconstruction (gated: `crate::wire::gate`).
    pub fn is_provisional(&self) -> bool {
        self.entry.info.name.eq_ignore_ascii_case("DRACO")
    }
    /// Whether its key is shorter than [`MIN_KEY_BITS`] (gated: `crate::wire::gate`).
    pub fn is_short_key(&self) -> bool {
        self.key_len() * 8 < MIN_KEY_BITS
    }
    /// The gate's labels ("PROVISIONAL", "UNSAFE short key"), empty for the others; here, not in
    /// the gate module, so that module depends on this one and not both ways.
    pub fn labels(&self) -> Vec<&'static str> {
        let mut l = Vec::new();
        if self.is_provisional() {
            l.push("PROVISIONAL");
        }
        if self.is_short_key() {
            l.push("UNSAFE short key");
        }
        l
    }
    /// How integrity is obtained, for every output; a gated suite's labels come first.
    pub fn protection(&self, unauthenticated: bool) -> String {
        let how = match (self.kind, unauthenticated) {
            (_, true) => "UNSAFE: confidentiality only, no integrity (forged frames are accepted)",
            (Kind::Aead, false) => "the cipher's own AEAD",
            (Kind::StreamPoly1305, false) => {
                "this project's composition: stream cipher + one-time Poly1305 key (RFC 8439 style)"
            }
        };
        let labels = self.labels();
        if labels.is_empty() {
            how.to_string()
        } else {
            format!("{}: {how}", labels.join(", "))
        }
    }
}

/// Every suite whose catalogue entry exists in this build (native libraries may be absent):
/// the entries with a link number (`Entry::link_id`), in the catalogue's link order.
pub fn offered() -> Vec<Suite> {
    let reg = lwcbench_catalog::registry();
    lwcbench_catalog::link_ids::LINK_IDS
        .iter()
        .filter_map(|&(id, name)| {
            let e = reg.iter().find(|e| e.id() == name)?;
            let kind = match e.info.family {
                lwcbench_core::Family::Aead => Kind::Aead,
                lwcbench_core::Family::Stream => Kind::StreamPoly1305,
                // the catalogue's test keeps block ciphers and modes out of the link table
                lwcbench_core::Family::Block | lwcbench_core::Family::Mode => return None,
            };
            Some(Suite { id, kind, entry: e.clone() })
        })
        .collect()
}

/// A suite by user selector: "name/impl", a bare name (first implementation in the table), or a number.
pub fn find(sel: &str) -> Result<Suite, String> {
    let all = offered();
    let s = sel.trim();
    let hit = all
        .iter()
        .find(|x| x.name().eq_ignore_ascii_case(s) || s.parse::<u8>().ok() == Some(x.id))
        .or_else(|| all.iter().find(|x| x.entry.info.name.eq_ignore_ascii_case(s)));
    hit.cloned().ok_or_else(|| {
        let names: Vec<String> = all.iter().map(|x| x.name()).collect();
        format!("--cipher: '{sel}' is not a link cipher (offered: {})", names.join(", "))
    })
}

/// docs/link.md's "Cipher ids" table: one row per offered suite (id, cipher, key, nonce and tag
/// bytes, protection); a test keeps the document equal to it.
pub fn markdown_table(suites: &[Suite]) -> String {
    let mut t = String::from("| id | cipher | key B | nonce B | tag B | protection |\n|---:|---|---:|---:|---:|---|\n");
    for s in suites {
        let protection = match s.kind {
            Kind::Aead if s.takes_random_nonce() => {
                format!("the cipher's AEAD; random {}-byte nonce in each frame", s.random_nonce_len())
            }
            Kind::Aead if s.entry.info.name.ends_with("GCM-SIV") => {
                "the cipher's AEAD; nonce-misuse-resistant (RFC 8452)".to_string()
            }
            Kind::Aead => "the cipher's AEAD".to_string(),
            Kind::StreamPoly1305 => "stream + Poly1305 (this project's composition)".to_string(),
        };
        t += &format!(
            "| {} | {} | {} | {} | {} | {protection} |\n",
            s.id,
            s.name(),
            s.key_len(),
            s.nonce_len(),
            s.tag_len(false)
        );
    }
    t
}

/// The suite of a cipher id (None: no such link cipher).
pub fn by_id(id: u8) -> Option<Suite> {
    offered().into_iter().find(|s| s.id == id)
}

enum Inst {
    Aead(Box<dyn Aead + Send>),
    Stream(Box<dyn StreamCipher + Send>, Zeroizing<Vec<u8>>),
}

/// Why a frame did not open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// Shorter than header + tag, or the cipher refused its shape.
    Malformed,
    /// Tag check failed.
    BadTag,
}

/// One device's cipher instance under its key; seals (device side) and opens (gateway side).
pub struct Keyed {
    /// The cipher.
    pub suite: Suite,
    /// The frames' type (written by [`Keyed::seal`]; the key is this protocol's).
    pub proto: Proto,
    inst: Inst,
    unauthenticated: bool,
    nonce: Vec<u8>,
}

/// The composition's tag check, constant time through `subtle` (as the RustCrypto AEADs compare
/// theirs): the comparison neither exits early nor lets the optimiser turn the result into a
/// branch on the first differing byte. Unequal lengths are unequal (a length is public).
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    a.ct_eq(b).into()
}

impl Keyed {
    /// The instance of `suite` under the cipher key of (`proto`, `device`) from `key` (a master
    /// gives any device's; a device key its own only).
    pub fn derived(
        suite: &Suite,
        key: &impl KeySource,
        proto: Proto,
        device: u32,
        unauthenticated: bool,
    ) -> Result<Keyed, String> {
        Keyed::new(suite, &key.cipher_key(proto, device, suite.id, suite.key_len())?, proto, unauthenticated)
    }

    /// The instance of `suite` under the raw cipher key `key`.
    pub fn new(suite: &Suite, key: &[u8], proto: Proto, unauthenticated: bool) -> Result<Keyed, String> {
        if unauthenticated && suite.kind == Kind::Aead {
            return Err(format!(
                "--unsafe-no-integrity: {} is an AEAD; the confidentiality-only mode exists only for stream ciphers",
                suite.name()
            ));
        }
        let inst = match suite.entry.make {
            Some(Make::Aead(mk)) => {
                let mut a = mk();
                a.set_key(key).map_err(|e| format!("{}: {e}", suite.name()))?;
                Inst::Aead(a)
            }
            Some(Make::Stream(mk)) => {
                if key.len() != suite.key_len() {
                    return Err(format!("{}: key must be {} bytes, got {}", suite.name(), suite.key_len(), key.len()));
                }
                Inst::Stream(mk(), Zeroizing::new(key.to_vec()))
            }
            _ => return Err(format!("{} is neither an AEAD nor a stream cipher", suite.name())),
        };
        let nonce = vec![0u8; suite.entry.info.iv_bytes()];
        Ok(Keyed { suite: suite.clone(), proto, inst, unauthenticated, nonce })
    }

    /// The tag's length in bytes (0 for frames without integrity).
    pub fn tag_len(&self) -> usize {
        self.suite.tag_len(self.unauthenticated)
    }

    /// Bytes a seal adds after the header: the random nonce (if the suite takes one) and the tag.
    pub fn nonce_and_tag_len(&self) -> usize {
        self.suite.nonce_and_tag_len(self.unauthenticated)
    }

    /// A fresh random nonce, straight from the OS (`getrandom`), not a user-space generator
    /// whose state a restored snapshot would replay.
    fn draw_nonce(&mut self) -> Result<(), String> {
        use rand::TryRngCore;
        rand::rngs::OsRng.try_fill_bytes(&mut self.nonce).map_err(|e| format!("OS random generator: {e}"))
    }

    fn set_nonce(&mut self, device: u32, counter: u64) {
        frame::nonce(device, counter, &mut self.nonce);
        if let Some(rule) = self.suite.entry.iv_rule {
            rule(&mut self.nonce);
        }
    }

    /// Stream path: init, split off the Poly1305 key, position the keystream at byte 64.
    fn stream_start(
        c: &mut (dyn StreamCipher + Send),
        key: &[u8],
        nonce: &[u8],
    ) -> Result<Zeroizing<[u8; 32]>, OpenError> {
        c.init(key, nonce).map_err(|_| OpenError::Malformed)?;
        let mut ks = Zeroizing::new([0u8; STREAM_SKIP]);
        c.keystream(&mut ks[..]).map_err(|_| OpenError::Malformed)?;
        let mut pk = Zeroizing::new([0u8; 32]);
        pk.copy_from_slice(&ks[..32]);
        Ok(pk)
    }

    fn poly_tag(pk: &[u8; 32], ad: &[u8], ct: &[u8]) -> [u8; 16] {
        let mut key = poly1305::Key::from(*pk);
        let mut p = poly1305::Poly1305::new(&key);
        key.zeroize();
        p.update_padded(ad);
        p.update_padded(ct);
        let mut lens = [0u8; 16];
        lens[..8].copy_from_slice(&(ad.len() as u64).to_le_bytes());
        lens[8..].copy_from_slice(&(ct.len() as u64).to_le_bytes());
        p.update_padded(&lens);
        p.finalize().into()
    }

    /// Append the frame for (device, counter, reading) to `out` (cleared first).
    pub fn seal(&mut self, device: u32, counter: u64, reading: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let flags = if self.unauthenticated { frame::FLAG_UNAUTHENTICATED } else { 0 };
        let hdr = Header::new(self.proto, self.suite.id, flags, device, counter).encode();
        self.seal_with_header(&hdr, device, counter, reading, out)
    }

    /// `out` = `head` ‖ ciphertext ‖ tag, with `head` (the header and its extension) as the
    /// associated data and the nonce of (device, counter); for a suite with a random nonce,
    /// `out` = `head` ‖ nonce ‖ ciphertext ‖ tag with a nonce drawn now.
    pub fn seal_with_header(
        &mut self,
        hdr: &[u8],
        device: u32,
        counter: u64,
        reading: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        if counter > frame::MAX_COUNTER {
            return Err(format!("device {device}: counter space exhausted"));
        }
        let rn = self.suite.random_nonce_len();
        if rn > 0 {
            self.draw_nonce()?;
        } else {
            self.set_nonce(device, counter);
        }
        let tl = self.tag_len();
        out.clear();
        out.extend_from_slice(hdr);
        out.extend_from_slice(&self.nonce[..rn]);
        out.extend_from_slice(reading);
        out.resize(hdr.len() + rn + reading.len() + tl, 0);
        let (head, rest) = out.split_at_mut(hdr.len());
        let (body, tag) = rest[rn..].split_at_mut(reading.len());
        match &mut self.inst {
            Inst::Aead(a) => a.encrypt(&self.nonce, head, body, tag).map_err(|e| format!("{}: {e}", self.suite.name())),
            Inst::Stream(c, key) => {
                let pk = Self::stream_start(c.as_mut(), key, &self.nonce)
                    .map_err(|_| format!("{}: stream cipher refused key/IV", self.suite.name()))?;
                c.apply(body).map_err(|e| format!("{}: {e}", self.suite.name()))?;
                if !self.unauthenticated {
                    tag.copy_from_slice(&Self::poly_tag(&pk, head, body));
                }
                Ok(())
            }
        }
    }

    /// For the gateway's batch opener (`Gateway::open_many`): the device key and this frame's
    /// nonce, if this is the authenticated DRACO/rust-fast composition (16-byte key, 12-byte
    /// nonce) — the one `lwcbench_draco::batch` opens bit-sliced, byte for byte the same
    /// construction as [`Keyed::open`].
    pub(crate) fn draco_batch_parts(&mut self, h: &Header) -> Option<(Zeroizing<[u8; 16]>, [u8; 12])> {
        if self.unauthenticated || self.suite.id != DRACO_BATCH_SUITE {
            return None;
        }
        let Inst::Stream(_, key) = &self.inst else { return None };
        let key = Zeroizing::new(<[u8; 16]>::try_from(key.as_slice()).ok()?);
        self.set_nonce(h.device, h.counter);
        let iv: [u8; 12] = self.nonce.as_slice().try_into().ok()?;
        Some((key, iv))
    }

    /// Check and decrypt a whole frame whose header was parsed as `h`; returns the reading.
    pub fn open(&mut self, h: &Header, frame: &[u8]) -> Result<Vec<u8>, OpenError> {
        self.open_with_header(HEADER_LEN, h.device, h.counter, frame)
    }

    /// Check and decrypt a frame whose first `head_len` bytes are its header (the associated
    /// data), sealed under the nonce of (device, counter), or under the random nonce that
    /// follows the header for a suite that takes one.
    pub fn open_with_header(
        &mut self,
        head_len: usize,
        device: u32,
        counter: u64,
        frame: &[u8],
    ) -> Result<Vec<u8>, OpenError> {
        let tl = self.tag_len();
        let rn = self.suite.random_nonce_len();
        if frame.len() < head_len + rn + tl {
            return Err(OpenError::Malformed);
        }
        let (head, rest) = frame.split_at(head_len);
        if rn > 0 {
            self.nonce.copy_from_slice(&rest[..rn]);
        } else {
            self.set_nonce(device, counter);
        }
        let rest = &rest[rn..];
        let (body, tag) = rest.split_at(rest.len() - tl);
        let mut buf = body.to_vec();
        match &mut self.inst {
            Inst::Aead(a) => match a.decrypt(&self.nonce, head, &mut buf, tag) {
                Ok(()) => Ok(buf),
                Err(lwcbench_core::CipherError::AuthenticationFailed) => Err(OpenError::BadTag),
                Err(_) => Err(OpenError::Malformed),
            },
            Inst::Stream(c, key) => {
                let pk = Self::stream_start(c.as_mut(), key, &self.nonce)?;
                if !self.unauthenticated && !ct_eq(&Self::poly_tag(&pk, head, body), tag) {
                    return Err(OpenError::BadTag);
                }
                c.apply(&mut buf).map_err(|_| OpenError::Malformed)?;
                Ok(buf)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEGIN: &str = "<!-- cipher-ids: generated from the suites; LWCBENCH_BLESS=1 cargo test --release -p lwcbench-link docs_cipher_table rewrites it -->\n";
    const END: &str = "<!-- end cipher-ids -->";

    /// docs/link.md states every cipher id's key, nonce and tag length as the suites define them
    /// (a client written from the document must frame exactly what the gateway opens).
    #[test]
    fn docs_cipher_table_is_the_suites() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/link.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let a = doc.find(BEGIN).expect("docs/link.md has the cipher-ids markers") + BEGIN.len();
        let b = a + doc[a..].find(END).expect("end marker");
        let want = markdown_table(&offered());
        if std::env::var_os("LWCBENCH_BLESS").is_some() {
            std::fs::write(&path, format!("{}{want}{}", &doc[..a], &doc[b..])).unwrap();
            return;
        }
        assert_eq!(offered().len(), lwcbench_catalog::link_ids::LINK_IDS.len(), "every link id is built here");
        assert_eq!(&doc[a..b], want, "docs/link.md \"Cipher ids\" differs from the suites (bless to rewrite)");
    }

    /// Lengths a client needs, from the ciphers' specifications: AES-128-CCM as the link uses it
    /// takes a 12-byte nonce and a 16-byte tag, TinyJAMBU-128 an 8-byte tag (NIST LWC
    /// submission), Trivium an 80-bit IV, Salsa20 a 64-bit nonce, and a stream cipher's tag is
    /// the 16-byte Poly1305 tag (RFC 8439).
    #[test]
    fn published_lengths() {
        let len = |n: &str| {
            let s = find(n).unwrap();
            (s.key_len(), s.nonce_len(), s.tag_len(false))
        };
        assert_eq!(len("AES-128-CCM/rustcrypto"), (16, 12, 16));
        assert_eq!(len("ChaCha20-Poly1305/rustcrypto"), (32, 12, 16));
        assert_eq!(len("TinyJAMBU-128/rust-ref").2, 8);
        assert_eq!(len("Trivium/rust"), (10, 10, 16));
        assert_eq!(len("Salsa20/rustcrypto"), (32, 8, 16));
    }
    use chacha20poly1305::aead::AeadInOut;

    fn rfc8439(key: &[u8; 32], nonce: &[u8; 12], ad: &[u8], pt: &[u8]) -> Vec<u8> {
        let c = chacha20poly1305::ChaCha20Poly1305::new(key.into());
        let mut buf = pt.to_vec();
        let tag = c.encrypt_inout_detached(nonce.into(), ad, buf.as_mut_slice().into()).unwrap();
        buf.extend_from_slice(&tag);
        buf
    }

    /// The composition with ChaCha20 as the stream cipher is RFC 8439's AEAD: checked against
    /// the RustCrypto chacha20poly1305 crate called directly (independent of the composition code).
    #[test]
    fn stream_composition_with_chacha20_is_rfc8439() {
        let s = find("ChaCha20/rustcrypto").unwrap();
        assert_eq!(s.kind, Kind::StreamPoly1305);
        let key = [0x42u8; 32];
        let mut k = Keyed::new(&s, &key, Proto::Sensor, false).unwrap();
        for len in [0usize, 1, 15, 16, 17, 64, 100] {
            let reading: Vec<u8> = (0..len as u8).collect();
            let mut f = Vec::new();
            k.seal(0xDEAD_BEEF, 77 + len as u64, &reading, &mut f).unwrap();
            let mut nonce = [0u8; 12];
            crate::wire::frame::nonce(0xDEAD_BEEF, 77 + len as u64, &mut nonce);
            assert_eq!(&f[HEADER_LEN..], rfc8439(&key, &nonce, &f[..HEADER_LEN], &reading), "len {len}");
            let h = Header::parse(&f).unwrap();
            assert_eq!(k.open(&h, &f).unwrap(), reading);
        }
    }

    /// The AEAD path of ChaCha20-Poly1305 (catalogue adapter) equals the crate called directly.
    #[test]
    fn aead_path_chacha20poly1305_matches_crate() {
        let s = find("ChaCha20-Poly1305/rustcrypto").unwrap();
        let key = [9u8; 32];
        let mut k = Keyed::new(&s, &key, Proto::Sensor, false).unwrap();
        let mut f = Vec::new();
        k.seal(5, 1234, b"reading", &mut f).unwrap();
        let mut nonce = [0u8; 12];
        crate::wire::frame::nonce(5, 1234, &mut nonce);
        assert_eq!(&f[..HEADER_LEN], &[3, 1, 11, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0x04, 0xD2]);
        assert_eq!(&f[HEADER_LEN..], rfc8439(&key, &nonce, &f[..HEADER_LEN], b"reading"));
    }

    #[test]
    fn every_suite_roundtrips_and_refuses_changes() {
        let all = offered();
        assert!(all.len() >= 10, "only {} suites", all.len());
        for s in &all {
            let key: Vec<u8> = (0..s.key_len() as u8).collect();
            let mut k = Keyed::new(s, &key, Proto::Sensor, false).unwrap();
            let reading = b"0123456789abcdefghij".to_vec();
            let mut f = Vec::new();
            k.seal(3, 10, &reading, &mut f).unwrap();
            assert_eq!(f.len() - reading.len(), s.overhead(false), "{}", s.name());
            assert_ne!(&f[HEADER_LEN..HEADER_LEN + reading.len()], &reading[..], "{} did not encrypt", s.name());
            let h = Header::parse(&f).unwrap();
            assert_eq!(k.open(&h, &f).unwrap(), reading, "{}", s.name());
            for i in [0, 3, 7, 14, HEADER_LEN, f.len() - 1] {
                let mut g = f.clone();
                g[i] ^= 0x01;
                assert_eq!(k.open(&h, &g), Err(OpenError::BadTag), "{} byte {i}", s.name());
            }
            let other: Vec<u8> = key.iter().map(|b| b ^ 0xff).collect();
            let mut k2 = Keyed::new(s, &other, Proto::Sensor, false).unwrap();
            assert_eq!(k2.open(&h, &f), Err(OpenError::BadTag), "{} other key", s.name());
            assert_eq!(k.open(&h, &f[..f.len() - 1]).ok(), None, "{} truncated", s.name());
            // Different counters give different ciphertexts (the nonce changes).
            let mut f2 = Vec::new();
            k.seal(3, 11, &reading, &mut f2).unwrap();
            assert_ne!(f[HEADER_LEN..], f2[HEADER_LEN..], "{}", s.name());
        }
    }

    /// A frame whose composition tag differs from the genuine one in any single byte (first,
    /// middle, last; every bit of each) is refused as a bad tag, and the genuine frame opens.
    #[test]
    fn composition_refuses_a_tag_differing_in_one_byte() {
        for name in ["ChaCha20/rustcrypto", "Trivium/rust", "DRACO/rust-ref"] {
            let s = find(name).unwrap();
            assert_eq!(s.kind, Kind::StreamPoly1305);
            let key: Vec<u8> = (0..s.key_len() as u8).collect();
            let mut k = Keyed::new(&s, &key, Proto::Sensor, false).unwrap();
            let mut frame = Vec::new();
            k.seal(7, 42, b"reading 21.5 C", &mut frame).unwrap();
            let h = Header::parse(&frame).unwrap();
            assert_eq!(k.open(&h, &frame).unwrap(), b"reading 21.5 C");
            let tag_at = frame.len() - POLY_TAG;
            for pos in [tag_at, tag_at + POLY_TAG / 2, frame.len() - 1] {
                for bit in 0..8 {
                    let mut bad = frame.clone();
                    bad[pos] ^= 1 << bit;
                    assert_eq!(k.open(&h, &bad), Err(OpenError::BadTag), "{name}: byte {pos} bit {bit}");
                }
            }
        }
        // the comparison itself: equal, one byte off anywhere, and a length mismatch
        let t = [0x5au8; 16];
        assert!(ct_eq(&t, &t));
        for i in 0..16 {
            let mut u = t;
            u[i] ^= 0x80;
            assert!(!ct_eq(&t, &u), "byte {i}");
        }
        assert!(!ct_eq(&t, &t[..15]));
        assert!(!ct_eq(&[], &t));
    }

    const MISUSE: [&str; 3] =
        ["AES-128-GCM-SIV/rustcrypto", "AES-256-GCM-SIV/rustcrypto", "XChaCha20-Poly1305/rustcrypto"];

    /// The misuse-resistant suites' ids and lengths (RFC 8452: 12-byte nonce, 16-byte tag;
    /// draft-irtf-cfrg-xchacha: 24-byte nonce, carried in the frame since it is random).
    #[test]
    fn misuse_resistant_suites_are_offered() {
        let got: Vec<_> = MISUSE
            .iter()
            .map(|n| {
                let s = find(n).unwrap();
                (s.id, s.key_len(), s.nonce_len(), s.random_nonce_len(), s.tag_len(false), s.overhead(false))
            })
            .collect();
        assert_eq!(got, [(19, 16, 12, 0, 16, 32), (20, 32, 12, 0, 16, 32), (21, 32, 24, 24, 16, 56)]);
        assert!(find("XChaCha20-Poly1305").unwrap().takes_random_nonce());
        assert!(!find("ChaCha20-Poly1305").unwrap().takes_random_nonce());
        // no other suite draws its nonce at random
        let random: Vec<String> = offered().iter().filter(|s| s.takes_random_nonce()).map(|s| s.name()).collect();
        assert_eq!(random, ["XChaCha20-Poly1305/rustcrypto"]);
    }

    /// An XChaCha20-Poly1305 frame is header ‖ random 24-byte nonce ‖ ciphertext ‖ tag: two
    /// seals of one (device, counter) carry different nonces, and each opens with the
    /// `chacha20poly1305` crate called directly (nonce from the wire, the header as AD).
    #[test]
    fn xchacha_frame_carries_a_random_nonce_and_opens_with_the_crate() {
        use chacha20poly1305::aead::{Aead as _, KeyInit as _, Payload};
        let s = find("XChaCha20-Poly1305").unwrap();
        let key = [0x5Au8; 32];
        let mut k = Keyed::new(&s, &key, Proto::Sensor, false).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        k.seal(9, 500, b"reading 21.5 C", &mut a).unwrap();
        k.seal(9, 500, b"reading 21.5 C", &mut b).unwrap();
        assert_eq!(a.len(), HEADER_LEN + 24 + 14 + 16);
        assert_eq!(&a[..HEADER_LEN], &[3, 1, 21, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0x01, 0xF4]);
        assert_eq!(a[..HEADER_LEN], b[..HEADER_LEN]);
        assert_ne!(a[HEADER_LEN..HEADER_LEN + 24], b[HEADER_LEN..HEADER_LEN + 24], "the nonce repeated");
        assert_ne!(a[HEADER_LEN + 24..], b[HEADER_LEN + 24..]);
        let x = chacha20poly1305::XChaCha20Poly1305::new(&key.into());
        for f in [&a, &b] {
            let nonce = chacha20poly1305::XNonce::try_from(&f[HEADER_LEN..HEADER_LEN + 24]).unwrap();
            let pt = x.decrypt(&nonce, Payload { msg: &f[HEADER_LEN + 24..], aad: &f[..HEADER_LEN] }).unwrap();
            assert_eq!(pt, b"reading 21.5 C");
            // and the crate's own seal under that nonce is the frame's body
            let ct = x.encrypt(&nonce, Payload { msg: b"reading 21.5 C", aad: &f[..HEADER_LEN] }).unwrap();
            assert_eq!(f[HEADER_LEN + 24..], ct[..]);
            assert_eq!(k.open(&Header::parse(f).unwrap(), f).unwrap(), b"reading 21.5 C");
        }
    }

    /// An AES-GCM-SIV frame is header ‖ ciphertext ‖ tag under the (counter, device) nonce,
    /// equal to the `aes-gcm-siv` crate called directly with the header as AD.
    #[test]
    fn gcm_siv_frames_equal_the_crate() {
        use aes_gcm_siv::aead::{Aead as _, KeyInit as _, Payload};
        let mut nonce = [0u8; 12];
        crate::wire::frame::nonce(0x0102_0304, 77, &mut nonce);
        let reading = b"temperature 19.25";
        for (name, key_len) in [("AES-128-GCM-SIV", 16usize), ("AES-256-GCM-SIV", 32)] {
            let s = find(name).unwrap();
            let key: Vec<u8> = (0..key_len as u8).map(|i| i.wrapping_mul(29)).collect();
            let mut k = Keyed::new(&s, &key, Proto::Sensor, false).unwrap();
            let mut f = Vec::new();
            k.seal(0x0102_0304, 77, reading, &mut f).unwrap();
            let want = if key_len == 16 {
                aes_gcm_siv::Aes128GcmSiv::new_from_slice(&key)
                    .unwrap()
                    .encrypt(&nonce.into(), Payload { msg: reading, aad: &f[..HEADER_LEN] })
            } else {
                aes_gcm_siv::Aes256GcmSiv::new_from_slice(&key)
                    .unwrap()
                    .encrypt(&nonce.into(), Payload { msg: reading, aad: &f[..HEADER_LEN] })
            }
            .unwrap();
            assert_eq!(f[HEADER_LEN..], want[..], "{name}");
            assert_eq!(f.len(), HEADER_LEN + reading.len() + 16);
        }
    }

    /// Every byte of a misuse-resistant suite's frame (header, random nonce, ciphertext, tag)
    /// flipped is refused, and so is every truncation.
    #[test]
    fn misuse_resistant_frames_refuse_every_changed_byte() {
        for name in MISUSE {
            let s = find(name).unwrap();
            let key = vec![3u8; s.key_len()];
            let mut k = Keyed::new(&s, &key, Proto::Sensor, false).unwrap();
            let mut f = Vec::new();
            k.seal(4, 8, b"0123456789", &mut f).unwrap();
            let h = Header::parse(&f).unwrap();
            assert_eq!(k.open(&h, &f).unwrap(), b"0123456789");
            for i in 0..f.len() {
                let mut g = f.clone();
                g[i] ^= 0x01;
                // a changed header is read as another (device, counter): the receiver's view
                let hg = Header::parse(&g).unwrap_or(h);
                assert!(k.open(&hg, &g).is_err(), "{name}: byte {i} flipped was accepted");
            }
            for n in 0..f.len() {
                assert!(k.open(&h, &f[..n]).is_err(), "{name}: cut to {n} bytes was accepted");
            }
        }
    }

    /// Every ordered pair of protocols: a frame sealed for one (same master, device, counter
    /// and reading) does not open as the other's, neither as sent nor with its type byte
    /// rewritten to the other's (the key differs by the usage label and the AD by the type).
    #[test]
    fn a_frame_of_one_protocol_never_opens_in_another() {
        let m = crate::wire::keys::MasterKey::from_bytes([5; 32]);
        for name in ["Ascon-AEAD128", "ChaCha20/rustcrypto", "AES-128-GCM"] {
            let s = find(name).unwrap();
            for p in Proto::ALL {
                let mut sealer = Keyed::derived(&s, &m, p, 9, false).unwrap();
                let mut f = Vec::new();
                sealer.seal(9, 77, b"reading", &mut f).unwrap();
                let h = Header::parse(&f).unwrap();
                assert_eq!(sealer.open(&h, &f).unwrap(), b"reading", "{name} {p:?}");
                for q in Proto::ALL.into_iter().filter(|&q| q != p) {
                    let mut opener = Keyed::derived(&s, &m, q, 9, false).unwrap();
                    assert_eq!(opener.open(&h, &f), Err(OpenError::BadTag), "{name}: {p:?} opened as {q:?}");
                    let mut g = f.clone();
                    g[frame::AT_TYPE] = q as u8;
                    let hg = Header::parse(&g).unwrap();
                    assert_eq!(opener.open(&hg, &g), Err(OpenError::BadTag), "{name}: {p:?} relabelled {q:?}");
                }
            }
        }
    }

    #[test]
    fn unsafe_mode_only_for_stream_ciphers_and_has_no_tag() {
        let a = find("Ascon-AEAD128").unwrap();
        assert!(Keyed::new(&a, &[0; 16], Proto::Sensor, true).is_err());
        let d = find("DRACO/rust-fast").unwrap();
        let mut k = Keyed::new(&d, &[1; 16], Proto::Sensor, true).unwrap();
        let mut f = Vec::new();
        k.seal(1, 2, b"abc", &mut f).unwrap();
        assert_eq!(f.len(), HEADER_LEN + 3);
        assert_eq!(f[crate::wire::frame::AT_FLAGS], crate::wire::frame::FLAG_UNAUTHENTICATED);
        assert_eq!(
            d.protection(true),
            "PROVISIONAL: UNSAFE: confidentiality only, no integrity (forged frames are accepted)"
        );
        assert!(find("Ascon-AEAD128").unwrap().protection(false) == "the cipher's own AEAD");
    }
}
