//! Parser and runner for eSTREAM (ECRYPT) `*.test-vectors` files (format: shared
//! `vectors/README.md` §1.5).
//!
//! A file holds one or more header blocks (`Primitive Name`, `Profile`, `Key size: N bits`,
//! `IV size: N bits`), each followed by sets of vectors `Set N, vector# M:` with
//! `key = …`, `IV = …` (possibly empty), excerpts `stream[a..b] = …` (hex continued on
//! indented lines) and `xor-digest = …` (XOR of all 64-byte blocks of the whole generated
//! stream; the stream is as long as the last excerpt reaches: 512 bytes in sets 1–5,
//! 131072 in set 6). Every block ends with `End of test vectors`.
//!
//! Lines starting with `#` are comments (used only by the transcribed files in `kat-data/`).
//! Hex strings are byte strings (byte 0 first); the cipher adapter is responsible for the
//! cipher-specific bit mapping (README §2). Anything the parser does not recognise is an
//! error, so a damaged file fails instead of silently testing less.
use std::path::Path;

use lwcbench_core::StreamCipher;

use crate::conformance;
use crate::entry::Entry;
use crate::kat::shared;
use crate::kat::{path_label, unhex};
use crate::verify::{Check, VerifyCtx};

/// One test vector.
#[derive(Clone, Debug, Default)]
pub struct Vector {
    /// Line of the `Set N, vector# M:` header.
    pub line: usize,
    /// `"Set N, vector# M"` as printed.
    pub label: String,
    /// The `Primitive Name:` of the block the vector is in.
    pub primitive: String,
    /// Sizes from the block header (bits).
    pub key_bits: usize,
    /// IV size from the block header (bits).
    pub iv_bits: usize,
    /// The key.
    pub key: Vec<u8>,
    /// The IV.
    pub iv: Vec<u8>,
    /// (first byte offset, expected keystream bytes).
    pub excerpts: Vec<(usize, Vec<u8>)>,
    /// The 64-byte XOR digest of the whole stream, if the file gives one.
    pub xor_digest: Option<Vec<u8>>,
}

impl Vector {
    /// Length of the generated stream: up to the end of the last excerpt.
    pub fn stream_len(&self) -> usize {
        self.excerpts.iter().map(|(a, b)| a + b.len()).max().unwrap_or(0)
    }
}

