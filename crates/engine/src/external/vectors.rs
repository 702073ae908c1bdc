//! Official vectors run through an external engine (`lwcbench verify --engine …`): the same
//! files the in-process AES adapters use, sent as `encrypt`/`decrypt` requests.
//!
//! * transcribed (always): SP 800-38A F.1.1–F.5.1 (AES-128, four blocks each), the GCM
//!   specification's test case 2, SP 800-38C example 1 (CCM), the EAX paper's first vector,
//!   RFC 7253 Appendix A (OCB, first four) and RFC 5297 A.1 (SIV);
//! * shared folder: Crypto++ `aes.txt` (SP 800-38A all key sizes, RFC 3602, RFC 3686 and
//!   Crypto++'s long vectors) for ECB/CBC/CFB-128/OFB/CTR, and Wycheproof GCM, CCM, EAX and
//!   AES-SIV-CMAC, where every case must get its expected valid/invalid verdict.
use std::collections::BTreeMap;
use std::path::Path;

use lwcbench_catalog::kat::{cryptopp, path_label, unhex, wycheproof};
use lwcbench_catalog::{Check, VerifyCtx};
use serde::Deserialize;

use super::{Engine, Failure};

/// One transcribed vector: cipher name, key, iv, aad, plaintext, ciphertext, tag (hex).
type Tv =
    (&'static str, &'static str, &'static str, &'static str, &'static str, &'static str, &'static str, &'static str);

const SP38A_PT: &str = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
const SP38A_KEY: &str = "2b7e151628aed2a6abf7158809cf4f3c";
const SP38A_IV: &str = "000102030405060708090a0b0c0d0e0f";

/// (source, cipher, key, iv, aad, pt, ct, tag)
const TRANSCRIBED: [Tv; 14] = [
    ("NIST SP 800-38A F.1.1", "AES-128-ECB", SP38A_KEY, "", "", SP38A_PT, "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4", ""),
    ("NIST SP 800-38A F.2.1", "AES-128-CBC", SP38A_KEY, SP38A_IV, "", SP38A_PT, "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7", ""),
    ("NIST SP 800-38A F.3.13", "AES-128-CFB", SP38A_KEY, SP38A_IV, "", SP38A_PT, "3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b26751f67a3cbb140b1808cf187a4f4dfc04b05357c5d1c0eeac4c66f9ff7f2e6", ""),
    ("NIST SP 800-38A F.4.1", "AES-128-OFB", SP38A_KEY, SP38A_IV, "", SP38A_PT, "3b3fd92eb72dad20333449f8e83cfb4a7789508d16918f03f53c52dac54ed8259740051e9c5fecf64344f7a82260edcc304c6528f659c77866a510d9c1d6ae5e", ""),
    ("NIST SP 800-38A F.5.1", "AES-128-CTR", SP38A_KEY, "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", "", SP38A_PT, "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee", ""),
    ("GCM spec (McGrew-Viega) test case 2", "AES-128-GCM", "00000000000000000000000000000000", "000000000000000000000000", "", "00000000000000000000000000000000", "0388dace60b6a392f328c2b971b2fe78", "ab6e47d42cec13bdf53a67b21257bddf"),
    ("NIST SP 800-38C C.1 (example 1)", "AES-128-CCM", "404142434445464748494a4b4c4d4e4f", "10111213141516", "0001020304050607", "20212223", "7162015b", "4dac255d"),
    ("EAX paper (Bellare-Rogaway-Wagner) vector 1", "AES-128-EAX", "233952dee4d5ed5f9b9c6d6ff80ff478", "62ec67f9c3a4a407fcb2a8c49031a8b3", "6bfb914fd07eae6b", "", "", "e037830e8389f27b025a2d6527e79d01"),
    ("RFC 7253 Appendix A #1", "AES-128-OCB", "000102030405060708090a0b0c0d0e0f", "bbaa99887766554433221100", "", "", "", "785407bfffc8ad9edcc5520ac9111ee6"),
    ("RFC 7253 Appendix A #2", "AES-128-OCB", "000102030405060708090a0b0c0d0e0f", "bbaa99887766554433221101", "0001020304050607", "0001020304050607", "6820b3657b6f615a", "5725bda0d3b4eb3a257c9af1f8f03009"),
    ("RFC 7253 Appendix A #3", "AES-128-OCB", "000102030405060708090a0b0c0d0e0f", "bbaa99887766554433221102", "0001020304050607", "", "", "81017f8203f081277152fade694a0a00"),
    ("RFC 7253 Appendix A #4", "AES-128-OCB", "000102030405060708090a0b0c0d0e0f", "bbaa99887766554433221103", "", "0001020304050607", "45dd69f8f5aae724", "14054cd1f35d82760b2cd00d2f99bfa9"),
    ("RFC 7253 Appendix A #5", "AES-128-OCB", "000102030405060708090a0b0c0d0e0f", "bbaa99887766554433221104", "000102030405060708090a0b0c0d0e0f", "000102030405060708090a0b0c0d0e0f", "571d535b60b277188be5147170a9a22c", "3ad7a4ff3835b8c5701c1ccec8fc3358"),
    ("RFC 5297 A.1", "AES-128-SIV", "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", "", "101112131415161718191a1b1c1d1e1f2021222324252627", "112233445566778899aabbccddee", "40c02b9690c4dc04daef7f6afe5c", "85632d07c6e8f37f950acd320a2ecc93"),
];

