//! Parser and runner for NIST Lightweight Cryptography KAT files (`LWC_AEAD_KAT_*.txt`, the
//! format of the NIST LWC submission packages; shared README §1.2): records separated by blank
//! lines, each `Count = n`, `Key = hex`, `Nonce = hex`, `PT = hex`, `AD = hex`,
//! `CT = hex` where **CT = ciphertext ‖ tag**. Hex is a plain byte string, first byte first.
//! Lines starting with `#` are comments (not in the NIST files; used by kat-data transcriptions).
use std::path::Path;

use lwcbench_core::{Aead, CipherError};

use crate::entry::Entry;
use crate::verify::{Check, VerifyCtx};

/// One AEAD known answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vector {
    /// Line of the `Count` field (for messages).
    pub line: usize,
    /// The `Count` field.
    pub count: u32,
    /// The key.
    pub key: Vec<u8>,
    /// The nonce.
    pub nonce: Vec<u8>,
    /// The plaintext.
    pub pt: Vec<u8>,
    /// The associated data.
    pub ad: Vec<u8>,
    /// Ciphertext followed by the tag.
    pub ct: Vec<u8>,
}

/// Parse a file; the error names the file and line.
pub fn parse_file(path: &Path) -> Result<Vec<Vector>, String> {
    let text = crate::kat::read_text(path)?;
    parse_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parse KAT text. Any line that is not `Field = hex` with a known field, a record missing a
/// field, or a repeated field is an error: a damaged file must fail, not shrink silently.
pub fn parse_str(text: &str) -> Result<Vec<Vector>, String> {
    #[derive(Default)]
    struct Partial {
        line: usize,
        count: Option<u32>,
        fields: [Option<Vec<u8>>; 5],
    }
    const NAMES: [&str; 5] = ["Key", "Nonce", "PT", "AD", "CT"];
    fn close(p: Partial, out: &mut Vec<Vector>) -> Result<(), String> {
        let l = p.line;
        let count = p.count.ok_or(format!("line {l}: record without Count"))?;
        let [key, nonce, pt, ad, ct] = p.fields;
        let get =
            |f: Option<Vec<u8>>, i: usize| f.ok_or(format!("line {l}: record Count = {count} lacks {}", NAMES[i]));
        out.push(Vector {
            line: l,
            count,
            key: get(key, 0)?,
            nonce: get(nonce, 1)?,
            pt: get(pt, 2)?,
            ad: get(ad, 3)?,
            ct: get(ct, 4)?,
        });
        Ok(())
    }
    let mut out = Vec::new();
    let mut cur: Option<Partial> = None;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim();
        if line.starts_with('#') {
            continue; // comment (used by the transcribed files in kat-data to name sources)
        }
        if line.is_empty() {
            if let Some(p) = cur.take() {
                close(p, &mut out)?;
            }
            continue;
        }
        let (name, value) =
            line.split_once('=').ok_or_else(|| format!("line {lineno}: expected 'Field = value', found {line:?}"))?;
        let (name, value) = (name.trim(), value.trim());
        let p = cur.get_or_insert_with(|| Partial { line: lineno, ..Partial::default() });
        if name == "Count" {
            if p.count.is_some() {
                return Err(format!("line {lineno}: second Count in one record (missing blank line?)"));
            }
            p.count = Some(value.parse().map_err(|e| format!("line {lineno}: Count: {e}"))?);
            continue;
        }
        let idx =
            NAMES.iter().position(|n| *n == name).ok_or_else(|| format!("line {lineno}: unknown field {name:?}"))?;
        if p.fields[idx].is_some() {
            return Err(format!("line {lineno}: field {name} repeated in one record"));
        }
        p.fields[idx] = Some(super::unhex(value).map_err(|e| format!("line {lineno}: {name}: {e}"))?);
    }
    if let Some(p) = cur.take() {
        close(p, &mut out)?;
    }
    Ok(out)
}

/// Run every vector of a NIST LWC KAT file against an [`Aead`]: encryption must give CT,
/// decryption of CT must return PT, and CT with one tag bit flipped must be rejected with the
/// buffer wiped. A file with no vector, or a vector whose sizes do not fit the cipher, fails.
pub fn aead_lwc(mk: fn() -> Box<dyn Aead + Send>, path: &Path) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(format!("{}/{}", info.name, info.implementation), super::path_label(path));
    let vectors = match parse_file(path) {
        Ok(v) => v,
        Err(e) => {
            chk.fail(e);
            return chk;
        }
    };
    if vectors.is_empty() {
        chk.fail(format!("{}: no vectors", path.display()));
    }
    let tb = info.tag_bytes();
    for v in &vectors {
        let label = format!("Count = {} (line {})", v.count, v.line);
        let r = (|| -> Result<(), CipherError> {
            if v.ct.len() != v.pt.len() + tb {
                return Err(CipherError::TagLength { expected: tb, got: v.ct.len().wrapping_sub(v.pt.len()) });
            }
            c.set_key(&v.key)?;
            let mut buf = v.pt.clone();
            let mut tag = vec![0u8; tb];
            c.encrypt(&v.nonce, &v.ad, &mut buf, &mut tag)?;
            buf.extend_from_slice(&tag);
            chk.expect_eq(format!("{label} encrypt"), &buf, &v.ct);

            let (want_ct, want_tag) = v.ct.split_at(v.pt.len());
            let mut back = want_ct.to_vec();
            let ok = c.decrypt(&v.nonce, &v.ad, &mut back, want_tag).is_ok() && back == v.pt;
            chk.expect(format!("{label} decrypts to PT"), ok);

            let mut bad = want_tag.to_vec();
            bad[tb - 1] ^= 0x80;
            let mut back = want_ct.to_vec();
            let r = c.decrypt(&v.nonce, &v.ad, &mut back, &bad);
            chk.expect(
                format!("{label} flipped tag bit rejected, buffer wiped"),
                r == Err(CipherError::AuthenticationFailed) && back.iter().all(|&b| b == 0),
            );
            Ok(())
        })();
        if let Err(e) = r {
            chk.fail(format!("{label}: {e}"));
        }
    }
    chk
}

