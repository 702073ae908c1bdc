//! The vector files: the transcribed ones built into the binary, any other read from disk.
//! A leaf of `kat` (the parsers read files through it).
use std::path::Path;

/// Where the built-in vector files appear to be: a name no file system has, so a file on disk is
/// never taken for one (labels keep the `kat-data/NAME` form, see [`path_label`]).
const BUILT_IN_DIR: &str = "<built-in>/kat-data";

/// The transcribed vector files of `crates/catalog/kat-data/`, built into the binary so `verify`
/// needs no checkout (224 KiB; a test keeps this list equal to the folder).
pub(super) const BUILT_IN: &[(&str, &str)] = &[
    ("aes-modes.txt", include_str!("../../kat-data/aes-modes.txt")),
    ("ccm-star.txt", include_str!("../../kat-data/ccm-star.txt")),
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
