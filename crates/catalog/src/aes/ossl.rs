//! OpenSSL through the `openssl` crate (EVP). `set_key` creates one encryption and one
//! decryption `EVP_CIPHER_CTX` and runs the key schedule in each; every message then only
//! re-initialises the IV (`EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv)`), as `openssl speed`
//! reuses its context. ECB/CBC: EVP's own padding is PKCS#7 too, but the crate's in-place
//! update demands a spare block of output room, so the adapter turns EVP padding off and
//! applies the same PKCS#7 itself (identical bytes; checked by the Wycheproof CBC file).
use lwcbench_core::{check_len, key_err, Aead, CipherError, CipherInfo, CipherMode};
use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;

use super::{check_aead_args, check_mode_args, info, key_bytes, pkcs7_pad, pkcs7_unpad, Kind, Lib};

pub fn version() -> &'static str {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| openssl::version::version().to_string())
}

enum Ciph {
    Static(&'static CipherRef),
    Fetched(Cipher),
}

fn cipher(kind: Kind, bits: u16) -> Option<Ciph> {
    use Ciph::Static as S;
    Some(match (kind, bits) {
        (Kind::Ecb, 128) => S(Cipher::aes_128_ecb()),
        (Kind::Ecb, 192) => S(Cipher::aes_192_ecb()),
        (Kind::Ecb, _) => S(Cipher::aes_256_ecb()),
        (Kind::Cbc, 128) => S(Cipher::aes_128_cbc()),
        (Kind::Cbc, 192) => S(Cipher::aes_192_cbc()),
        (Kind::Cbc, _) => S(Cipher::aes_256_cbc()),
        (Kind::Cfb, 128) => S(Cipher::aes_128_cfb128()),
        (Kind::Cfb, 192) => S(Cipher::aes_192_cfb128()),
        (Kind::Cfb, _) => S(Cipher::aes_256_cfb128()),
        (Kind::Cfb8, 128) => S(Cipher::aes_128_cfb8()),
        (Kind::Cfb8, 192) => S(Cipher::aes_192_cfb8()),
        (Kind::Cfb8, _) => S(Cipher::aes_256_cfb8()),
        (Kind::Ofb, 128) => S(Cipher::aes_128_ofb()),
        (Kind::Ofb, 192) => S(Cipher::aes_192_ofb()),
        (Kind::Ofb, _) => S(Cipher::aes_256_ofb()),
        (Kind::Ctr, 128) => S(Cipher::aes_128_ctr()),
        (Kind::Ctr, 192) => S(Cipher::aes_192_ctr()),
        (Kind::Ctr, _) => S(Cipher::aes_256_ctr()),
        (Kind::Gcm, 128) => S(Cipher::aes_128_gcm()),
        (Kind::Gcm, 192) => S(Cipher::aes_192_gcm()),
        (Kind::Gcm, _) => S(Cipher::aes_256_gcm()),
        (Kind::Ccm, 128) => S(Cipher::aes_128_ccm()),
        (Kind::Ccm, 192) => S(Cipher::aes_192_ccm()),
        (Kind::Ccm, _) => S(Cipher::aes_256_ccm()),
        (Kind::Ocb, 128) => S(Cipher::aes_128_ocb()),
        (Kind::Ocb, 192) => S(Cipher::aes_192_ocb()),
        (Kind::Ocb, _) => S(Cipher::aes_256_ocb()),
        (Kind::Siv, b) => Ciph::Fetched(Cipher::fetch(None, &format!("AES-{b}-SIV"), None).ok()?),
        (Kind::Eax, _) => return None,
    })
}

impl Ciph {
    fn get(&self) -> &CipherRef {
        match self {
            Ciph::Static(c) => c,
            Ciph::Fetched(c) => c,
        }
    }
}

fn e(_: openssl::error::ErrorStack) -> CipherError {
    CipherError::NotInitialized
}

/// Two keyed contexts (encrypt, decrypt).
struct Ctxs {
    enc: CipherCtx,
    dec: CipherCtx,
}

fn keyed(kind: Kind, bits: u16, key: &[u8]) -> Result<Ctxs, CipherError> {
    check_len(key.len(), key_bytes(kind, bits), key_err)?;
    let c = cipher(kind, bits).ok_or(CipherError::NotInitialized)?;
    let mut enc = CipherCtx::new().map_err(e)?;
    let mut dec = CipherCtx::new().map_err(e)?;
    enc.encrypt_init(Some(c.get()), None, None).map_err(e)?;
    dec.decrypt_init(Some(c.get()), None, None).map_err(e)?;
    for ctx in [&mut enc, &mut dec] {
        match kind {
            Kind::Ecb | Kind::Cbc => ctx.set_padding(false),
            Kind::Ccm | Kind::Ocb => {
                ctx.set_iv_length(kind.iv_bytes()).map_err(e)?;
                ctx.set_tag_length(16).map_err(e)?;
            }
            _ => {}
        }
    }
    enc.encrypt_init(None, Some(key), None).map_err(e)?;
    dec.decrypt_init(None, Some(key), None).map_err(e)?;
    Ok(Ctxs { enc, dec })
}

pub struct OsslMode {
    kind: Kind,
    bits: u16,
    ctx: Option<Ctxs>,
    /// ECB/CBC output: the crate wants a spare block of room even with padding off.
    scratch: Vec<u8>,
}

impl OsslMode {
    pub fn new(kind: Kind, bits: u16) -> Self {
        OsslMode { kind, bits, ctx: None, scratch: Vec::new() }
    }
}

impl CipherMode for OsslMode {
    fn info(&self) -> CipherInfo {
        info(Lib::OpenSsl, self.kind, self.bits)
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        self.ctx = None;
        self.ctx = Some(keyed(self.kind, self.bits, key)?);
        Ok(())
    }
    fn ciphertext_len(&self, len: usize) -> usize {
        self.kind.ciphertext_len(len)
    }
    fn encrypt(&mut self, iv: &[u8], buf: &mut [u8], len: usize) -> Result<usize, CipherError> {
        check_mode_args(self.kind, iv, buf, len)?;
        let c = &mut self.ctx.as_mut().ok_or(CipherError::NotInitialized)?.enc;
        let n = if self.kind.padded() { pkcs7_pad(buf, len)? } else { len };
        c.encrypt_init(None, None, (!iv.is_empty()).then_some(iv)).map_err(e)?;
        update(c, &mut buf[..n], &mut self.scratch).map_err(e)?;
        Ok(n)
    }
    fn decrypt(&mut self, iv: &[u8], buf: &mut [u8]) -> Result<usize, CipherError> {
        check_mode_args(self.kind, iv, buf, 0)?;
        let n = buf.len();
        if self.kind.padded() && (n == 0 || !n.is_multiple_of(16)) {
            return Err(CipherError::DataLength { got: n });
        }
        let c = &mut self.ctx.as_mut().ok_or(CipherError::NotInitialized)?.dec;
        c.decrypt_init(None, None, (!iv.is_empty()).then_some(iv)).map_err(e)?;
        update(c, buf, &mut self.scratch).map_err(e)?;
        if self.kind.padded() {
            pkcs7_unpad(buf)
        } else {
            Ok(n)
        }
    }
}

/// One EVP update over the whole buffer: in place for the byte-oriented modes, through the
/// scratch buffer (plus a copy back) for ECB/CBC.
fn update(c: &mut CipherCtx, buf: &mut [u8], scratch: &mut Vec<u8>) -> Result<(), openssl::error::ErrorStack> {
    let n = buf.len();
    if c.block_size() > 1 {
        scratch.resize(n + 16, 0);
        let out = c.cipher_update(buf, Some(scratch))?;
        if out != n {
            return Err(openssl::error::ErrorStack::get());
        }
        buf.copy_from_slice(&scratch[..n]);
        scratch.iter_mut().for_each(|b| *b = 0);
    } else {
        c.cipher_update_inplace(buf, n)?;
    }
    Ok(())
}

pub struct OsslAead {
    kind: Kind,
    bits: u16,
    ctx: Option<Ctxs>,
    key: Vec<u8>,
    scratch: Vec<u8>, // OCB reports a 16-byte block: see `update`
}

impl OsslAead {
    pub fn new(kind: Kind, bits: u16) -> Self {
        OsslAead { kind, bits, ctx: None, key: Vec::new(), scratch: Vec::new() }
    }
}

impl Drop for OsslAead {
    fn drop(&mut self) {
        self.key.iter_mut().for_each(|b| unsafe { std::ptr::write_volatile(b, 0) });
    }
}

impl Aead for OsslAead {
    fn info(&self) -> CipherInfo {
        info(Lib::OpenSsl, self.kind, self.bits)
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        self.ctx = None;
        self.ctx = Some(keyed(self.kind, self.bits, key)?);
        if self.kind == Kind::Siv {
            // OpenSSL's SIV cannot be re-initialised with only a new (absent) IV: it keeps
            // the key to re-key per message.
            self.key.clear();
            self.key.extend_from_slice(key);
        }
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        check_aead_args(self.kind, nonce, tag)?;
        let kind = self.kind;
        if kind == Kind::Siv && buf.is_empty() {
            return Err(CipherError::DataLength { got: 0 }); // Lib::limitation
        }
        let c = &mut self.ctx.as_mut().ok_or(CipherError::NotInitialized)?.enc;
        let key = (kind == Kind::Siv).then_some(&self.key[..]);
        c.encrypt_init(None, key, (!nonce.is_empty()).then_some(nonce)).map_err(e)?;
        if kind == Kind::Ccm {
            c.set_data_len(buf.len()).map_err(e)?;
        }
        if !ad.is_empty() || kind == Kind::Siv {
            c.cipher_update(ad, None).map_err(e)?;
        }
        body(c, buf, &mut self.scratch, kind == Kind::Ccm, true).map_err(e)?;
        c.tag(tag).map_err(e)
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        check_aead_args(self.kind, nonce, tag)?;
        let kind = self.kind;
        let c = &mut self.ctx.as_mut().ok_or(CipherError::NotInitialized)?.dec;
        let scratch = &mut self.scratch;
        let key = (kind == Kind::Siv).then_some(&self.key[..]);
        let r = (|| -> Result<(), openssl::error::ErrorStack> {
            c.decrypt_init(None, key, (!nonce.is_empty()).then_some(nonce))?;
            c.set_tag(tag)?;
            if kind == Kind::Ccm {
                c.set_data_len(buf.len())?;
            }
            if !ad.is_empty() || kind == Kind::Siv {
                c.cipher_update(ad, None)?;
            }
            // CCM verifies inside the update and has no final step
            body(c, buf, scratch, kind == Kind::Ccm, kind != Kind::Ccm)
        })();
        r.map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}

/// Message body of an AEAD: update (+ final), in place where EVP allows it. OCB reports a
/// 16-byte block and holds back a partial last block until the final call, so it goes
/// through the scratch buffer.
fn body(
    c: &mut CipherCtx,
    buf: &mut [u8],
    scratch: &mut Vec<u8>,
    always_update: bool,
    fin: bool,
) -> Result<(), openssl::error::ErrorStack> {
    let n = buf.len();
    if c.block_size() > 1 {
        scratch.resize(n + 32, 0);
        let mut out = if n > 0 || always_update { c.cipher_update(buf, Some(scratch))? } else { 0 };
        if fin {
            out += c.cipher_final(&mut scratch[out..])?;
        }
        if out != n {
            return Err(openssl::error::ErrorStack::get());
        }
        buf.copy_from_slice(&scratch[..n]);
    } else {
        if n > 0 || always_update {
            c.cipher_update_inplace(buf, n)?;
        }
        if fin {
            let mut rest = [0u8; 32];
            if c.cipher_final(&mut rest)? != 0 {
                return Err(openssl::error::ErrorStack::get());
            }
        }
    }
    Ok(())
}

/// ChaCha20-Poly1305 (RFC 8439) through OpenSSL's EVP, for the `openssl speed -evp
/// chacha20-poly1305` comparison: one keyed context per direction, nonce per message.
pub struct OsslChaCha {
    ctx: Option<Ctxs>,
    scratch: Vec<u8>,
}

impl OsslChaCha {
    pub fn new() -> Self {
        OsslChaCha { ctx: None, scratch: Vec::new() }
    }
}

impl Default for OsslChaCha {
    fn default() -> Self {
        Self::new()
    }
}

impl Aead for OsslChaCha {
    fn info(&self) -> CipherInfo {
        CipherInfo {
            name: "ChaCha20-Poly1305",
            implementation: "openssl",
            family: lwcbench_core::Family::Aead,
            key_bits: 256,
            iv_bits: 96,
            block_bits: 512,
            tag_bits: 128,
            state_bytes: 64,
            origin: lwcbench_core::Origin::System { library: "openssl", version: version() },
            language: lwcbench_core::Language::C,
            bit_order: lwcbench_core::BitOrder::MsbFirst,
            bit_granular: false,
            note: "",
        }
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 32, key_err)?;
        self.ctx = None;
        let c = Cipher::chacha20_poly1305();
        let mut enc = CipherCtx::new().map_err(e)?;
        let mut dec = CipherCtx::new().map_err(e)?;
        enc.encrypt_init(Some(c), Some(key), None).map_err(e)?;
        dec.decrypt_init(Some(c), Some(key), None).map_err(e)?;
        self.ctx = Some(Ctxs { enc, dec });
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        check_len(nonce.len(), 12, lwcbench_core::iv_err)?;
        check_len(tag.len(), 16, |x, g| CipherError::TagLength { expected: x, got: g })?;
        let c = &mut self.ctx.as_mut().ok_or(CipherError::NotInitialized)?.enc;
        c.encrypt_init(None, None, Some(nonce)).map_err(e)?;
        if !ad.is_empty() {
            c.cipher_update(ad, None).map_err(e)?;
        }
        body(c, buf, &mut self.scratch, false, true).map_err(e)?;
        c.tag(tag).map_err(e)
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        check_len(nonce.len(), 12, lwcbench_core::iv_err)?;
        check_len(tag.len(), 16, |x, g| CipherError::TagLength { expected: x, got: g })?;
        let c = &mut self.ctx.as_mut().ok_or(CipherError::NotInitialized)?.dec;
        let scratch = &mut self.scratch;
        let r = (|| -> Result<(), openssl::error::ErrorStack> {
            c.decrypt_init(None, None, Some(nonce))?;
            c.set_tag(tag)?;
            if !ad.is_empty() {
                c.cipher_update(ad, None)?;
            }
            body(c, buf, scratch, false, true)
        })();
        r.map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}

pub fn verify_chacha(_: &crate::Entry, ctx: &crate::verify::VerifyCtx) -> Vec<crate::verify::Check> {
    let mk = || Box::new(OsslChaCha::new()) as Box<dyn Aead + Send>;
    let id = "ChaCha20-Poly1305/openssl";
    vec![
        crate::conformance::check_aead(mk),
        crate::kat::aead_cryptopp(mk, &crate::kat::repo_file("rfc8439.txt"), &["ChaCha20/Poly1305"]),
        crate::kat::shared(ctx, id, "wycheproof/chacha20_poly1305_test.json", |p| {
            crate::kat::wycheproof::aead_wycheproof(mk, p)
        }),
    ]
}
