//! On-the-fly use: encrypt, decrypt or print keystream with any registered cipher, and check
//! the result against an expected value. Without `--iv`, encryption draws a fresh random
//! IV/nonce from the OS and prints it, so the tool itself never reuses a key/IV pair.
use std::io::Read;
use std::path::PathBuf;

use clap::Args;
use lwcbench_catalog::{Entry, Make};
use lwcbench_core::{BitOrder, CipherError};
use zeroize::Zeroizing;

/// Where the key comes from: exactly one of --key, --key-file, --key-env.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("key_source").required(true).args(["key", "key_file", "key_env"])))]
pub struct KeyArgs {
    /// Key as hex, or `-` to read the hex key from stdin. A key on the command line is visible
    /// in the process list and the shell history: prefer --key-file, --key-env or `--key -`.
    #[arg(short, long, value_name = "HEX|-")]
    key: Option<String>,
    /// File holding the key as hex (spaces, newlines and ':' ignored; at most 64 KiB).
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// Environment variable holding the key as hex.
    #[arg(long, value_name = "VAR")]
    key_env: Option<String>,
}

#[derive(Args)]
pub struct CryptArgs {
    /// Cipher as NAME or NAME/IMPL (see `lwcbench list`).
    #[arg(short, long)]
    cipher: String,
    #[command(flatten)]
    key: KeyArgs,
    /// IV/nonce, hex. Encryption draws a random one when omitted (and prints it).
    #[arg(long)]
    iv: Option<String>,
    /// Input as hex.
    #[arg(long, conflicts_with = "input")]
    hex: Option<String>,
    /// Input file (binary).
    #[arg(short, long = "in")]
    input: Option<PathBuf>,
    /// Write the binary result here instead of printing hex.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Associated data for AEADs, hex.
    #[arg(long, default_value = "")]
    ad: String,
    /// Tag length of an AEAD, in bits (or bytes with a B suffix: 8B): selects the variant of
    /// the cipher with that tag — CCM* (IEEE 802.15.4, 13-byte nonce) has 128, 64 and 32, so
    /// `--cipher 'AES-128-CCM*' --tag 64` is AES-128-CCM*-8. Decrypt with the same length.
    /// Default: the named cipher's own tag.
    #[arg(long, value_name = "BITS")]
    tag: Option<String>,
    /// Expected result, hex: exit non-zero unless the output matches.
    #[arg(long)]
    expect: Option<String>,
}

#[derive(Args)]
pub struct KeystreamArgs {
    /// Stream cipher as NAME or NAME/IMPL (see `lwcbench list`).
    #[arg(short, long)]
    cipher: String,
    #[command(flatten)]
    key: KeyArgs,
    /// IV, hex: required unless the cipher has no IV (a keystream is only reproducible with
    /// its IV, so none is drawn at random).
    #[arg(long)]
    iv: Option<String>,
    /// Number of keystream bits (at most 2^29 = 64 MiB); a suffix B, KiB or MiB means bytes,
    /// as for `run --sizes`. When the count is not a multiple of 8 the last byte holds the
    /// remaining bits in the cipher's bit order — low bits first for ChaCha20, Salsa20 and
    /// Trivium, high bits first for DRACO, MICKEY and Grain-128a (docs/ciphers.md, and
    /// bit_order in `lwcbench list --format json`) — and its unused bits are zero.
    #[arg(long, default_value = "256")]
    bits: String,
    /// Write the binary keystream here instead of printing hex.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Expected keystream, hex: exit non-zero unless the output matches.
    #[arg(long)]
    expect: Option<String>,
}

/// Largest keystream: 2^29 bits = 64 MiB (printed as 128 MiB of hex).
pub const MAX_KEYSTREAM_BITS: usize = 1 << 29;
/// Largest key text read from --key-file, --key-env or stdin.
const MAX_KEY_TEXT: usize = 64 * 1024;

#[derive(Clone, Copy, PartialEq)]
pub enum Mode {
    Encrypt,
    Decrypt,
}

fn unhex(name: &str, s: &str) -> Result<Vec<u8>, String> {
    let clean: String = s.chars().filter(|c| !c.is_whitespace() && *c != ':').collect();
    hex::decode(&clean).map_err(|e| format!("--{name}: not hex ({e})"))
}