/// RFC 7253 Appendix A, iterated test: (key bits, tag bits, output) for every named
/// parameter set. The last request carries 22,400 bytes of associated data.
const OCB_ITERATED: [(usize, usize, &str); 9] = [
    (128, 128, "67e944d23256c5e0b6c61fa22fdf1ea2"),
    (192, 128, "f673f2c3e7174aae7bae986ca9f29e17"),
    (256, 128, "d90eb8e9c977c88b79dd793d7ffa161c"),
    (128, 96, "77a3d8e73589158d25d01209"),
    (192, 96, "05d56ead2752c86be6932c5e"),
    (256, 96, "5458359ac23b0cba9e6330dd"),
    (128, 64, "192c9b7bd90ba06a"),
    (192, 64, "0066bc6e0ef34e24"),
    (256, 64, "7d4ea5d445501cbe"),
];

/// K = zeros(KEYLEN-8) ‖ TAGLEN; for i in 0..128, S = i zero bytes, append
/// OCB(K, N=3i+1, A=S, P=S), OCB(K, 3i+2, A=ε, P=S), OCB(K, 3i+3, A=S, P=ε) (ciphertext ‖ tag);
/// the output is OCB(K, N=385, A=C, P=ε).
fn ocb_iterated(e: &mut Engine, acc: &mut Acc, name: &str, key_len: usize, tag_bits: usize, want: &str) {
    let what = "RFC 7253 Appendix A iterated test".to_string();
    let mut key = vec![0u8; key_len];
    key[key_len - 1] = tag_bits as u8;
    let nonce = |n: usize| {
        let mut v = vec![0u8; 12];
        v[8..].copy_from_slice(&(n as u32).to_be_bytes());
        v
    };
    let mut c = Vec::new();
    let mut enc = |n: usize, a: &[u8], p: &[u8]| {
        e.encrypt(name, &key, &nonce(n), a, p, Some(tag_bits)).map(|(ct, tag)| [ct, tag].concat())
    };
    let r = (|| -> Result<Vec<u8>, Failure> {
        for i in 0..128 {
            let s = vec![0u8; i];
            c.extend(enc(3 * i + 1, &s, &s)?);
            c.extend(enc(3 * i + 2, &[], &s)?);
            c.extend(enc(3 * i + 3, &s, &[])?);
        }
        enc(385, &c, &[])
    })();
    let label = format!("AEAD_AES_{}_OCB_TAGLEN{tag_bits}", key_len * 8);
    match r {
        Ok(out) => acc.check(name, &what).expect_eq(label, &out, &unhex(want).expect("transcribed hex")),
        Err(f) if acc.broken(&f) => {}
        Err(f) => acc.check(name, &what).fail(format!("{label}: {f}")),
    }
}

/// Checks grouped per cipher id, in the order the engine lists its ciphers.
struct Acc {
    implementation: String,
    offered: Vec<String>,
    checks: BTreeMap<(String, String), Check>,
    /// Valid vectors whose parameter sizes the library refuses (`err unsupported`): part of
    /// the support matrix, listed in the check's description rather than failed.
    unsupported: BTreeMap<(String, String), Vec<String>>,
    broken: Option<String>,
}

impl Acc {
    fn offers(&self, name: &str) -> Option<String> {
        self.offered.iter().find(|o| o.eq_ignore_ascii_case(name)).cloned()
    }
    fn check(&mut self, cipher: &str, what: &str) -> &mut Check {
        let id = format!("{cipher}/{}", self.implementation);
        self.checks.entry((cipher.to_string(), what.to_string())).or_insert_with(|| Check::new(id, what))
    }
    /// Record a broken session once; every later request fails the same way.
    fn broken(&mut self, f: &Failure) -> bool {
        if let Failure::Broken(m) = f {
            self.broken.get_or_insert_with(|| m.clone());
            true
        } else {
            false
        }
    }
}