/// Parse a file; the error names the file and line.
pub fn parse_file(path: &Path) -> Result<Vec<Vector>, String> {
    let text = crate::kat::read_text(path)?;
    parse_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[derive(Default)]
struct Header {
    primitive: String,
    key_bits: Option<usize>,
    iv_bits: Option<usize>,
}

/// A field being read: name, hex so far, line it started on.
struct Field {
    name: String,
    hex: String,
    line: usize,
}

/// Parse the text of an eSTREAM vector file; errors name the line.
pub fn parse_str(text: &str) -> Result<Vec<Vector>, String> {
    parse_str_with(text, false).map(|(v, _)| v)
}

/// Parse a file with [`parse_str_with`]; the error names the file and line.
pub fn parse_file_with(path: &Path, lenient: bool) -> Result<(Vec<Vector>, Vec<String>), String> {
    let text = crate::kat::read_text(path)?;
    parse_str_with(&text, lenient).map_err(|e| format!("{}: {e}", path.display()))
}

/// As [`parse_str`]; `lenient` accepts the two deviations of the regenerated files in
/// `shared/vectors/estream-regenerated/` (its README section): a block opened by `Key size:`
/// without a `Primitive Name:` header, and a last block without `End of test vectors` (the
/// generator stopped). Each accepted deviation is returned as a note, so the check can say
/// what it ran on; everything else stays an error.
pub fn parse_str_with(text: &str, lenient: bool) -> Result<(Vec<Vector>, Vec<String>), String> {
    let mut notes = Vec::new();
    let mut out: Vec<Vector> = Vec::new();
    let mut hdr = Header::default();
    let mut cur: Option<Vector> = None;
    let mut field: Option<Field> = None;
    let mut block_open = false; // a header was seen and its "End of test vectors" not yet
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim();
        // Continuation of a hex value: an indented line of hex digits only.
        if let Some(f) = field
            .as_mut()
            .filter(|_| !line.is_empty() && line.chars().all(|c| c.is_ascii_hexdigit()) && raw.starts_with(' '))
        {
            f.hex.push_str(line);
            continue;
        }
        if let Some(f) = field.take() {
            store(cur.as_mut().expect("fields only inside a vector"), f)?;
        }
        if line.is_empty() || line.starts_with('#') {
            // '#' comments are not in the eSTREAM files; the transcribed copies use them.
            if let Some(v) = cur.take() {
                out.push(finish(v)?);
            }
            continue;
        }
        if let Some((name, value)) = line.split_once('=').filter(|_| cur.is_some()) {
            let name = name.trim();
            let value = value.trim();
            if !value.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(format!("line {lineno}: {name}: not hex: {value:?}"));
            }
            field = Some(Field { name: name.to_string(), hex: value.to_string(), line: lineno });
            continue;
        }
        if cur.is_some() {
            return Err(format!("line {lineno}: unexpected text inside a vector: {line:?}"));
        }
        if let Some(rest) = line.strip_prefix("Set ") {
            let label = line.trim_end_matches(':');
            let (set, num) = rest
                .trim_end_matches(':')
                .split_once(", vector#")
                .ok_or_else(|| format!("line {lineno}: bad vector header {line:?}"))?;
            set.trim().parse::<u32>().map_err(|e| format!("line {lineno}: set number: {e}"))?;
            num.trim().parse::<u32>().map_err(|e| format!("line {lineno}: vector number: {e}"))?;
            let (Some(key_bits), Some(iv_bits)) = (hdr.key_bits, hdr.iv_bits) else {
                return Err(format!("line {lineno}: vector before 'Key size'/'IV size' header"));
            };
            if !block_open {
                return Err(format!("line {lineno}: vector after 'End of test vectors' without a new header"));
            }
            cur = Some(Vector {
                line: lineno,
                label: label.to_string(),
                primitive: hdr.primitive.clone(),
                key_bits,
                iv_bits,
                ..Vector::default()
            });
            continue;
        }
        if let Some(p) = line.strip_prefix("Primitive Name:") {
            if block_open {
                return Err(format!("line {lineno}: new header before 'End of test vectors'"));
            }
            hdr = Header { primitive: p.trim().to_string(), ..Header::default() };
            block_open = true;
        } else if let Some(k) = line.strip_prefix("Key size:") {
            if !block_open && lenient {
                notes.push(format!("line {lineno}: block starts at 'Key size' (no 'Primitive Name' header)"));
                hdr = Header::default();
                block_open = true;
            }
            hdr.key_bits = Some(bits_value(k, lineno)?);
        } else if let Some(k) = line.strip_prefix("IV size:") {
            hdr.iv_bits = Some(bits_value(k, lineno)?);
        } else if line == "End of test vectors" {
            if !block_open {
                return Err(format!("line {lineno}: 'End of test vectors' without a header"));
            }
            block_open = false;
        } else if !(line.starts_with('*')
            || line.chars().all(|c| c == '=')
            || line.starts_with("Profile:")
            || line.starts_with("Test vectors -- set")
            || (line.starts_with("(stream is generated by") && line.ends_with(')')))
        {
            return Err(format!("line {lineno}: unrecognised line {line:?}"));
        }
    }
    if let Some(f) = field.take() {
        store(cur.as_mut().expect("fields only inside a vector"), f)?;
    }
    if let Some(v) = cur.take() {
        out.push(finish(v)?);
    }
    if block_open {
        if !lenient {
            return Err("file ends without 'End of test vectors' (truncated?)".into());
        }
        match out.last().filter(|v| v.key_bits == hdr.key_bits.unwrap_or(0) && v.iv_bits == hdr.iv_bits.unwrap_or(0)) {
            Some(v) if hdr.key_bits.is_some() => notes.push(format!(
                "last block (key {} bits, IV {} bits) has no 'End of test vectors': it stops after {}",
                v.key_bits, v.iv_bits, v.label
            )),
            _ => notes.push("file ends with a header that has no vectors".into()),
        }
    }
    if out.is_empty() {
        return Err("no test vectors found".into());
    }
    Ok((out, notes))
}

fn bits_value(s: &str, lineno: usize) -> Result<usize, String> {
    s.trim()
        .strip_suffix("bits")
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("line {lineno}: expected 'N bits', found {:?}", s.trim()))
}

fn store(v: &mut Vector, f: Field) -> Result<(), String> {
    let bytes = unhex(&f.hex).map_err(|e| format!("line {}: {}: {e}", f.line, f.name))?;
    let l = f.line;
    match f.name.as_str() {
        "key" => v.key = bytes,
        "IV" => v.iv = bytes,
        "xor-digest" => {
            if bytes.len() != 64 {
                return Err(format!("line {l}: xor-digest has {} bytes, expected 64", bytes.len()));
            }
            v.xor_digest = Some(bytes)
        }
        n => {
            let range = n
                .strip_prefix("stream[")
                .and_then(|r| r.strip_suffix(']'))
                .and_then(|r| r.split_once(".."))
                .ok_or_else(|| format!("line {l}: unknown field {n:?}"))?;
            let a: usize = range.0.parse().map_err(|e| format!("line {l}: {n}: {e}"))?;
            let b: usize = range.1.parse().map_err(|e| format!("line {l}: {n}: {e}"))?;
            if b < a || bytes.len() != b - a + 1 {
                return Err(format!("line {l}: {n} holds {} bytes, expected {}", bytes.len(), b.wrapping_sub(a) + 1));
            }
            v.excerpts.push((a, bytes));
        }
    }
    Ok(())
}

