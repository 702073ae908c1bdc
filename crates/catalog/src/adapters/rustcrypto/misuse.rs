//! The AEADs for devices whose nonce state cannot be guaranteed (VM snapshots, restored images):
//! AES-128/256-GCM-SIV (RFC 8452, RustCrypto `aes-gcm-siv`), nonce-misuse-resistant: a repeated
//! (key, nonce) reveals only whether two messages (with their associated data) were equal; and
//! XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha, RustCrypto `chacha20poly1305`), whose 192-bit
//! nonce can be drawn at random per message: the collision risk that limits random 96-bit nonces
//! to 2^32 messages per key (NIST SP 800-38D §8.3) is reached only after 2^80. All three are link
//! suites (`crate::link_ids` 19–21): GCM-SIV with the link's (counter, device) nonce,
//! XChaCha20-Poly1305 with a random nonce carried in each frame.
use aes_gcm_siv::aead::{AeadInOut, KeyInit};
use lwcbench_core::{check_len, iv_err, key_err, Aead, BitOrder, CipherError, CipherInfo, Family, Language, Origin};

use crate::conformance;
use crate::entry::Entry;
use crate::kat::{self, shared, wycheproof};
use crate::verify::{Check, VerifyCtx};

/// Add this module's entries to the registry.
pub fn register(r: &mut Vec<Entry>) {
    r.push(Entry::aead(|| Box::new(GcmSiv::<aes_gcm_siv::Aes128GcmSiv>::default()), verify_gcm_siv));
    r.push(Entry::aead(|| Box::new(GcmSiv::<aes_gcm_siv::Aes256GcmSiv>::default()), verify_gcm_siv));
    r.push(Entry::aead(|| Box::new(XChaCha20Poly1305::default()), verify_xchacha20poly1305));
}

/// Kat-data file of the transcribed RFC 8452 Appendix C vectors (both key sizes).
const RFC8452: &str = "rfc8452.txt";
/// Kat-data file of the transcribed draft-irtf-cfrg-xchacha-03 A.3 vector.
const XCHACHA: &str = "xchacha.txt";

/// One AES-GCM-SIV key size; `A` is the crate's cipher type for it.
pub struct GcmSiv<A> {
    inner: Option<A>, // the crate's AES key schedule zeroizes on drop (`zeroize` feature)
}

impl<A> Default for GcmSiv<A> {
    fn default() -> Self {
        GcmSiv { inner: None }
    }
}

/// The facts that differ between the two key sizes.
trait GcmSivSize {
    const NAME: &'static str;
    const KEY_BITS: u16;
    const ROUNDS: u32;
}
impl GcmSivSize for aes_gcm_siv::Aes128GcmSiv {
    const NAME: &'static str = "AES-128-GCM-SIV";
    const KEY_BITS: u16 = 128;
    const ROUNDS: u32 = 10;
}
impl GcmSivSize for aes_gcm_siv::Aes256GcmSiv {
    const NAME: &'static str = "AES-256-GCM-SIV";
    const KEY_BITS: u16 = 256;
    const ROUNDS: u32 = 14;
}

impl<A> Aead for GcmSiv<A>
where
    A: GcmSivSize + KeyInit + AeadInOut + Send,
{
    fn info(&self) -> CipherInfo {
        CipherInfo {
            name: A::NAME,
            implementation: "rustcrypto",
            family: Family::Aead,
            key_bits: A::KEY_BITS,
            iv_bits: 96,
            block_bits: 128,
            tag_bits: 128,
            // key-generating key schedule + per-message encryption key schedule + POLYVAL key
            // and accumulator
            state_bytes: 2 * 16 * (A::ROUNDS + 1) + 32,
            origin: Origin::Crate { name: "aes-gcm-siv", version: "0.12" },
            language: Language::Rust,
            bit_order: BitOrder::MsbFirst,
            bit_granular: false,
            note: "RFC 8452 (IRTF CFRG); nonce-misuse-resistant: a repeated nonce reveals only equal messages",
        }
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), A::KEY_BITS as usize / 8, key_err)?;
        self.inner = Some(A::new_from_slice(key).expect("length checked"));
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 12, iv_err)?;
        check_len(tag.len(), 16, |e, g| CipherError::TagLength { expected: e, got: g })?;
        let n = aes_gcm_siv::aead::Nonce::<A>::try_from(nonce).expect("length checked");
        // the crate refuses only lengths beyond RFC 8452's 2^36 bytes
        let t = c.encrypt_inout_detached(&n, ad, buf.into()).map_err(|_| CipherError::DataLength { got: buf.len() })?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 12, iv_err)?;
        check_len(tag.len(), 16, |e, g| CipherError::TagLength { expected: e, got: g })?;
        let n = aes_gcm_siv::aead::Nonce::<A>::try_from(nonce).expect("length checked");
        let t = aes_gcm_siv::aead::Tag::<A>::try_from(tag).expect("length checked");
        c.decrypt_inout_detached(&n, ad, (&mut *buf).into(), &t).map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}

