//! CCM* as IEEE 802.15.4 (and so Thread and Zigbee) secures frames: AES-128 in CCM with a
//! 13-byte nonce and a 4-, 8- or 16-byte MIC (security levels ENC-MIC-32, -64 and -128). With a
//! MIC, CCM* is exactly CCM (NIST SP 800-38C) with these parameters, so the RustCrypto `ccm`
//! crate computes it. CCM*'s encryption-only levels (MIC length 0) are not offered: they give no
//! integrity and SP 800-38C has no zero-length tag.
//!
//! One entry per MIC length, named as TLS names its short-tag CCM suites (RFC 6655
//! AES_128_CCM_8): `AES-128-CCM*` (16-byte MIC), `AES-128-CCM*-8`, `AES-128-CCM*-4`.
//! [`crate::tag_variants`] finds them from one another (`lwcbench encrypt --tag`).
//!
//! Verification: transcribed vectors (`kat-data/ccm-star.txt`), and from the shared folder NIST
//! CAVP CCMVS (`VTT128.rsp`: variable tag with a 13-byte nonce; `DVPT128.rsp`: decryption
//! with Pass/Fail verdicts, 4- and 16-byte MICs), Wycheproof's 104-bit-nonce groups (16-byte
//! MIC only), and Crypto++'s `ccm.txt` (RFC 3610's packet vectors: 13-byte nonce, 8-byte MIC).
use std::collections::HashMap;
use std::path::Path;

use aes::Aes128;
use ccm::aead::array::ArraySize;
use ccm::aead::{AeadInOut, KeyInit};
use ccm::consts::{U13, U16, U4, U8};
use lwcbench_core::{check_len, iv_err, key_err, Aead, BitOrder, CipherError, CipherInfo, Family, Language, Origin};

use crate::conformance;
use crate::entry::{Entry, McuImage};
use crate::kat::{self, shared, wycheproof};
use crate::verify::{Check, VerifyCtx};

/// Nonce bytes of CCM* in IEEE 802.15.4: source address (8) ‖ frame counter (4) ‖ security level (1).
pub const NONCE_BYTES: usize = 13;

/// Add the CCM* entries (16-, 8- and 4-byte MIC), each with its microcontroller image.
pub fn register(r: &mut Vec<Entry>) {
    let img = |name: &'static str, ty: &'static str| McuImage::new(name, ty);
    r.push(Entry::aead(|| Box::new(CcmStar::<U16>::default()), verify).with_mcu(img(
        "rc_aes128_ccm_star",
        "lwc_mcu_images::rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U16, ccm::consts::U13>>",
    )));
    r.push(Entry::aead(|| Box::new(CcmStar::<U8>::default()), verify).with_mcu(img(
        "rc_aes128_ccm_star8",
        "lwc_mcu_images::rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U8, ccm::consts::U13>>",
    )));
    r.push(Entry::aead(|| Box::new(CcmStar::<U4>::default()), verify).with_mcu(img(
        "rc_aes128_ccm_star4",
        "lwc_mcu_images::rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U4, ccm::consts::U13>>",
    )));
}

/// The entry name of a MIC length.
pub(crate) trait Mic {
    const NAME: &'static str;
}
impl Mic for U16 {
    const NAME: &'static str = "AES-128-CCM*";
}
impl Mic for U8 {
    const NAME: &'static str = "AES-128-CCM*-8";
}
impl Mic for U4 {
    const NAME: &'static str = "AES-128-CCM*-4";
}

/// AES-128 CCM* with an `M`-byte MIC and a 13-byte nonce.
pub(crate) struct CcmStar<M: ArraySize + ccm::TagSize> {
    inner: Option<ccm::Ccm<Aes128, M, U13>>, // `aes` zeroizes the round keys on drop
}

impl<M: ArraySize + ccm::TagSize> Default for CcmStar<M> {
    fn default() -> Self {
        CcmStar { inner: None }
    }
}

impl<M: ArraySize + ccm::TagSize + Mic> CcmStar<M> {
    fn tag_len(tag: usize) -> Result<(), CipherError> {
        check_len(tag, M::USIZE, |e, g| CipherError::TagLength { expected: e, got: g })
    }
}