/// Round trip of a vector that must be accepted: encrypt gives ct ‖ tag, decrypt gives pt.
#[allow(clippy::too_many_arguments)]
fn valid(
    e: &mut Engine,
    acc: &mut Acc,
    cipher: &str,
    what: &str,
    label: &str,
    key: &[u8],
    iv: &[u8],
    aad: &[u8],
    pt: &[u8],
    ct: &[u8],
    tag: &[u8],
) {
    let tag_bits = (!tag.is_empty()).then_some(tag.len() * 8);
    let enc = e.encrypt(cipher, key, iv, aad, pt, tag_bits);
    let dec = e.decrypt(cipher, key, iv, aad, ct, tag);
    for f in [enc.as_ref().err(), dec.as_ref().err()].into_iter().flatten() {
        if acc.broken(f) {
            return;
        }
    }
    let unsupported = |r: Option<&Failure>| matches!(r, Some(Failure::Refused { code, .. }) if code == "unsupported");
    if unsupported(enc.as_ref().err()) && unsupported(dec.as_ref().err()) {
        acc.check(cipher, what);
        acc.unsupported
            .entry((cipher.to_string(), what.to_string()))
            .or_default()
            .push(label.split(" (").next().unwrap_or(label).to_string());
        return;
    }
    let c = acc.check(cipher, what);
    match enc {
        Ok((got_ct, got_tag)) => {
            c.expect_eq(format!("{label} ciphertext"), &got_ct, ct);
            c.expect_eq(format!("{label} tag"), &got_tag, tag);
        }
        Err(f) => c.fail(format!("{label}: encrypt: {f}")),
    }
    match dec {
        Ok(p) => c.expect_eq(format!("{label} decrypts"), &p, pt),
        Err(f) => c.fail(format!("{label}: decrypt: {f}")),
    }
}

/// One Wycheproof case by its verdict: a valid one round-trips ([`valid`]); an invalid one
/// must be refused by decrypt (a refused nonce/tag size counts, like the in-process runner);
/// an acceptable one may be refused or must open to the message.
#[allow(clippy::too_many_arguments)]
fn by_verdict(
    e: &mut Engine,
    acc: &mut Acc,
    cipher: &str,
    what: &str,
    label: &str,
    verdict: wycheproof::Verdict,
    key: &[u8],
    iv: &[u8],
    aad: &[u8],
    msg: &[u8],
    ct: &[u8],
    tag: &[u8],
) {
    if verdict == wycheproof::Verdict::Valid {
        return valid(e, acc, cipher, what, label, key, iv, aad, msg, ct, tag);
    }
    let opened = e.decrypt(cipher, key, iv, aad, ct, tag);
    if opened.as_ref().err().is_some_and(|f| acc.broken(f)) {
        return;
    }
    let c = acc.check(cipher, what);
    match (verdict, opened) {
        (wycheproof::Verdict::Invalid, r) => c.expect(format!("{label}: must be rejected"), r.is_err()),
        (_, Ok(p)) => c.expect_eq(format!("{label}: accepted"), &p, msg),
        (_, Err(_)) => c.expect(label, true),
    }
}