/// The verification of an AEAD whose vectors are NIST LWC KAT files, table-driven by the
/// entry's [`Entry::kat`] facts: the AEAD contract (`conformance::check_aead`), the transcribed
/// file in `kat-data/`, then every shared file in order (each skipped without the folder).
/// An entry that is not an AEAD or names no files fails with a registration check.
pub fn verify_lwc_aead(e: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = match e.aead_make() {
        Ok(mk) => mk,
        Err(c) => return vec![c],
    };
    let Some(files) = e.kat else {
        let mut c = Check::new(e.id(), "registration");
        c.fail("verify_lwc_aead needs the entry's vector files: add .kat(\"lw-<name>.txt\", &[…])");
        return vec![c];
    };
    let id = e.id();
    let mut v = vec![crate::conformance::check_aead(mk), aead_lwc(mk, &super::repo_file(files.repo))];
    v.extend(files.shared.iter().map(|rel| super::shared(ctx, &id, rel, |p| aead_lwc(mk, p))));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry with vector files runs, in order, the AEAD contract, its transcribed file
    /// and each shared file, and uses the shared NIST LWC files whole: 1089 vectors (message
    /// and AD lengths 0..=32 each) × 3 comparisons.
    #[test]
    fn lwc_aeads_run_their_files_whole() {
        let ctx = VerifyCtx::discover();
        let lwc: Vec<Entry> = crate::registry().into_iter().filter(|e| e.kat.is_some()).collect();
        assert!(lwc.len() >= 6, "{:?}", lwc.iter().map(Entry::id).collect::<Vec<_>>());
        for e in &lwc {
            let files = e.kat.unwrap();
            let v = e.checks(&ctx);
            assert_eq!(v.len(), 2 + files.shared.len(), "{}", e.id());
            assert_eq!(v[0].what, "conformance: AEAD contract");
            assert_eq!(v[1].what, format!("kat-data/{}", files.repo));
            for (c, rel) in v[2..].iter().zip(files.shared) {
                assert!(c.what.contains(rel), "{}: {}", e.id(), c.what);
                if ctx.vectors.is_some() {
                    assert_eq!(c.passed, 1089 * 3, "{}: {}", e.id(), c.what);
                }
            }
        }
    }

    /// The verification reads the entry's facts, so wrong facts fail: another cipher's file,
    /// no files at all, or an entry that is not an AEAD (a failed check, not a panic).
    #[test]
    fn lwc_verification_follows_the_entrys_files() {
        let ctx = VerifyCtx::default();
        let ascon128 = crate::find("Ascon-128/rustcrypto").unwrap();
        assert!(verify_lwc_aead(&ascon128, &ctx).iter().all(Check::ok));
        let wrong = ascon128.clone().kat("lw-ascon-aead128.txt", &[]);
        let v = verify_lwc_aead(&wrong, &ctx);
        assert!(v[0].ok() && !v[1].ok(), "{v:?}");
        let mut bare = ascon128;
        bare.kat = None;
        let v = verify_lwc_aead(&bare, &ctx);
        assert!(v.len() == 1 && v[0].what == "registration" && !v[0].ok(), "{v:?}");
        let block = crate::find("XTEA/rustcrypto").unwrap().kat("lw-xtea.txt", &[]);
        let v = verify_lwc_aead(&block, &ctx);
        assert!(v.len() == 1 && v[0].failures[0].contains("expects a aead entry"), "{v:?}");
    }

    #[test]
    fn parses_records_and_rejects_damage() {
        let t = "Count = 1\r\nKey = 0001\r\nNonce = 02\r\nPT = \r\nAD = \r\nCT = AABB\r\n\r\nCount = 2\nKey = 00\nNonce = 02\nPT = 10\nAD = 3F\nCT = 00FF\n";
        let v = parse_str(t).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].key, vec![0, 1]);
        assert!(v[0].pt.is_empty() && v[0].ad.is_empty());
        assert_eq!(v[0].ct, vec![0xaa, 0xbb]);
        assert_eq!((v[1].count, v[1].line), (2, 8));
        assert_eq!(v[1].ad, vec![0x3f]);
        // missing field, unknown field, bad hex, two records without a blank line
        assert!(parse_str("Count = 1\nKey = 00\nNonce = 00\nPT =\nCT = 00\n").unwrap_err().contains("lacks AD"));
        assert!(parse_str("Count = 1\nKex = 00\n").unwrap_err().contains("unknown field"));
        assert!(parse_str("Count = 1\nKey = 0g\n").unwrap_err().contains("line 2"));
        assert!(parse_str("Count = 1\nKey = 00\nCount = 2\n").is_err());
        assert!(parse_str("garbage\n").is_err());
        assert_eq!(parse_str("# c\nCount = 1\nKey =\nNonce =\nPT =\nAD =\nCT = 00\n").unwrap().len(), 1);
    }
}