impl<M: ArraySize + ccm::TagSize + Mic + Send> Aead for CcmStar<M> {
    fn info(&self) -> CipherInfo {
        CipherInfo {
            name: M::NAME,
            implementation: "rustcrypto",
            family: Family::Aead,
            key_bits: 128,
            iv_bits: (NONCE_BYTES * 8) as u16,
            block_bits: 128,
            tag_bits: (M::USIZE * 8) as u16,
            // expanded AES-128 key + CBC-MAC and counter blocks
            state_bytes: 16 * 11 + 32,
            origin: Origin::Crate { name: "RustCrypto", version: "aes 0.9 / ccm 0.6" },
            language: Language::Rust,
            bit_order: BitOrder::MsbFirst,
            bit_granular: false,
            note: "IEEE 802.15.4 CCM*: CCM (SP 800-38C) with a 13-byte nonce",
        }
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 16, key_err)?;
        self.inner =
            Some(ccm::Ccm::new_from_slice(key).map_err(|_| CipherError::KeyLength { expected: 16, got: key.len() })?);
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), NONCE_BYTES, iv_err)?;
        Self::tag_len(tag.len())?;
        let n = ccm::Nonce::<U13>::try_from(nonce)
            .map_err(|_| CipherError::IvLength { expected: NONCE_BYTES, got: nonce.len() })?;
        // the crate refuses only a message longer than the 2-byte length field holds (64 KiB)
        let t = c.encrypt_inout_detached(&n, ad, buf.into()).map_err(|_| CipherError::DataLength { got: buf.len() })?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), NONCE_BYTES, iv_err)?;
        Self::tag_len(tag.len())?;
        let n = ccm::Nonce::<U13>::try_from(nonce)
            .map_err(|_| CipherError::IvLength { expected: NONCE_BYTES, got: nonce.len() })?;
        let t =
            ccm::Tag::<M>::try_from(tag).map_err(|_| CipherError::TagLength { expected: M::USIZE, got: tag.len() })?;
        c.decrypt_inout_detached(&n, ad, (&mut *buf).into(), &t).map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}

/// The transcribed vectors (kat-data).
const KAT: &str = "ccm-star.txt";

fn verify(e: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = match e.aead_make() {
        Ok(mk) => mk,
        Err(c) => return vec![c],
    };
    let id = e.id();
    let tag = e.info.tag_bytes();
    let mut v = vec![conformance::check_aead(mk), kat::aead_cryptopp(mk, &kat::repo_file(KAT), &["AES/CCM*"])];
    for file in ["nist/cavp/ccmtestvectors/VTT128.rsp", "nist/cavp/ccmtestvectors/DVPT128.rsp"] {
        // DVPT has MICs of 4 and 16 bytes only with a 13-byte nonce
        if file.contains("DVPT") && tag == 8 {
            continue;
        }
        v.push(shared(ctx, &id, file, |p| cavp_ccm(mk, p)));
    }
    if tag == 16 {
        // Wycheproof's 104-bit-nonce groups of a 128-bit key all have a 128-bit tag
        v.push(shared(ctx, &id, "wycheproof/aes_ccm_test.json", |p| {
            wycheproof::aead_wycheproof_groups(mk, p, &|g: &wycheproof::Group| {
                g.key_size == 128 && g.iv_size as usize == NONCE_BYTES * 8 && g.tag_size == 128
            })
        }));
    }
    if tag == 8 {
        // RFC 3610's packet vectors: 13-byte nonce, 8- and 10-byte MICs (the runner keeps the 8)
        v.push(shared(ctx, &id, "cryptopp-testvectors/ccm.txt", |p| kat::aead_cryptopp(mk, p, &["AES/CCM"])));
    }
    v
}

/// Longest CCMVS file read (the 128-bit-key files are below 200 KB).
const MAX_RSP: u64 = 4 << 20;

/// One CCMVS record with the parameters in force where it appears.
#[derive(Debug, Default)]
struct Record {
    line: usize,
    fields: HashMap<String, String>,
}