/// Decode a secret: every copy is zeroized when dropped, and an error names the position of
/// a bad character but never the character.
fn unhex_secret(what: &str, s: &[u8]) -> Result<Zeroizing<Vec<u8>>, String> {
    let clean: Zeroizing<Vec<u8>> =
        Zeroizing::new(s.iter().copied().filter(|c| !c.is_ascii_whitespace() && *c != b':').collect());
    if clean.is_empty() {
        return Err(format!("{what}: no key (expected hex)"));
    }
    if let Some(i) = clean.iter().position(|c| !c.is_ascii_hexdigit()) {
        return Err(format!("{what}: not hex (character {} of the key is not a hex digit)", i + 1));
    }
    if !clean.len().is_multiple_of(2) {
        return Err(format!("{what}: not hex (odd number of digits: {})", clean.len()));
    }
    let mut key = Zeroizing::new(vec![0u8; clean.len() / 2]);
    hex::decode_to_slice(&clean[..], &mut key[..]).map_err(|_| format!("{what}: not hex"))?;
    Ok(key)
}

/// Read at most [`MAX_KEY_TEXT`] bytes (an error beyond), into a zeroized buffer.
fn read_key_text(what: &str, r: impl Read) -> Result<Zeroizing<Vec<u8>>, String> {
    let mut text = Zeroizing::new(Vec::with_capacity(MAX_KEY_TEXT + 1));
    r.take(MAX_KEY_TEXT as u64 + 1).read_to_end(&mut text).map_err(|e| format!("{what}: {e}"))?;
    if text.len() > MAX_KEY_TEXT {
        return Err(format!("{what}: more than {} KiB; it must hold only the key as hex", MAX_KEY_TEXT / 1024));
    }
    Ok(text)
}

impl KeyArgs {
    /// The key bytes, from whichever source was given.
    fn read(&self) -> Result<Zeroizing<Vec<u8>>, String> {
        if let Some(p) = &self.key_file {
            let what = format!("--key-file: {}", p.display());
            let f = std::fs::File::open(p).map_err(|e| format!("{what}: {e}"))?;
            return unhex_secret(&what, &read_key_text(&what, f)?);
        }
        if let Some(var) = &self.key_env {
            let what = format!("--key-env: {var}");
            let v = std::env::var_os(var).ok_or_else(|| format!("{what}: not set"))?;
            let text = Zeroizing::new(v.into_encoded_bytes());
            return unhex_secret(&what, &text);
        }
        match self.key.as_deref() {
            Some("-") => unhex_secret("--key -", &read_key_text("--key - (stdin)", std::io::stdin().lock())?),
            Some(h) => unhex_secret("--key", h.as_bytes()),
            None => Err("give the key with --key HEX, --key-file FILE, --key-env VAR or --key - (stdin)".into()),
        }
    }
}

fn find(cipher: &str) -> Result<Entry, String> {
    lwcbench_catalog::find(cipher).ok_or_else(|| format!("--cipher: unknown cipher '{cipher}' (see `lwcbench list`)"))
}

/// `--tag`: bits, or bytes with a `B` suffix; the length in bytes.
fn parse_tag(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let bad = || format!("--tag: '{s}' is not a tag length (bits such as 64, or bytes such as 8B)");
    let (n, bytes) = match t.strip_suffix(['B', 'b']) {
        Some(n) => (n.trim().parse::<usize>().map_err(|_| bad())?, true),
        None => (t.parse::<usize>().map_err(|_| bad())?, false),
    };
    if n == 0 {
        return Err("--tag: 0 is no tag: encryption without integrity (CCM* MIC 0) is not offered".into());
    }
    match (bytes, n) {
        (true, n) if n <= 64 => Ok(n),
        (false, n) if n % 8 == 0 && n <= 512 => Ok(n / 8),
        (false, n) if n <= 512 => Err(format!("--tag: {n} bits is not a whole number of bytes")),
        _ => Err(bad()),
    }
}