/// Run every vector the engine's ciphers can take. Returns checks per cipher id in the
/// engine's listing order; `want(id)` filters (`--cipher`).
pub fn verify(e: &mut Engine, ctx: &VerifyCtx, want: &dyn Fn(&str, &str) -> bool) -> Vec<(String, Vec<Check>)> {
    let imp = e.hello.implementation.clone();
    let offered: Vec<String> =
        e.offers.iter().map(|o| o.name.clone()).filter(|n| want(n, &format!("{n}/{imp}"))).collect();
    let mut acc = Acc {
        implementation: imp.clone(),
        offered: offered.clone(),
        checks: BTreeMap::new(),
        unsupported: BTreeMap::new(),
        broken: None,
    };

    for (src, cipher, key, iv, aad, pt, ct, tag) in TRANSCRIBED {
        let Some(name) = acc.offers(cipher) else { continue };
        let h = |s: &str| unhex(s).expect("transcribed hex");
        valid(e, &mut acc, &name, "transcribed vectors", src, &h(key), &h(iv), &h(aad), &h(pt), &h(ct), &h(tag));
    }

    for (bits, tag_bits, want) in OCB_ITERATED {
        if let Some(name) = acc.offers(&format!("AES-{bits}-OCB")) {
            ocb_iterated(e, &mut acc, &name, bits / 8, tag_bits, want);
        }
    }

    let any = |m: &str| offered.iter().any(|o| o.to_uppercase().ends_with(m));
    if ["-ECB", "-CBC", "-CFB", "-OFB", "-CTR"].iter().any(|m| any(m)) {
        shared(ctx, &mut acc, "cryptopp-testvectors/aes.txt", |p, acc| cryptopp_aes(e, acc, p));
    }
    for (mode, file) in [
        ("GCM", "wycheproof/aes_gcm_test.json"),
        ("CCM", "wycheproof/aes_ccm_test.json"),
        ("EAX", "wycheproof/aes_eax_test.json"),
    ] {
        if any(&format!("-{mode}")) {
            shared(ctx, &mut acc, file, |p, acc| wycheproof_aead(e, acc, p, mode));
        }
    }
    if any("-SIV") {
        shared(ctx, &mut acc, "wycheproof/aes_siv_cmac_test.json", |p, acc| wycheproof_siv(e, acc, p));
    }

    for ((cipher, what), list) in std::mem::take(&mut acc.unsupported) {
        let c = acc.check(&cipher, &what);
        c.what +=
            &format!(" ({} valid vectors with parameter sizes the library refuses: {})", list.len(), list.join(", "));
    }
    let mut out: Vec<(String, Vec<Check>)> = Vec::new();
    for name in &offered {
        let id = format!("{name}/{imp}");
        let mut checks: Vec<Check> =
            acc.checks.iter().filter(|((c, _), _)| c == name).map(|(_, ch)| ch.clone()).collect();
        if let Some(b) = &acc.broken {
            let mut c = Check::new(id.clone(), "engine session");
            c.fail(format!("engine failed: {b}"));
            checks.push(c);
        } else if checks.is_empty() {
            let mut c = Check::new(id.clone(), "vectors");
            c.fail("no official vector applies to this cipher");
            checks.push(c);
        }
        out.push((id, checks));
    }
    out
}

fn shared(ctx: &VerifyCtx, acc: &mut Acc, rel: &str, f: impl FnOnce(&Path, &mut Acc)) {
    match ctx.file(rel) {
        Some(p) if acc.broken.is_none() => f(&p, acc),
        Some(_) => {}
        None => {
            // One skip per cipher the file would have covered.
            let mode = rel.rsplit('/').next().unwrap_or(rel).to_string();
            let names: Vec<String> = acc.offered.clone();
            for n in names.iter().filter(|n| covers(rel, n)) {
                let id = format!("{n}/{}", acc.implementation);
                acc.checks.insert(
                    (n.clone(), format!("shared/vectors/{rel}")),
                    Check::skipped(id, format!("shared/vectors/{rel} (folder absent; {mode})")),
                );
            }
        }
    }
}

fn covers(rel: &str, name: &str) -> bool {
    let m = name.rsplit('-').next().unwrap_or("").to_ascii_lowercase();
    if rel.contains("aes.txt") {
        return ["ecb", "cbc", "cfb", "ofb", "ctr"].contains(&m.as_str());
    }
    rel.contains(&format!("aes_{m}_")) || (m == "siv" && rel.contains("siv"))
}

/// "AES-<bits>-<MODE>" for a key length (SIV keys are two AES keys).
fn aes_name(mode: &str, key_len: usize) -> String {
    let bits = if mode == "SIV" { key_len * 4 } else { key_len * 8 };
    format!("AES-{bits}-{mode}")
}