/// Parse a NIST CAVP CCMVS response file (`VADT`, `VNT`, `VPT`, `VTT`, `DVPT`): `name = value`
/// lines before a record's `Count` are parameters of the records that follow (the file
/// header's `Alen`/`Plen`/`Nlen`, a section's `[Tlen = 4]` or `[Alen = 0, Plen = 0, Nlen = 7,
/// Tlen = 4]`, a section's `Key` and `Nonce`); those after it belong to the record.
fn parse_ccmvs(text: &str) -> Result<Vec<Record>, String> {
    let mut params: HashMap<String, String> = HashMap::new();
    let mut out: Vec<Record> = Vec::new();
    let mut cur: Option<Record> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(inner) = line.strip_prefix('[') {
            let inner = inner.strip_suffix(']').ok_or_else(|| format!("line {}: unclosed '['", i + 1))?;
            out.extend(cur.take());
            for kv in inner.split(',') {
                let (k, v) = kv.split_once('=').ok_or_else(|| format!("line {}: '{kv}' is not name = value", i + 1))?;
                params.insert(k.trim().to_string(), v.trim().to_string());
            }
            continue;
        }
        let (k, v) = line.split_once('=').ok_or_else(|| format!("line {}: '{line}' is not name = value", i + 1))?;
        let (k, v) = (k.trim().to_string(), v.trim().to_string());
        if k == "Count" {
            out.extend(cur.take());
            cur = Some(Record { line: i + 1, fields: params.clone() });
        }
        match cur.as_mut() {
            Some(r) => r.fields.insert(k, v),
            None => params.insert(k, v),
        };
    }
    out.extend(cur);
    Ok(out)
}