/// The variant of `e` with the `--tag` length (the entry itself without `--tag`).
fn with_tag(e: Entry, tag: Option<&str>) -> Result<Entry, String> {
    let Some(t) = tag else { return Ok(e) };
    let bytes = parse_tag(t)?;
    let variants = lwcbench_catalog::tag_variants(&e);
    if variants.is_empty() {
        return Err(format!("--tag: {} is {} cipher: it has no tag", e.id(), family_phrase(e.info.family.as_str())));
    }
    if let Some(v) = variants.iter().find(|v| v.info.tag_bytes() == bytes) {
        return Ok(v.clone());
    }
    let offered: Vec<String> = variants.iter().map(|v| v.info.tag_bits.to_string()).collect();
    let offered = match offered.split_last() {
        Some((last, [])) => format!("only {last}"),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    Err(format!("--tag: {} bits is not a tag length of {}: it offers {offered} bits", bytes * 8, e.id()))
}

fn cerr(e: CipherError) -> String {
    match e {
        CipherError::KeyLength { .. } => format!("--key: {e}"),
        CipherError::IvLength { .. } | CipherError::IvTooLong { .. } => format!("--iv: {e}"),
        _ => e.to_string(),
    }
}

/// "a stream", "an AEAD", "a block", "a mode" (for messages).
fn family_phrase(family: &str) -> String {
    match family {
        "aead" => "an AEAD".into(),
        f => format!("a {f}"),
    }
}

/// A library's documented refusal of this message length (e.g. OpenSSL's empty-message
/// AES-SIV), to say instead of a misleading "tag mismatch" or "data length" error.
fn library_limitation(e: &Entry, len: usize) -> Option<&'static str> {
    use lwcbench_catalog::aes::{Kind, Lib};
    let lib = Lib::parse(e.info.implementation)?;
    let mode = e.info.name.rsplit('-').next()?;
    let kind = Kind::ALL.into_iter().find(|k| k.as_str().eq_ignore_ascii_case(mode))?;
    lib.limitation(kind, len)
}

/// Print a keystream.
pub fn keystream(a: &KeystreamArgs) -> Result<(), String> {
    let e = find(&a.cipher)?;
    let info = e.info;
    let Some(Make::Stream(mk)) = e.make else {
        return Err(format!(
            "{} has no keystream (it is {} cipher; keystream needs a stream cipher)",
            e.id(),
            family_phrase(info.family.as_str())
        ));
    };
    let bits = crate::cmd_run::parse_size(&a.bits)
        .map_err(|_| format!("--bits: '{}' is not a number of bits (or bytes with B/KiB/MiB)", a.bits))?;
    if bits == 0 || bits > MAX_KEYSTREAM_BITS {
        return Err(format!("--bits: {bits} is not from 1 to {MAX_KEYSTREAM_BITS} (64 MiB)"));
    }
    let key = a.key.read()?;
    let iv = match &a.iv {
        Some(h) => unhex("iv", h)?,
        None if info.iv_bytes() == 0 => Vec::new(),
        None => return Err(format!("--iv: required ({} takes a {}-bit IV)", e.id(), info.iv_bits)),
    };
    let mut c = mk();
    c.init(&key, &iv).map_err(cerr)?;
    let mut out = vec![0u8; bits.div_ceil(8)];
    c.keystream_bits(&mut out, bits).map_err(cerr)?;
    if bits % 8 != 0 {
        let order = match info.bit_order {
            BitOrder::LsbFirst => "low",
            BitOrder::MsbFirst => "high",
        };
        eprintln!("note: the last byte holds the last {} bits in its {order} bits", bits % 8);
    }
    finish(&out, &a.out, &a.expect)
}

/// Write or print the result and check --expect.
fn finish(output: &[u8], out: &Option<PathBuf>, expect: &Option<String>) -> Result<(), String> {
    match out {
        Some(p) => lwcbench_engine::results::write_atomic_to(p, output, "--out")?,
        None => println!("{}", hex::encode(output)),
    }
    if let Some(x) = expect {
        let want = unhex("expect", x)?;
        if want != output {
            return Err(format!("result differs from --expect (got {} bytes, want {})", output.len(), want.len()));
        }
        eprintln!("ok: matches --expect");
    }
    Ok(())
}