fn cryptopp_aes(e: &mut Engine, acc: &mut Acc, path: &Path) {
    let what = path_label(path);
    let tests = match cryptopp::parse_file(path) {
        Ok(t) => t,
        Err(err) => {
            for n in acc.offered.clone().iter().filter(|n| covers("aes.txt", n)) {
                acc.check(n, &what).fail(err.clone());
            }
            return;
        }
    };
    for t in &tests {
        let Some(mode) = t.get("Name").and_then(|n| n.strip_prefix("AES/")) else { continue };
        if t.get("Test") != Some("Encrypt") || !["ECB", "CBC", "CFB", "OFB", "CTR"].contains(&mode) {
            continue;
        }
        // CFB-8 (FeedbackSize 1) is a different cipher from the CFB-128 the engine offers.
        if mode == "CFB" && t.get("FeedbackSize").is_some_and(|f| f.trim() != "16") {
            continue;
        }
        type KeyIvPtCt = (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>);
        let r = (|| -> Result<KeyIvPtCt, String> {
            Ok((t.bytes("Key")?, t.bytes("IV").unwrap_or_default(), t.bytes("Plaintext")?, t.bytes("Ciphertext")?))
        })();
        let (key, iv, pt, ct) = match r {
            Ok(v) => v,
            Err(err) => {
                if let Some(n) = acc.offers(&aes_name(mode, 16)) {
                    acc.check(&n, &what).fail(err);
                }
                continue;
            }
        };
        let Some(name) = acc.offers(&aes_name(mode, key.len())) else { continue };
        let label = format!("line {} ({})", t.line, t.get("Comment").or(t.get("Source")).unwrap_or(""));
        valid(e, acc, &name, &what, &label, &key, &iv, &[], &pt, &ct, &[]);
        if acc.broken.is_some() {
            return;
        }
    }
}

fn wycheproof_aead(e: &mut Engine, acc: &mut Acc, path: &Path, mode: &str) {
    let what = path_label(path);
    let file = match wycheproof::parse_file(path) {
        Ok(f) => f,
        Err(err) => {
            for n in acc.offered.clone().iter().filter(|n| n.to_uppercase().ends_with(mode)) {
                acc.check(n, &what).fail(err.clone());
            }
            return;
        }
    };
    for g in &file.test_groups {
        let Some(name) = acc.offers(&aes_name(mode, g.key_size as usize / 8)) else { continue };
        for t in &g.tests {
            let label = format!("tcId {} ({}; {:?})", t.tc_id, t.comment, t.result);
            let dec = [&t.key, &t.iv, &t.aad, &t.msg, &t.ct, &t.tag].map(|s| unhex(s));
            if let Some(Err(err)) = dec.iter().find(|d| d.is_err()) {
                acc.check(&name, &what).fail(format!("tcId {}: {err}", t.tc_id));
                continue;
            }
            let [key, iv, aad, msg, ct, tag] = dec.map(|d| d.expect("checked"));
            by_verdict(e, acc, &name, &what, &label, t.result, &key, &iv, &aad, &msg, &ct, &tag);
            if acc.broken.is_some() {
                return;
            }
        }
    }
}

/// Wycheproof `daead_test_schema_v1` (deterministic AEAD): `ct` is SIV ‖ ciphertext.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DaeadFile {
    schema: String,
    number_of_tests: usize,
    test_groups: Vec<DaeadGroup>,
}
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DaeadGroup {
    key_size: u32,
    tests: Vec<DaeadTest>,
}
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DaeadTest {
    tc_id: u32,
    #[serde(default)]
    comment: String,
    key: String,
    aad: String,
    msg: String,
    ct: String,
    result: wycheproof::Verdict,
}

fn parse_daead(path: &Path) -> Result<DaeadFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let f: DaeadFile = serde_json::from_str(&text).map_err(|e| format!("{}: JSON: {e}", path.display()))?;
    if !f.schema.starts_with("daead_test_schema") {
        return Err(format!("{}: schema {:?} is not the deterministic-AEAD schema", path.display(), f.schema));
    }
    let n: usize = f.test_groups.iter().map(|g| g.tests.len()).sum();
    if n != f.number_of_tests {
        return Err(format!("{}: numberOfTests = {} but {n} tests present", path.display(), f.number_of_tests));
    }
    Ok(f)
}

fn wycheproof_siv(e: &mut Engine, acc: &mut Acc, path: &Path) {
    let what = path_label(path);
    let file = match parse_daead(path) {
        Ok(f) => f,
        Err(err) => {
            for n in acc.offered.clone().iter().filter(|n| n.to_uppercase().ends_with("SIV")) {
                acc.check(n, &what).fail(err.clone());
            }
            return;
        }
    };
    for g in &file.test_groups {
        let Some(name) = acc.offers(&aes_name("SIV", g.key_size as usize / 8)) else { continue };
        for t in &g.tests {
            let label = format!("tcId {} ({}; {:?})", t.tc_id, t.comment, t.result);
            let dec = [&t.key, &t.aad, &t.msg, &t.ct].map(|s| unhex(s));
            if let Some(Err(err)) = dec.iter().find(|d| d.is_err()) {
                acc.check(&name, &what).fail(format!("tcId {}: {err}", t.tc_id));
                continue;
            }
            let [key, aad, msg, sivct] = dec.map(|d| d.expect("checked"));
            let (tag, ct) = sivct.split_at(sivct.len().min(16));
            by_verdict(e, acc, &name, &what, &label, t.result, &key, &[], &aad, &msg, ct, tag);
            if acc.broken.is_some() {
                return;
            }
        }
    }
}