fn finish(v: Vector) -> Result<Vector, String> {
    let l = v.line;
    if v.key.len() * 8 != v.key_bits {
        return Err(format!("line {l}: key has {} bits, header says {}", v.key.len() * 8, v.key_bits));
    }
    if v.iv.len() * 8 != v.iv_bits {
        return Err(format!("line {l}: IV has {} bits, header says {}", v.iv.len() * 8, v.iv_bits));
    }
    if v.excerpts.is_empty() {
        return Err(format!("line {l}: {} has no stream excerpt", v.label));
    }
    if v.xor_digest.is_some() && !v.stream_len().is_multiple_of(64) {
        return Err(format!("line {l}: stream length {} is not a multiple of 64", v.stream_len()));
    }
    Ok(v)
}

/// Run every vector of an eSTREAM file against `mk`: generate the whole stream (in uneven
/// chunks, half through `keystream` and half through `apply` on zero bytes, to exercise
/// continuation), compare every excerpt and the xor-digest. One pass per vector.
pub fn stream_estream(mk: fn() -> Box<dyn StreamCipher + Send>, path: &Path) -> Check {
    stream_estream_with(mk, path, false)
}

/// [`stream_estream`] with the parser's `lenient` mode; accepted deviations are named in
/// the check's description.
pub fn stream_estream_with(mk: fn() -> Box<dyn StreamCipher + Send>, path: &Path, lenient: bool) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(format!("{}/{}", info.name, info.implementation), path_label(path));
    let vectors = match parse_file_with(path, lenient) {
        Ok((v, notes)) => {
            if !notes.is_empty() {
                chk.what = format!("{} ({})", chk.what, notes.join("; "));
            }
            v
        }
        Err(e) => {
            chk.fail(e);
            return chk;
        }
    };
    for v in &vectors {
        let what = format!("{} (line {}, IV {} bits)", v.label, v.line, v.iv_bits);
        if let Err(e) = c.init(&v.key, &v.iv) {
            chk.fail(format!("{what}: init: {e}"));
            continue;
        }
        let n = v.stream_len();
        let mut stream = vec![0u8; n];
        let mut pos = 0;
        let mut step = 0;
        let mut res = Ok(());
        while pos < n && res.is_ok() {
            // chunk sizes 1, 7, 64, 1000, 4096, … keep the code paths mixed
            let len = [1usize, 7, 64, 1000, 4096, 33, 65536][step % 7].min(n - pos);
            let chunk = &mut stream[pos..pos + len];
            res = if step % 2 == 0 { c.keystream(chunk) } else { c.apply(chunk) };
            pos += len;
            step += 1;
        }
        if let Err(e) = res {
            chk.fail(format!("{what}: keystream: {e}"));
            continue;
        }
        let mut bad = None;
        for (a, want) in &v.excerpts {
            let got = &stream[*a..*a + want.len()];
            if got != &want[..] {
                bad = Some(format!(
                    "stream[{a}..{}]: got {} want {}",
                    a + want.len() - 1,
                    hex::encode(got),
                    hex::encode(want)
                ));
                break;
            }
        }
        if let (None, Some(want)) = (&bad, &v.xor_digest) {
            let mut d = [0u8; 64];
            for block in stream.chunks(64) {
                for (x, y) in d.iter_mut().zip(block) {
                    *x ^= y;
                }
            }
            if d[..] != want[..] {
                bad = Some(format!("xor-digest: got {} want {}", hex::encode(d), hex::encode(want)));
            }
        }
        match bad {
            None => chk.passed += 1,
            Some(m) => chk.fail(format!("{what}: {m}")),
        }
    }
    chk
}

