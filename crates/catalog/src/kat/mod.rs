//! Known-answer test data: parsers for the shared vector formats and helpers.
pub mod block;
pub mod cryptopp;
pub mod estream;
pub mod lwc;
mod text;
pub mod wycheproof;

pub use text::unhex;

use std::path::Path;

use lwcbench_core::{Aead, StreamCipher};

use crate::verify::{Check, VerifyCtx};

/// Where the built-in vector files appear to be: a name no file system has, so a file on disk is
/// never taken for one (labels keep the `kat-data/NAME` form, see [`path_label`]).
const BUILT_IN_DIR: &str = "<built-in>/kat-data";

/// The transcribed vector files of `crates/catalog/kat-data/`, built into the binary so `verify`
/// needs no checkout (224 KiB; a test keeps this list equal to the folder).
const BUILT_IN: &[(&str, &str)] = &[
    ("aes-modes.txt", include_str!("../../kat-data/aes-modes.txt")),
    ("estream-grain-v1.txt", include_str!("../../kat-data/estream-grain-v1.txt")),
    ("estream-grain128a-mac.txt", include_str!("../../kat-data/estream-grain128a-mac.txt")),
    ("estream-grain128a.txt", include_str!("../../kat-data/estream-grain128a.txt")),
    ("estream-hc128.txt", include_str!("../../kat-data/estream-hc128.txt")),
    ("estream-mickey128.txt", include_str!("../../kat-data/estream-mickey128.txt")),
    ("estream-mickey80-regenerated.txt", include_str!("../../kat-data/estream-mickey80-regenerated.txt")),
    ("estream-mickey80.txt", include_str!("../../kat-data/estream-mickey80.txt")),
    ("estream-rabbit.txt", include_str!("../../kat-data/estream-rabbit.txt")),
    ("estream-salsa20-128.txt", include_str!("../../kat-data/estream-salsa20-128.txt")),
    ("estream-salsa20-256.txt", include_str!("../../kat-data/estream-salsa20-256.txt")),
    ("estream-sosemanuk-k128.txt", include_str!("../../kat-data/estream-sosemanuk-k128.txt")),
    ("estream-sosemanuk-k256.txt", include_str!("../../kat-data/estream-sosemanuk-k256.txt")),
    ("estream-sosemanuk.txt", include_str!("../../kat-data/estream-sosemanuk.txt")),
    ("estream-trivium.txt", include_str!("../../kat-data/estream-trivium.txt")),
    ("lw-aes.txt", include_str!("../../kat-data/lw-aes.txt")),
    ("lw-ascon-aead128.txt", include_str!("../../kat-data/lw-ascon-aead128.txt")),
    ("lw-ascon128v12.txt", include_str!("../../kat-data/lw-ascon128v12.txt")),
    ("lw-grain128aeadv2.txt", include_str!("../../kat-data/lw-grain128aeadv2.txt")),
    ("lw-hight.txt", include_str!("../../kat-data/lw-hight.txt")),
    ("lw-lea.txt", include_str!("../../kat-data/lw-lea.txt")),
    ("lw-schwaemm256-128.txt", include_str!("../../kat-data/lw-schwaemm256-128.txt")),
    ("lw-simon-speck.txt", include_str!("../../kat-data/lw-simon-speck.txt")),
    ("lw-tinyjambu128.txt", include_str!("../../kat-data/lw-tinyjambu128.txt")),
    ("lw-xoodyak.txt", include_str!("../../kat-data/lw-xoodyak.txt")),
    ("lw-xtea.txt", include_str!("../../kat-data/lw-xtea.txt")),
    ("rfc8439.txt", include_str!("../../kat-data/rfc8439.txt")),
    ("rfc8452.txt", include_str!("../../kat-data/rfc8452.txt")),
    ("xchacha.txt", include_str!("../../kat-data/xchacha.txt")),
];

/// A transcribed vector file kept in the repository (`crates/catalog/kat-data/`), built in:
/// read it with [`read_text`].
pub fn repo_file(name: &str) -> std::path::PathBuf {
    Path::new(BUILT_IN_DIR).join(name)
}

/// The text of a vector file: a built-in one ([`repo_file`]) from the binary, any other from disk.
pub fn read_text(path: &Path) -> Result<String, String> {
    if let Ok(name) = path.strip_prefix(BUILT_IN_DIR) {
        return BUILT_IN
            .iter()
            .find(|(n, _)| Path::new(n) == name)
            .map(|(_, text)| (*text).to_string())
            .ok_or_else(|| format!("{}: no such built-in vector file", path_label(path)));
    }
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

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

/// Short label for a vector file: path relative to the shared folder or kat-data.
pub fn path_label(p: &Path) -> String {
    let s = p.display().to_string();
    for marker in ["shared/vectors/", "kat-data/"] {
        if let Some(i) = s.find(marker) {
            return s[i..].to_string();
        }
    }
    s
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
        let listed: Vec<String> = BUILT_IN.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(listed, on_disk, "BUILT_IN in kat/mod.rs lists every file of kat-data/, sorted");
        for (name, text) in BUILT_IN {
            assert_eq!(*text, std::fs::read_to_string(dir.join(name)).unwrap(), "{name}");
            assert_eq!(read_text(&repo_file(name)).unwrap(), *text, "{name}");
        }
        assert_eq!(path_label(&repo_file("rfc8439.txt")), "kat-data/rfc8439.txt");
        let err = read_text(&repo_file("absent.txt")).unwrap_err();
        assert_eq!(err, "kat-data/absent.txt: no such built-in vector file");
    }
}