pub fn run(a: &CryptArgs, mode: Mode) -> Result<(), String> {
    let e = with_tag(find(&a.cipher)?, a.tag.as_deref())?;
    let info = e.info;
    let (iv, generated) = match &a.iv {
        Some(h) => (unhex("iv", h)?, false),
        None if mode == Mode::Encrypt => {
            let mut v = vec![0u8; info.iv_bytes()];
            rand::fill(&mut v[..]);
            (v, true)
        }
        None if info.iv_bytes() == 0 => (Vec::new(), false),
        None => return Err("--iv: required (the IV/nonce used to encrypt)".into()),
    };
    let input = match (&a.hex, &a.input) {
        (Some(h), _) => unhex("hex", h)?,
        (None, Some(p)) => std::fs::read(p).map_err(|err| format!("--in: {}: {err}", p.display()))?,
        (None, None) => return Err("give the input with --hex HEX or --in FILE".into()),
    };
    let ad = unhex("ad", &a.ad)?;
    let key = a.key.read()?;
    let limitation = |len: usize, err: String| {
        match library_limitation(&e, len) {
        Some(why) => format!(
            "{}: {why}: a limitation of the library, so the message could not be processed (use another implementation of {})",
            e.id(),
            info.name
        ),
        None => err,
    }
    };
    let Some(make) = e.make else {
        return Err(format!("{}: not an implementation of this process (an engine's cipher)", e.id()));
    };
    let output: Vec<u8> = match (make, mode) {
        (Make::Stream(mk), _) => {
            let mut c = mk();
            c.init(&key, &iv).map_err(cerr)?;
            let mut buf = input;
            c.apply(&mut buf).map_err(cerr)?;
            buf
        }
        (Make::Aead(mk), Mode::Encrypt) => {
            let mut c = mk();
            c.set_key(&key).map_err(cerr)?;
            let len = input.len();
            let mut buf = input;
            let mut tag = vec![0u8; info.tag_bytes()];
            c.encrypt(&iv, &ad, &mut buf, &mut tag).map_err(|err| limitation(len, cerr(err)))?;
            buf.extend_from_slice(&tag);
            buf
        }
        (Make::Aead(mk), _) => {
            let mut c = mk();
            c.set_key(&key).map_err(cerr)?;
            let t = info.tag_bytes();
            if input.len() < t {
                return Err(format!("input is {} bytes, shorter than the {t}-byte tag", input.len()));
            }
            let (ct, tag) = input.split_at(input.len() - t);
            let mut buf = ct.to_vec();
            c.decrypt(&iv, &ad, &mut buf, tag)
                .map_err(|err| limitation(ct.len(), format!("decryption failed: {}", cerr(err))))?;
            buf
        }
        (Make::Mode(mk), m) => {
            let mut c = mk();
            c.set_key(&key).map_err(cerr)?;
            let mut buf = input;
            let n = if m == Mode::Encrypt {
                let len = buf.len();
                buf.resize(c.ciphertext_len(len), 0);
                c.encrypt(&iv, &mut buf, len).map_err(cerr)?
            } else {
                let len = buf.len();
                // Padded modes (ECB, CBC: a ciphertext is at least one whole block) fail on
                // the padding; say so instead of "data length not accepted".
                let block = c.ciphertext_len(0);
                if block > 0 && (len == 0 || len % block != 0) {
                    return Err(format!(
                        "decryption failed: {len} bytes is not a whole number of {block}-byte blocks (truncated ciphertext?)"
                    ));
                }
                c.decrypt(&iv, &mut buf).map_err(|err| match err {
                    CipherError::DataLength { .. } if block > 0 => "decryption failed: bad padding (the last block does not end in valid PKCS#7 padding: wrong key or IV, or a corrupted ciphertext)".to_string(),
                    err => format!("decryption failed: {}", cerr(err)),
                })?
            };
            buf.truncate(n);
            buf
        }
        (Make::Block(mk), m) => {
            let mut c = mk();
            c.set_key(&key).map_err(cerr)?;
            let b = info.block_bytes();
            if input.len() % b != 0 {
                return Err(format!(
                    "{} is a raw {}-bit block cipher (ECB on whole blocks): input of {} bytes is not a multiple of {b}",
                    e.id(),
                    info.block_bits,
                    input.len()
                ));
            }
            let mut buf = input;
            for blk in buf.chunks_exact_mut(b) {
                if m == Mode::Encrypt {
                    c.encrypt_block(blk)
                } else {
                    c.decrypt_block(blk)
                }
            }
            buf
        }
    };
    if generated && !iv.is_empty() {
        eprintln!("iv: {} (random; needed to decrypt)", hex::encode(&iv));
    }
    finish(&output, &a.out, &a.expect)
}