/// Run a CCMVS file's records of this entry's nonce and tag length: an encryption record must
/// give `CT` (ciphertext ‖ MIC) and decrypt back; a `Result = Pass` record must decrypt to its
/// payload (and encrypt to `CT`), a `Fail` record must be refused. `Alen = 0` / `Plen = 0`
/// records hold a placeholder `00`: the data is empty.
fn cavp_ccm(mk: fn() -> Box<dyn Aead + Send>, path: &Path) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(format!("{}/{}", info.name, info.implementation), kat::path_label(path));
    let text = match std::fs::File::open(path).and_then(|f| {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::Read::take(f, MAX_RSP), &mut s).map(|_| s)
    }) {
        Ok(t) => t,
        Err(e) => {
            chk.fail(format!("{}: {e}", path.display()));
            return chk;
        }
    };
    let records = match parse_ccmvs(&text) {
        Ok(r) => r,
        Err(e) => {
            chk.fail(e);
            return chk;
        }
    };
    let (nlen, tlen) = (info.iv_bytes().to_string(), info.tag_bytes().to_string());
    let mut ran = 0;
    for r in records.iter().filter(|r| r.fields.get("Nlen") == Some(&nlen) && r.fields.get("Tlen") == Some(&tlen)) {
        let res = (|| -> Result<(), String> {
            let get = |k: &str| r.fields.get(k).map(String::as_str).ok_or_else(|| format!("line {}: no {k}", r.line));
            let bytes = |k: &str, len_key: &str| -> Result<Vec<u8>, String> {
                if r.fields.get(len_key).map(String::as_str) == Some("0") {
                    return Ok(Vec::new());
                }
                kat::unhex(get(k)?).map_err(|e| format!("line {}: {k}: {e}", r.line))
            };
            let key = kat::unhex(get("Key")?).map_err(|e| format!("line {}: Key: {e}", r.line))?;
            let nonce = kat::unhex(get("Nonce")?).map_err(|e| format!("line {}: Nonce: {e}", r.line))?;
            let ad = bytes("Adata", "Alen")?;
            let ct = kat::unhex(get("CT")?).map_err(|e| format!("line {}: CT: {e}", r.line))?;
            let t = info.tag_bytes();
            if ct.len() < t {
                return Err(format!("line {}: CT shorter than the {t}-byte MIC", r.line));
            }
            let (body, mic) = ct.split_at(ct.len() - t);
            c.set_key(&key).map_err(|e| format!("line {}: {e}", r.line))?;
            let label = format!("line {} (Count {})", r.line, get("Count")?);
            let mut back = body.to_vec();
            let opened = c.decrypt(&nonce, &ad, &mut back, mic);
            if r.fields.get("Result").map(String::as_str) == Some("Fail") {
                chk.expect(format!("{label}: must be rejected"), opened.is_err());
                return Ok(());
            }
            let pt = bytes("Payload", "Plen")?;
            let mut buf = pt.clone();
            let mut got = vec![0u8; t];
            c.encrypt(&nonce, &ad, &mut buf, &mut got).map_err(|e| format!("{label}: encrypt: {e}"))?;
            buf.extend_from_slice(&got);
            chk.expect_eq(format!("{label} CT"), &buf, &ct);
            chk.expect(format!("{label}: decrypts to Payload"), opened.is_ok() && back == pt);
            Ok(())
        })();
        ran += 1;
        if let Err(e) = res {
            chk.fail(e);
        }
    }
    if ran == 0 {
        chk.fail(format!("no record with Nlen = {nlen}, Tlen = {tlen}"));
    }
    chk
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(mk: fn() -> Box<dyn Aead + Send>, key: &str, nonce: &str, ad: &str, pt: &str) -> String {
        let mut c = mk();
        c.set_key(&hex::decode(key).unwrap()).unwrap();
        let mut buf = hex::decode(pt).unwrap();
        let mut tag = vec![0u8; c.info().tag_bytes()];
        c.encrypt(&hex::decode(nonce).unwrap(), &hex::decode(ad).unwrap(), &mut buf, &mut tag).unwrap();
        buf.extend_from_slice(&tag);
        hex::encode(buf)
    }

    /// RFC 3610 section 8, Packet Vector #1 (13-byte nonce, 8-byte MIC, 8 bytes of AD).
    #[test]
    fn rfc3610_packet_vector_1() {
        let got = enc(
            || Box::new(CcmStar::<U8>::default()),
            "c0c1c2c3c4c5c6c7c8c9cacbcccdcecf",
            "00000003020100a0a1a2a3a4a5",
            "0001020304050607",
            "08090a0b0c0d0e0f101112131415161718191a1b1c1d1e",
        );
        assert_eq!(got, "588c979a61c663d2f066d0c2c0f989806d5f6b61dac38417e8d12cfdf926e0");
    }

    /// NIST CAVP CCMVS DVPT128.rsp, [Alen = 0, Plen = 24, Nlen = 13, Tlen = 4] Count 90 and
    /// [... Tlen = 16] Count 105 (Result = Pass).
    #[test]
    fn cavp_dvpt_mic4_and_mic16() {
        let pt = "a16a2e741f1cd9717285b6d882c1fc53655e9773761ad697";
        let nonce = "5a8aa485c316e9403aff859fbb";
        let got4 = enc(|| Box::new(CcmStar::<U4>::default()), "197afb02ffbd8f699dacae87094d5243", nonce, "", pt);
        assert_eq!(got4, "4a550134f94455979ec4bf89ad2bd80d25a77ae94e456134a3e138b9");
        let got16 = enc(|| Box::new(CcmStar::<U16>::default()), "90929a4b0ac65b350ad1591611fe4829", nonce, "", pt);
        assert_eq!(got16, "4bfe4e35784f0a65b545477e5e2f4bae0e1e6fa717eaf2cb6a9a970b9beb2ac1bd4fd62168f8378a");
    }

    /// Wrong nonce and MIC lengths are refused with the expected length, not truncated.
    #[test]
    fn lengths_are_checked() {
        let mut c = CcmStar::<U8>::default();
        c.set_key(&[0; 16]).unwrap();
        let mut tag = [0u8; 16];
        assert!(matches!(c.encrypt(&[0; 12], &[], &mut [], &mut tag[..8]), Err(CipherError::IvLength { .. })));
        assert!(matches!(
            c.encrypt(&[0; 13], &[], &mut [], &mut tag),
            Err(CipherError::TagLength { expected: 8, got: 16 })
        ));
    }

    /// The CCMVS reader: section parameters carry into records, record fields do not carry
    /// into the next record (a Fail record has no Payload).
    #[test]
    fn ccmvs_records_inherit_parameters_only() {
        let text = "# x\nAlen = 32\n\n[Tlen = 4]\n\nKey = 00\nNonce = 11\n\nCount = 0\nPayload = 22\nCT = 33\n\n\
                    [Alen = 0, Plen = 0, Nlen = 13, Tlen = 8]\nKey = 44\n\nCount = 1\nNonce = 55\nCT = 66\nResult = Fail\n";
        let r = parse_ccmvs(text).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].fields["Alen"], "32");
        assert_eq!(r[0].fields["Tlen"], "4");
        assert_eq!(r[0].fields["Key"], "00");
        assert_eq!(r[0].fields["Payload"], "22");
        assert_eq!(r[1].fields["Alen"], "0");
        assert_eq!(r[1].fields["Key"], "44");
        assert!(!r[1].fields.contains_key("Payload"));
        assert!(parse_ccmvs("[Tlen = 4\n").is_err());
        assert!(parse_ccmvs("Count 0\n").is_err());
    }
}