/// An engine's cipher as a torture subject: only what crosses the protocol can be checked
/// (no buffers to guard; the engine owns its memory), so the torture covers determinism,
/// round trip, forgeries and the per-primitive checksum.
struct EngineSubject<'a> {
    e: &'a mut Engine,
    name: String,
    imp: String,
    family: lwcbench_core::Family,
    sizes: (usize, usize, usize),
}

impl lwcbench_catalog::torture::Subject for EngineSubject<'_> {
    fn id(&self) -> String {
        format!("{}/{}", self.name, self.imp)
    }
    fn primitive(&self) -> String {
        self.name.clone()
    }
    fn shape(&self) -> lwcbench_catalog::torture::Shape {
        use lwcbench_catalog::torture::Shape;
        match self.family {
            lwcbench_core::Family::Aead => Shape::Aead,
            lwcbench_core::Family::Stream => Shape::Stream,
            // The protocol's "block" ciphers are modes over whole blocks for ECB/CBC (no
            // padding); CFB, OFB and CTR take any length.
            _ => {
                Shape::Mode { whole_blocks: !["-CFB", "-CFB8", "-OFB", "-CTR"].iter().any(|m| self.name.ends_with(m)) }
            }
        }
    }
    fn sizes(&self) -> (usize, usize, usize) {
        self.sizes
    }
    fn seal(
        &mut self,
        key: &[u8],
        nonce: &[u8],
        ad: &[u8],
        pt: &[u8],
        _: u8,
        _: &mut Vec<String>,
    ) -> Result<Vec<u8>, String> {
        let tag_bits = (self.sizes.2 > 0).then_some(self.sizes.2 * 8);
        let (ct, tag) = self.e.encrypt(&self.name, key, nonce, ad, pt, tag_bits).map_err(|f| f.to_string())?;
        Ok([ct, tag].concat())
    }
    fn open(
        &mut self,
        key: &[u8],
        nonce: &[u8],
        ad: &[u8],
        sealed: &[u8],
        _: u8,
        _: &mut Vec<String>,
    ) -> Result<Vec<u8>, String> {
        let t = self.sizes.2.min(sealed.len());
        let (ct, tag) = sealed.split_at(sealed.len() - t);
        self.e.decrypt(&self.name, key, nonce, ad, ct, tag).map_err(|f| f.to_string())
    }
    /// A refusal the engine marks `unsupported` is a property of the library (e.g. a size it
    /// does not take), reported as a finding; any other refusal fails.
    fn limitation(&self, mlen: usize, err: &str) -> Option<String> {
        err.starts_with("engine refused (unsupported)").then(|| format!("{mlen}-byte message: {err}"))
    }
}

/// Misuse torture ([`lwcbench_catalog::torture`]) of every cipher the engine offers that
/// `want` selects: one check per cipher id, and each cipher's checksum for the per-primitive
/// comparison with the in-process implementations.
pub fn torture(
    e: &mut Engine,
    want: &dyn Fn(&str, &str) -> bool,
    loops: usize,
) -> (Vec<(String, Check)>, Vec<lwcbench_catalog::torture::Sum>) {
    use lwcbench_catalog::torture::{self, Subject, Sum};
    let imp = e.hello.implementation.clone();
    let offers: Vec<_> = e
        .offers
        .iter()
        .filter(|o| want(&o.name, &format!("{}/{imp}", o.name)))
        .map(|o| (o.name.clone(), o.family, (o.key_bits as usize / 8, o.iv_bits as usize / 8, o.tag_bits as usize / 8)))
        .collect();
    let (mut checks, mut sums) = (Vec::new(), Vec::new());
    for (name, family, sizes) in offers {
        let mut s = EngineSubject { e: &mut *e, name, imp: imp.clone(), family, sizes };
        // Each loop costs about a dozen round trips: a quarter of the in-process loops.
        let c = torture::torture(&mut s, loops.div_ceil(4), 1);
        sums.push(Sum { primitive: s.primitive(), id: s.id(), result: torture::checksum(&mut s) });
        checks.push((s.id(), c));
    }
    (checks, sums)
}
