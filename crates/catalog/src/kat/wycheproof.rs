//! Reader and runner for Wycheproof AEAD test files (C2SP/wycheproof `testvectors_v1`,
//! schema `aead_test_schema_v1.json`; shared README §1.1): `testGroups[]` with
//! `keySize`/`ivSize`/`tagSize` in bits and `tests[]` of `tcId`, `comment`, `flags`,
//! `result` (valid / invalid / acceptable) and hex `key`, `iv`, `aad`, `msg`, `ct` (ciphertext
//! **without** tag), `tag`.
use std::path::Path;

use lwcbench_core::Aead;
use serde::Deserialize;

use crate::verify::Check;

/// A Wycheproof AEAD test file.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct File {
    /// The algorithm, e.g. "AES-GCM".
    pub algorithm: String,
    /// The schema file name.
    pub schema: String,
    /// Tests in the file, as the file states it.
    pub number_of_tests: usize,
    /// The test groups.
    pub test_groups: Vec<Group>,
}

/// Tests sharing key, IV and tag sizes.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    /// Key size in bits.
    pub key_size: u32,
    /// IV size in bits.
    pub iv_size: u32,
    /// Tag size in bits.
    pub tag_size: u32,
    /// The group's tests.
    pub tests: Vec<AeadTest>,
}

/// One AEAD test case; byte fields are hex.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AeadTest {
    /// Test case id.
    pub tc_id: u32,
    /// What the case tests.
    #[serde(default)]
    pub comment: String,
    /// Flags naming the kind of case.
    #[serde(default)]
    pub flags: Vec<String>,
    /// The key.
    pub key: String,
    /// The IV or nonce.
    pub iv: String,
    /// The associated data.
    pub aad: String,
    /// The plaintext.
    pub msg: String,
    /// The ciphertext, without tag.
    pub ct: String,
    /// The tag.
    pub tag: String,
    /// The expected outcome.
    pub result: Verdict,
}

/// The expected outcome of a test case.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Must decrypt and verify.
    Valid,
    /// Must be refused.
    Invalid,
    /// Either outcome is acceptable (e.g. a short IV some libraries refuse).
    Acceptable,
}

/// Read and parse a file; an unreadable file, bad JSON, a schema other than the AEAD one or
/// a test count that disagrees with `numberOfTests` is an error.
pub fn parse_file(path: &Path) -> Result<File, String> {
    let text = crate::kat::read_text(path)?;
    parse_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parse a file's text (see [`parse_file`] for what is an error).
pub fn parse_str(text: &str) -> Result<File, String> {
    let f: File = serde_json::from_str(text).map_err(|e| format!("JSON: {e}"))?;
    if !f.schema.starts_with("aead_test_schema") {
        return Err(format!("schema {:?} is not an AEAD test schema", f.schema));
    }
    let n: usize = f.test_groups.iter().map(|g| g.tests.len()).sum();
    if n != f.number_of_tests {
        return Err(format!("numberOfTests = {} but {n} tests present", f.number_of_tests));
    }
    Ok(f)
}

/// Run every test of a Wycheproof AEAD file and check its verdict.
///
/// * `valid`: encryption gives `ct` and `tag`, decryption returns `msg`.
/// * `invalid`: decryption must fail. A nonce/tag/key size the [`Aead`] API refuses counts as
///   a correct rejection.
/// * `acceptable`: either outcome passes, but a successful decryption must return `msg`.
pub fn aead_wycheproof(mk: fn() -> Box<dyn Aead + Send>, path: &Path) -> Check {
    aead_wycheproof_groups(mk, path, &|_| true)
}

/// [`aead_wycheproof`] over the groups `keep` selects (an implementation with one fixed key,
/// nonce and tag size runs the groups of its parameter set).
pub fn aead_wycheproof_groups(mk: fn() -> Box<dyn Aead + Send>, path: &Path, keep: &dyn Fn(&Group) -> bool) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(format!("{}/{}", info.name, info.implementation), super::path_label(path));
    let file = match parse_file(path) {
        Ok(f) => f,
        Err(e) => {
            chk.fail(e);
            return chk;
        }
    };
    for g in file.test_groups.iter().filter(|g| keep(g)) {
        for t in &g.tests {
            let label = format!("tcId {} ({}; {:?}; {:?})", t.tc_id, t.comment, t.flags, t.result);
            let dec = |s: &str| super::unhex(s).map_err(|e| format!("tcId {}: {e}", t.tc_id));
            let (key, iv, aad, msg, ct, tag) =
                match (dec(&t.key), dec(&t.iv), dec(&t.aad), dec(&t.msg), dec(&t.ct), dec(&t.tag)) {
                    (Ok(a), Ok(b), Ok(c), Ok(d), Ok(e), Ok(f)) => (a, b, c, d, e, f),
                    (a, b, c, d, e, f) => {
                        for r in [a, b, c, d, e, f] {
                            if let Err(e) = r {
                                chk.fail(e);
                            }
                        }
                        continue;
                    }
                };
            let keyed = c.set_key(&key);
            let mut back = ct.clone();
            let opened = keyed.and_then(|_| c.decrypt(&iv, &aad, &mut back, &tag));
            match t.result {
                Verdict::Valid => {
                    let mut buf = msg.clone();
                    let mut got_tag = vec![0u8; tag.len()];
                    match keyed.and_then(|_| c.encrypt(&iv, &aad, &mut buf, &mut got_tag)) {
                        Ok(()) => {
                            chk.expect_eq(format!("{label} ciphertext"), &buf, &ct);
                            chk.expect_eq(format!("{label} tag"), &got_tag, &tag);
                        }
                        Err(e) => chk.fail(format!("{label}: encrypt failed: {e}")),
                    }
                    chk.expect(format!("{label}: decrypts to msg"), opened.is_ok() && back == msg);
                }
                Verdict::Invalid => chk.expect(format!("{label}: must be rejected"), opened.is_err()),
                Verdict::Acceptable => {
                    chk.expect(format!("{label}: accepted but wrong plaintext"), opened.is_err() || back == msg)
                }
            }
        }
    }
    if chk.passed == 0 && chk.failures.is_empty() {
        chk.fail("no tests in file");
    }
    chk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_checks_counts() {
        let ok = r#"{"algorithm":"X","schema":"aead_test_schema_v1.json","numberOfTests":1,"notes":{},
            "testGroups":[{"ivSize":96,"keySize":256,"tagSize":128,"type":"AeadTest","tests":[
            {"tcId":1,"comment":"","flags":[],"key":"00","iv":"01","aad":"","msg":"","ct":"","tag":"ff","result":"invalid"}]}]}"#;
        let f = parse_str(ok).unwrap();
        assert_eq!(f.test_groups[0].tests[0].result, Verdict::Invalid);
        assert_eq!(f.test_groups[0].iv_size, 96);
        assert!(parse_str(&ok.replace("\"numberOfTests\":1", "\"numberOfTests\":2"))
            .unwrap_err()
            .contains("numberOfTests"));
        assert!(parse_str(&ok.replace("aead_test_schema", "mac_test_schema")).is_err());
        assert!(parse_str(&ok.replace("invalid", "bogus")).is_err());
        assert!(parse_str("{").is_err());
    }
}
