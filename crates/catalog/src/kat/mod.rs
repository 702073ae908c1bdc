//! Known-answer test data: parsers for the shared vector formats and helpers.
pub mod block;
pub mod cryptopp;
pub mod estream;
mod files;
pub mod lwc;
mod text;
pub mod wycheproof;

pub use files::{path_label, read_text, repo_file};
pub use text::unhex;

use std::path::Path;

use lwcbench_core::{Aead, StreamCipher};

use crate::verify::{Check, VerifyCtx};

/// Run stream-cipher tests from a Crypto++-format file: every test whose `Name` field is in
/// `names` (a section's Name applies to its tests). Ciphertext = plaintext XOR keystream,
/// after skipping `InitialBlock` × `block_bytes` (or `Seek`) keystream bytes.
pub fn stream_cryptopp(
    mk: fn() -> Box<dyn StreamCipher + Send>,
    path: &Path,
    names: &[&str],
    block_bytes: usize,
) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(format!("{}/{}", info.name, info.implementation), path_label(path));
    let tests = match cryptopp::parse_file(path) {
        Ok(t) => t,
        Err(e) => {
            chk.fail(e);
            return chk;
        }
    };
    let mut not_applicable = 0usize;
    for t in tests.iter().filter(|t| t.get("Name").is_some_and(|n| names.contains(&n))) {
        if t.get("Test") != Some("Encrypt") {
            continue;
        }
        let r = (|| -> Result<(), String> {
            let key = t.bytes("Key")?;
            let iv = t.bytes("IV")?;
            let pt = t.bytes("Plaintext")?;
            let want = t.bytes("Ciphertext")?;
            let pos = |f: &str| {
                t.get(f).map(|v| cryptopp::parse_uint(v).map_err(|e| format!("line {}: {f}: {e}", t.line))).transpose()
            };
            let skip = match (pos("InitialBlock")?, pos("Seek")?) {
                (Some(b), _) => b.saturating_mul(block_bytes as u64),
                (None, Some(s)) => s,
                _ => 0,
            };
            if skip > MAX_SKIP {
                not_applicable += 1; // the trait has no seek; generating 2^38 bytes is not a test
                return Ok(());
            }
            let skip = skip as usize;
            c.init(&key, &iv).map_err(|e| format!("line {}: {e}", t.line))?;
            let mut sink = vec![0u8; skip];
            c.keystream(&mut sink).map_err(|e| e.to_string())?;
            let mut buf = pt.clone();
            c.apply(&mut buf).map_err(|e| e.to_string())?;
            chk.expect_eq(format!("line {}", t.line), &buf, &want);
            Ok(())
        })();
        if let Err(e) = r {
            chk.fail(e);
        }
    }
    if not_applicable > 0 {
        chk.what +=
            &format!(" ({not_applicable} vectors starting beyond {MAX_SKIP} keystream bytes not applicable: no seek)");
    }
    if chk.passed == 0 && chk.failures.is_empty() {
        chk.fail(format!("no test named {names:?} found"));
    }
    chk
}

/// Longest keystream prefix a vector may ask to skip (1 MiB).
const MAX_SKIP: u64 = 1 << 20;

/// Run AEAD tests from a Crypto++-format file (`Header` = AD, `MAC` = tag, Ciphertext
/// without tag). Also checks that decryption of the expected ciphertext succeeds and that a
/// modified tag is rejected.
pub fn aead_cryptopp(mk: fn() -> Box<dyn Aead + Send>, path: &Path, names: &[&str]) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(format!("{}/{}", info.name, info.implementation), path_label(path));
    let tests = match cryptopp::parse_file(path) {
        Ok(t) => t,
        Err(e) => {
            chk.fail(e);
            return chk;
        }
    };
    for t in tests.iter().filter(|t| t.get("Name").is_some_and(|n| names.contains(&n))) {
        let r = (|| -> Result<(), String> {
            let key = t.bytes("Key")?;
            let iv = t.bytes("IV")?;
            let ad = t.bytes("Header").unwrap_or_default();
            let pt = t.bytes("Plaintext")?;
            let want_ct = t.bytes("Ciphertext")?;
            let want_tag = t.bytes("MAC")?;
            if key.len() != info.key_bytes() || iv.len() != info.iv_bytes() || want_tag.len() != info.tag_bytes() {
                return Ok(()); // other parameter set in the same file
            }
            c.set_key(&key).map_err(|e| format!("line {}: {e}", t.line))?;
            match t.get("Test") {
                Some("Encrypt") => {
                    let mut buf = pt.clone();
                    let mut tag = vec![0u8; want_tag.len()];
                    c.encrypt(&iv, &ad, &mut buf, &mut tag).map_err(|e| format!("line {}: {e}", t.line))?;
                    chk.expect_eq(format!("line {} ciphertext", t.line), &buf, &want_ct);
                    chk.expect_eq(format!("line {} tag", t.line), &tag, &want_tag);
                    let mut back = want_ct.clone();
                    let ok = c.decrypt(&iv, &ad, &mut back, &want_tag).is_ok() && back == pt;
                    chk.expect(format!("line {} decrypts", t.line), ok);
                }
                Some("NotVerify") => {
                    let mut back = want_ct.clone();
                    chk.expect(format!("line {} rejected", t.line), c.decrypt(&iv, &ad, &mut back, &want_tag).is_err());
                }
                _ => {}
            }
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

/// Run `f` on a shared vector file if the shared folder exists; a skip otherwise.
pub fn shared(ctx: &VerifyCtx, id: &str, rel: &str, f: impl FnOnce(&Path) -> Check) -> Check {
    match ctx.file(rel) {
        Some(p) => f(&p),
        None => Check::skipped(id, format!("shared/vectors/{rel} (folder absent)")),
    }
}

#[cfg(test)]
mod built_in_tests {
    use super::*;

    /// The built-in list is the kat-data folder, file for file and byte for byte, and no
    /// file on disk is read in its place.
    #[test]
    fn built_in_files_are_the_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kat-data");
        let mut on_disk: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        on_disk.sort();
        let listed: Vec<String> = files::BUILT_IN.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(listed, on_disk, "BUILT_IN in kat/mod.rs lists every file of kat-data/, sorted");
        for (name, text) in files::BUILT_IN {
            assert_eq!(*text, std::fs::read_to_string(dir.join(name)).unwrap(), "{name}");
            assert_eq!(read_text(&repo_file(name)).unwrap(), *text, "{name}");
        }
        assert_eq!(path_label(&repo_file("rfc8439.txt")), "kat-data/rfc8439.txt");
        let err = read_text(&repo_file("absent.txt")).unwrap_err();
        assert_eq!(err, "kat-data/absent.txt: no such built-in vector file");
    }
}