/// The three checks every eSTREAM-verified stream entry gets: the stream contract, the
/// transcribed file `kat-data/<repo>` and the shared file(s) (skipped when absent).
pub fn standard(e: &Entry, ctx: &VerifyCtx, repo: &str, shared_files: &[&str]) -> Vec<Check> {
    let mk = match e.stream_make() {
        Ok(mk) => mk,
        Err(c) => return vec![c],
    };
    let id = e.id();
    let mut v = vec![conformance::check_stream(mk), stream_estream(mk, &crate::kat::repo_file(repo))];
    for rel in shared_files {
        v.push(shared(ctx, &id, rel, |p| stream_estream(mk, p)));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "\
Primitive Name: TOY
===================
Profile: S3___
Key size: 16 bits
IV size: 0 bits

Test vectors -- set 1
=====================

(stream is generated by encrypting 512 zero bytes)

Set 1, vector#  0:
                         key = 8000
                          IV = 
               stream[0..3] = 0102
                              0304
            stream[60..63] = AABBCCDD
                  xor-digest = 00000000000000000000000000000000
                               00000000000000000000000000000000
                               00000000000000000000000000000000
                               00000000000000000000000000000000

End of test vectors

Primitive Name: TOY
Key size: 16 bits
IV size: 8 bits

Set 2, vector# 9:
                         key = 0909
                          IV = 09
               stream[0..1] = 0102

End of test vectors
";

    #[test]
    fn parses_blocks_ranges_and_continuations() {
        let v = parse_str(GOOD).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].key, vec![0x80, 0]);
        assert!(v[0].iv.is_empty());
        assert_eq!(v[0].excerpts[0], (0, vec![1, 2, 3, 4]));
        assert_eq!(v[0].excerpts[1], (60, vec![0xaa, 0xbb, 0xcc, 0xdd]));
        assert_eq!(v[0].stream_len(), 64);
        assert_eq!(v[0].xor_digest.as_ref().map(|d| d.len()), Some(64));
        assert_eq!(v[1].iv_bits, 8);
        assert_eq!(v[1].iv, vec![9]);
        assert_eq!(v[1].label, "Set 2, vector# 9");
    }

    #[test]
    fn malformed_files_are_errors() {
        let cases = [
            // excerpt shorter than its range
            (
                GOOD.replace("stream[0..3] = 0102\n                              0304", "stream[0..3] = 0102"),
                "holds 2 bytes",
            ),
            // odd hex digit
            (GOOD.replace("key = 8000", "key = 800"), "bad hex"),
            // key size disagrees with the header
            (GOOD.replace("key = 0909", "key = 090909"), "key has 24 bits"),
            // unknown field
            (GOOD.replace("IV = 09", "IV = 09\n                       nonce = 01"), "unknown field"),
            // truncated file
            (GOOD[..GOOD.rfind("End of test vectors").unwrap()].to_string(), "truncated"),
            // garbage line between vectors
            (GOOD.replace("Test vectors -- set 1", "garbage here"), "unrecognised line"),
            // xor-digest of the wrong size
            (GOOD.replace("xor-digest = 00000000000000000000000000000000\n", "xor-digest = 0000\n"), "xor-digest"),
            // damaged continuation line
            (GOOD.replace("                              0304", "                              03G4"), "holds 2 bytes"),
            // vector without any excerpt
            (GOOD.replace("               stream[0..1] = 0102\n", ""), "no stream excerpt"),
            // nothing at all
            (String::new(), "no test vectors"),
        ];
        for (text, want) in cases {
            let e = parse_str(&text).unwrap_err();
            assert!(e.contains(want), "expected {want:?} in error {e:?}");
        }
    }

    /// The regenerated files' deviations (no `Primitive Name`, no final end marker) are
    /// accepted only in lenient mode, and named.
    #[test]
    fn lenient_mode_names_what_it_accepts() {
        let no_name = GOOD.replacen("Primitive Name: TOY\n===================\nProfile: S3___\n", "", 1);
        assert!(parse_str(&no_name).unwrap_err().contains("before 'Key size'") || parse_str(&no_name).is_err());
        let (v, notes) = parse_str_with(&no_name, true).unwrap();
        assert_eq!(v.len(), 2);
        assert!(notes[0].contains("no 'Primitive Name'"), "{notes:?}");
        let cut = &GOOD[..GOOD.rfind("End of test vectors").unwrap()];
        assert!(parse_str(cut).unwrap_err().contains("truncated"));
        let (v, notes) = parse_str_with(cut, true).unwrap();
        assert_eq!(v.len(), 2);
        assert!(notes[0].contains("stops after Set 2, vector# 9"), "{notes:?}");
        // Other damage stays an error in lenient mode.
        assert!(parse_str_with(&GOOD.replace("key = 8000", "key = 800"), true).is_err());
    }

    #[test]
    fn malformed_file_fails_the_check() {
        // A broken file must produce a failing Check, not a skipped or passing one.
        let dir = std::env::temp_dir().join(format!("lwcbench-estream-kat-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("broken.test-vectors");
        std::fs::write(&p, GOOD.replace("stream[60..63] = AABBCCDD", "stream[60..63] = AABBCCDDEE")).unwrap();
        let mk = || Box::new(lwcbench_estream::Trivium::default()) as Box<dyn StreamCipher + Send>;
        let chk = stream_estream(mk, &p);
        assert!(!chk.ok() && !chk.skipped, "{chk:?}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
