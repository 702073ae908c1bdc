//! On-the-fly use: encrypt, decrypt or print keystream with any registered cipher, and check
//! the result against an expected value. Without `--iv`, encryption draws a fresh random
//! IV/nonce from the OS and prints it, so the tool itself never reuses a key/IV pair.
use std::path::PathBuf;

use clap::Args;
use lwcbench_catalog::{Entry, Make};
use lwcbench_core::CipherError;

#[derive(Args)]
pub struct CryptArgs {
    /// Cipher as NAME or NAME/IMPL (see `lwcbench list`).
    #[arg(short, long)]
    cipher: String,
    /// Key, hex.
    #[arg(short, long)]
    key: String,
    /// IV/nonce, hex. Encryption draws a random one when omitted (and prints it).
    #[arg(long)]
    iv: Option<String>,
    /// Input as hex (for keystream: ignored).
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
    /// Number of keystream bits (keystream command).
    #[arg(long, default_value_t = 256)]
    bits: usize,
    /// Expected result, hex: exit non-zero unless the output matches.
    #[arg(long)]
    expect: Option<String>,
}

#[derive(Clone, Copy, PartialEq)]
pub enum Mode {
    Encrypt,
    Decrypt,
    Keystream,
}

fn unhex(name: &str, s: &str) -> Result<Vec<u8>, String> {
    let clean: String = s.chars().filter(|c| !c.is_whitespace() && *c != ':').collect();
    hex::decode(&clean).map_err(|e| format!("--{name}: not hex ({e})"))
}

fn find(cipher: &str) -> Result<Entry, String> {
    lwcbench_catalog::find(cipher).ok_or_else(|| format!("--cipher: unknown cipher '{cipher}' (see `lwcbench list`)"))
}

fn cerr(e: CipherError) -> String {
    match e {
        CipherError::KeyLength { .. } => format!("--key: {e}"),
        CipherError::IvLength { .. } => format!("--iv: {e}"),
        _ => e.to_string(),
    }
}

pub fn run(a: &CryptArgs, mode: Mode) -> Result<(), String> {
    let e = find(&a.cipher)?;
    let info = e.info;
    let key = unhex("key", &a.key)?;
    let (iv, generated) = match &a.iv {
        Some(h) => (unhex("iv", h)?, false),
        None if mode == Mode::Encrypt || (mode == Mode::Keystream && info.iv_bytes() == 0) => {
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
        (None, None) if mode == Mode::Keystream => Vec::new(),
        (None, None) => return Err("give the input with --hex HEX or --in FILE".into()),
    };
    let ad = unhex("ad", &a.ad)?;
    let output: Vec<u8> = match (e.make, mode) {
        (Make::Stream(mk), m) => {
            let mut c = mk();
            c.init(&key, &iv).map_err(cerr)?;
            if m == Mode::Keystream {
                let mut out = vec![0u8; a.bits.div_ceil(8)];
                c.keystream_bits(&mut out, a.bits).map_err(cerr)?;
                out
            } else {
                let mut buf = input;
                c.apply(&mut buf).map_err(cerr)?;
                buf
            }
        }
        (Make::Aead(mk), Mode::Encrypt) => {
            let mut c = mk();
            c.set_key(&key).map_err(cerr)?;
            let mut buf = input;
            let mut tag = vec![0u8; info.tag_bytes()];
            c.encrypt(&iv, &ad, &mut buf, &mut tag).map_err(cerr)?;
            buf.extend_from_slice(&tag);
            buf
        }
        (Make::Aead(mk), Mode::Decrypt) => {
            let mut c = mk();
            c.set_key(&key).map_err(cerr)?;
            let t = info.tag_bytes();
            if input.len() < t {
                return Err(format!("input is {} bytes, shorter than the {t}-byte tag", input.len()));
            }
            let (ct, tag) = input.split_at(input.len() - t);
            let mut buf = ct.to_vec();
            c.decrypt(&iv, &ad, &mut buf, tag).map_err(|err| format!("decryption failed: {err}"))?;
            buf
        }
        (Make::Mode(mk), m) if m != Mode::Keystream => {
            let mut c = mk();
            c.set_key(&key).map_err(cerr)?;
            let mut buf = input;
            let n = if m == Mode::Encrypt {
                let len = buf.len();
                buf.resize(c.ciphertext_len(len), 0);
                c.encrypt(&iv, &mut buf, len).map_err(cerr)?
            } else {
                c.decrypt(&iv, &mut buf).map_err(|err| format!("decryption failed: {err}"))?
            };
            buf.truncate(n);
            buf
        }
        (Make::Block(mk), m) if m != Mode::Keystream => {
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
        _ => return Err(format!("{} has no keystream (it is a {} cipher)", e.id(), info.family.as_str())),
    };
    if generated && !iv.is_empty() {
        eprintln!("iv: {} (random; needed to decrypt)", hex::encode(&iv));
    }
    match &a.out {
        Some(p) => lwcbench_engine::results::write_atomic_to(p, &output, "--out")?,
        None => println!("{}", hex::encode(&output)),
    }
    if let Some(x) = &a.expect {
        let want = unhex("expect", x)?;
        if want != output {
            return Err(format!("result differs from --expect (got {} bytes, want {})", output.len(), want.len()));
        }
        eprintln!("ok: matches --expect");
    }
    Ok(())
}