fn verify_gcm_siv(e: &Entry, _ctx: &VerifyCtx) -> Vec<Check> {
    let mk = match e.aead_make() {
        Ok(mk) => mk,
        Err(c) => return vec![c],
    };
    // No official AES-GCM-SIV file is in shared/vectors: the RFC's own vectors are in kat-data
    // (the runner keeps the ones of this entry's key size).
    vec![conformance::check_aead(mk), kat::aead_cryptopp(mk, &kat::repo_file(RFC8452), &["AES-GCM-SIV"])]
}

/// XChaCha20-Poly1305: HChaCha20 derives a subkey from the key and nonce bytes 0..16, then
/// ChaCha20-Poly1305 (RFC 8439) runs with nonce 0^32 ‖ nonce bytes 16..24.
#[derive(Default)]
pub struct XChaCha20Poly1305 {
    inner: Option<chacha20poly1305::XChaCha20Poly1305>, // zeroized on drop (`zeroize` feature)
}

impl Aead for XChaCha20Poly1305 {
    fn info(&self) -> CipherInfo {
        CipherInfo {
            name: "XChaCha20-Poly1305",
            implementation: "rustcrypto",
            family: Family::Aead,
            key_bits: 256,
            iv_bits: 192,
            block_bits: 0,
            tag_bits: 128,
            state_bytes: 64,
            origin: Origin::Crate { name: "chacha20poly1305", version: "0.11" },
            language: Language::Rust,
            bit_order: BitOrder::MsbFirst,
            bit_granular: false,
            note: "draft-irtf-cfrg-xchacha (expired draft, no RFC); 192-bit nonce: safe to draw at random",
        }
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 32, key_err)?;
        self.inner = Some(chacha20poly1305::XChaCha20Poly1305::new_from_slice(key).expect("length checked"));
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 24, iv_err)?;
        check_len(tag.len(), 16, |e, g| CipherError::TagLength { expected: e, got: g })?;
        let n = chacha20poly1305::XNonce::try_from(nonce).expect("length checked");
        let t = c.encrypt_inout_detached(&n, ad, buf.into()).map_err(|_| CipherError::DataLength { got: buf.len() })?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 24, iv_err)?;
        check_len(tag.len(), 16, |e, g| CipherError::TagLength { expected: e, got: g })?;
        let n = chacha20poly1305::XNonce::try_from(nonce).expect("length checked");
        let t = chacha20poly1305::Tag::try_from(tag).expect("length checked");
        chacha20poly1305::aead::AeadInOut::decrypt_inout_detached(c, &n, ad, (&mut *buf).into(), &t).map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}

