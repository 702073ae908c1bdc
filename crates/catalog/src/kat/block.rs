//! Block-cipher vector runners: Crypto++-format files (`Name`/`Key`/`IV`/`Plaintext`/
//! `Ciphertext`, ECB/CBC/CTR over [`BlockCipher`]) and `Field = value` files (NIST CAVP `.rsp`,
//! Botan `.vec`, the SIMON/SPECK paper transcription).
use std::path::Path;

use lwcbench_core::{BlockCipher, CipherInfo};

use crate::kat::{self, cryptopp};
use crate::verify::Check;

fn id_of(info: &CipherInfo) -> String {
    format!("{}/{}", info.name, info.implementation)
}

/// Modes the Crypto++ block-cipher files use, run over [`BlockCipher`] to reach their vectors.
fn mode_apply(c: &dyn BlockCipher, mode: &str, iv: &[u8], data: &mut [u8], encrypt: bool) -> Result<(), String> {
    let bb = c.info().block_bytes();
    match mode {
        "ECB" | "CBC" => {
            if !data.chunks_exact(bb).remainder().is_empty() {
                return Err(format!("{mode}: data length {} not a multiple of {bb}", data.len()));
            }
            let mut chain = iv.to_vec();
            for blk in data.chunks_exact_mut(bb) {
                if mode == "ECB" {
                    if encrypt {
                        c.encrypt_block(blk)
                    } else {
                        c.decrypt_block(blk)
                    }
                } else if encrypt {
                    blk.iter_mut().zip(&chain).for_each(|(b, v)| *b ^= v);
                    c.encrypt_block(blk);
                    chain.copy_from_slice(blk);
                } else {
                    let saved = blk.to_vec();
                    c.decrypt_block(blk);
                    blk.iter_mut().zip(&chain).for_each(|(b, v)| *b ^= v);
                    chain = saved;
                }
            }
            Ok(())
        }
        "CTR" => {
            // Crypto++ CTR: the whole block is a big-endian counter starting at IV.
            let mut ctr = iv.to_vec();
            for blk in data.chunks_mut(bb) {
                let mut ks = ctr.clone();
                c.encrypt_block(&mut ks);
                blk.iter_mut().zip(&ks).for_each(|(b, k)| *b ^= k);
                for byte in ctr.iter_mut().rev() {
                    *byte = byte.wrapping_add(1);
                    if *byte != 0 {
                        break;
                    }
                }
            }
            Ok(())
        }
        m => Err(format!("unsupported mode {m}")),
    }
}

/// Run block-cipher tests from a Crypto++-format file: every `Encrypt` test whose `Name` is
/// in `names` (`ALG/ECB`, `ALG/CBC` or `ALG/CTR`) and whose key length fits the cipher;
/// checks encryption and decryption. Tests with a `Rounds` field run only if it equals
/// `rounds` (Crypto++'s XTEA tests vary the cycle count).
pub fn block_cryptopp(
    mk: fn() -> Box<dyn BlockCipher + Send>,
    path: &Path,
    names: &[&str],
    rounds: Option<&str>,
) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(id_of(&info), kat::path_label(path));
    let tests = match cryptopp::parse_file(path) {
        Ok(t) => t,
        Err(e) => {
            chk.fail(e);
            return chk;
        }
    };
    for t in tests.iter().filter(|t| t.get("Name").is_some_and(|n| names.contains(&n))) {
        if t.get("Test") != Some("Encrypt") || t.get("Rounds").is_some_and(|r| Some(r.trim()) != rounds) {
            continue;
        }
        let mode = t.get("Name").and_then(|n| n.rsplit('/').next()).unwrap_or("");
        // lea.txt writes some values as C arrays ("0x7A, 0xD3, …", two end with a stray "}}");
        // Crypto++'s decoder skips those characters, the shared parser does not.
        let bytes = |k: &str| -> Result<Vec<u8>, String> {
            let v = t.get(k).ok_or_else(|| format!("line {}: field {k} missing", t.line))?;
            let v = v.replace(',', " ").replace(['{', '}'], "");
            cryptopp::decode_value(&v).map_err(|e| format!("line {}: field {k}: {e}", t.line))
        };
        let r = (|| -> Result<(), String> {
            let key = bytes("Key")?;
            if key.len() != info.key_bytes() {
                return Ok(()); // another key size in the same section
            }
            let iv = if mode == "ECB" { vec![0u8; info.block_bytes()] } else { bytes("IV")? };
            let pt = bytes("Plaintext")?;
            let want = bytes("Ciphertext")?;
            c.set_key(&key).map_err(|e| format!("line {}: {e}", t.line))?;
            let mut buf = pt.clone();
            mode_apply(&*c, mode, &iv, &mut buf, true).map_err(|e| format!("line {}: {e}", t.line))?;
            chk.expect_eq(format!("line {} {mode} encrypt", t.line), &buf, &want);
            let mut back = want.clone();
            mode_apply(&*c, mode, &iv, &mut back, mode == "CTR").map_err(|e| format!("line {}: {e}", t.line))?;
            chk.expect_eq(format!("line {} {mode} decrypt", t.line), &back, &pt);
            Ok(())
        })();
        if let Err(e) = r {
            chk.fail(e);
        }
    }
    if chk.passed == 0 && chk.failures.is_empty() {
        chk.fail(format!("no usable test named {names:?} found"));
    }
    chk
}