fn verify_xchacha20poly1305(e: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = match e.aead_make() {
        Ok(mk) => mk,
        Err(c) => return vec![c],
    };
    let id = &e.id();
    vec![
        conformance::check_aead(mk),
        kat::aead_cryptopp(mk, &kat::repo_file(XCHACHA), &["XChaCha20/Poly1305"]),
        shared(ctx, id, "cryptopp-testvectors/chacha20poly1305.txt", |p| {
            kat::aead_cryptopp(mk, p, &["XChaCha20/Poly1305"])
        }),
        // every case of Wycheproof `xchacha20_poly1305_test.json`, invalid tags and nonce sizes too
        shared(ctx, id, "wycheproof/xchacha20_poly1305_test.json", |p| wycheproof::aead_wycheproof(mk, p)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kat::repo_file;

    const IDS: [&str; 3] =
        ["AES-128-GCM-SIV/rustcrypto", "AES-256-GCM-SIV/rustcrypto", "XChaCha20-Poly1305/rustcrypto"];

    /// Wycheproof's 315 XChaCha20-Poly1305 cases run when the shared folder is present and
    /// are skipped when not (the registry-wide test checks that every check passes).
    #[test]
    fn wycheproof_runs_with_the_shared_vectors_only() {
        for ctx in [VerifyCtx::discover(), VerifyCtx::default()] {
            let checks = crate::find(IDS[2]).expect("registered").checks(&ctx);
            let wp = checks.iter().find(|c| c.what.contains("xchacha20_poly1305_test.json")).unwrap();
            assert_eq!(wp.skipped, ctx.vectors.is_none());
            assert!(wp.skipped || wp.passed >= 315, "{}", wp.passed);
        }
    }

    /// The transcribed vectors each entry runs: RFC 8452 C.1 (AES-128) and C.2 (AES-256), four
    /// encryptions and one refused forgery each; draft-irtf-cfrg-xchacha-03 A.3.1 and one
    /// forgery. The counts are the files' (a runner that skips vectors fails here).
    #[test]
    fn transcribed_vector_counts() {
        let ctx = VerifyCtx::default();
        for (id, what, passed) in [(IDS[0], RFC8452, 4 * 3 + 1), (IDS[1], RFC8452, 3 * 3 + 1), (IDS[2], XCHACHA, 3 + 1)]
        {
            let checks = crate::find(id).unwrap().checks(&ctx);
            let c = checks.iter().find(|c| c.what.ends_with(what)).expect("transcribed check");
            assert_eq!(c.passed, passed, "{id} {what}");
        }
    }

    fn mk128() -> Box<dyn Aead + Send> {
        Box::new(GcmSiv::<aes_gcm_siv::Aes128GcmSiv>::default())
    }
    fn mk256() -> Box<dyn Aead + Send> {
        Box::new(GcmSiv::<aes_gcm_siv::Aes256GcmSiv>::default())
    }
    fn mkx() -> Box<dyn Aead + Send> {
        Box::new(XChaCha20Poly1305::default())
    }

    /// Every KAT can fail: one hex digit changed in an expected ciphertext or tag of the
    /// transcribed files is reported as a failure, and so is a forgery (`NotVerify`) given the
    /// genuine tag of the vector before it.
    #[test]
    fn transcribed_vectors_can_fail() {
        let dir = std::env::temp_dir().join(format!("lwcbench-misuse-kat-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        type Mk = fn() -> Box<dyn Aead + Send>;
        let cases: [(&str, &str, Mk); 3] =
            [(RFC8452, "AES-GCM-SIV", mk128), (RFC8452, "AES-GCM-SIV", mk256), (XCHACHA, "XChaCha20/Poly1305", mkx)];
        for (file, name, mk) in cases {
            let text = crate::kat::read_text(&repo_file(file)).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let key_bytes = mk().info().key_bytes();
            let mut changed = 0;
            for (i, line) in lines.iter().enumerate() {
                let Some((field, v)) = line.split_once(": ") else { continue };
                if field != "Ciphertext" && field != "MAC" {
                    continue;
                }
                // the test this line belongs to, its key size, and the last genuine tag before it
                let test = lines[i..].iter().find_map(|l| l.strip_prefix("Test: ")).unwrap();
                let key = lines[..i].iter().rev().find_map(|l| l.strip_prefix("Key: ")).unwrap();
                if key.len() != 2 * key_bytes {
                    continue; // a vector of the other key size: skipped by the runner
                }
                let new = match (test, field) {
                    ("Encrypt", _) => format!("{}{}", if v.starts_with('0') { '1' } else { '0' }, &v[1..]),
                    ("NotVerify", "MAC") => {
                        let genuine = lines[..i].iter().rev().find_map(|l| l.strip_prefix("MAC: ")).unwrap();
                        genuine.to_string()
                    }
                    _ => continue,
                };
                let mut edited: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                edited[i] = format!("{field}: {new}");
                let p = dir.join(format!("edit-{i}.txt"));
                std::fs::write(&p, edited.join("\n")).unwrap();
                let chk = kat::aead_cryptopp(mk, &p, &[name]);
                assert!(!chk.ok(), "{file} line {} changed, still passes", i + 1);
                changed += 1;
            }
            assert!(changed >= 3, "{file}: {changed} values changed");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A repeated nonce is what these entries are for: under AES-GCM-SIV two different messages
    /// under one (key, nonce) still give unrelated ciphertexts (their XOR is not the messages'
    /// XOR, as it would be under AES-GCM), and equal messages give equal ciphertexts.
    #[test]
    fn gcm_siv_repeated_nonce_does_not_leak_the_xor() {
        let mut c = GcmSiv::<aes_gcm_siv::Aes128GcmSiv>::default();
        c.set_key(&[7u8; 16]).unwrap();
        let seal = |c: &mut GcmSiv<_>, m: &[u8]| {
            let mut buf = m.to_vec();
            let mut tag = [0u8; 16];
            c.encrypt(&[1u8; 12], b"", &mut buf, &mut tag).unwrap();
            buf
        };
        let (a, b) = (*b"attack at dawn!!", *b"attack at dusk!!");
        let (ca, cb, ca2) = (seal(&mut c, &a), seal(&mut c, &b), seal(&mut c, &a));
        assert_eq!(ca, ca2);
        let x: Vec<u8> = ca.iter().zip(&cb).map(|(p, q)| p ^ q).collect();
        let m: Vec<u8> = a.iter().zip(&b).map(|(p, q)| p ^ q).collect();
        assert_ne!(x, m);
    }
}