/// A record of `Field = value` lines (CAVP `.rsp`, Botan `.vec`, the SIMON/SPECK paper
/// transcription), with the `[section]` it sits in.
struct Record {
    line: usize,
    section: String,
    fields: Vec<(String, String)>,
}

impl Record {
    fn get(&self, k: &str) -> Result<&str, String> {
        self.fields
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| format!("line {}: field {k} missing", self.line))
    }
    fn hex(&self, k: &str) -> Result<Vec<u8>, String> {
        kat::unhex(self.get(k)?).map_err(|e| format!("line {}: {k}: {e}", self.line))
    }
}

/// Parse `Field = value` records separated by blank lines; `#` starts a comment, `[X]`
/// opens a section. Any other line is an error.
fn parse_records(path: &Path) -> Result<Vec<Record>, String> {
    let text = crate::kat::read_text(path)?;
    let mut out = Vec::new();
    let mut section = String::new();
    let mut cur: Option<Record> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            if raw.trim().is_empty() {
                out.extend(cur.take());
            }
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            out.extend(cur.take());
            section = s.trim().to_string();
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| format!("{}: line {}: expected 'Field = value', found {line:?}", path.display(), i + 1))?;
        cur.get_or_insert_with(|| Record { line: i + 1, section: section.clone(), fields: Vec::new() })
            .fields
            .push((k.trim().to_string(), v.trim().to_string()));
    }
    out.extend(cur.take());
    Ok(out)
}

/// Which `Field = value` dialect a file uses.
#[derive(Clone, Copy)]
pub enum KvFormat {
    /// NIST CAVP AESAVS ECB `.rsp`: `KEY`, `PLAINTEXT`, `CIPHERTEXT` (both directions checked
    /// in `[ENCRYPT]` and `[DECRYPT]` sections alike).
    CavpEcb,
    /// Botan `.vec` block-cipher tests: `Key`, `In`, `Out` (ECB, possibly several blocks).
    Botan,
    /// The SIMON/SPECK paper transcription: records whose `Name` equals the given name, words
    /// most significant first — converted to bytes by reversing the hex string.
    Paper(&'static str),
}

/// Run a `Field = value` vector file (see [`KvFormat`]) against a block cipher.
pub fn block_kv(mk: fn() -> Box<dyn BlockCipher + Send>, path: &Path, fmt: KvFormat) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(id_of(&info), kat::path_label(path));
    let recs = match parse_records(path) {
        Ok(r) => r,
        Err(e) => {
            chk.fail(e);
            return chk;
        }
    };
    let rev = |r: &Record, k: &str| -> Result<Vec<u8>, String> {
        let mut b = kat::unhex(r.get(k)?).map_err(|e| format!("line {}: {k}: {e}", r.line))?;
        b.reverse();
        Ok(b)
    };
    for r in &recs {
        let res = (|| -> Result<(), String> {
            let (key, pt, ct) = match fmt {
                KvFormat::CavpEcb => {
                    if r.get("COUNT").is_err() {
                        return Ok(()); // header-only record
                    }
                    (r.hex("KEY")?, r.hex("PLAINTEXT")?, r.hex("CIPHERTEXT")?)
                }
                KvFormat::Botan => (r.hex("Key")?, r.hex("In")?, r.hex("Out")?),
                KvFormat::Paper(name) => {
                    if r.get("Name")? != name {
                        return Ok(());
                    }
                    (rev(r, "Key")?, rev(r, "Plaintext")?, rev(r, "Ciphertext")?)
                }
            };
            c.set_key(&key).map_err(|e| format!("line {}: {e}", r.line))?;
            let zero = vec![0u8; info.block_bytes()];
            let mut buf = pt.clone();
            mode_apply(&*c, "ECB", &zero, &mut buf, true).map_err(|e| format!("line {}: {e}", r.line))?;
            chk.expect_eq(format!("line {} [{}] encrypt", r.line, r.section), &buf, &ct);
            let mut back = ct.clone();
            mode_apply(&*c, "ECB", &zero, &mut back, false).map_err(|e| format!("line {}: {e}", r.line))?;
            chk.expect_eq(format!("line {} [{}] decrypt", r.line, r.section), &back, &pt);
            Ok(())
        })();
        if let Err(e) = res {
            chk.fail(e);
        }
    }
    if chk.passed == 0 && chk.failures.is_empty() {
        chk.fail("no usable vector in file");
    }
    chk
}
