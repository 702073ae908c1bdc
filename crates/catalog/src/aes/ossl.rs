//! OpenSSL through the `openssl` crate (EVP). `set_key` creates one encryption and one
//! decryption `EVP_CIPHER_CTX` and runs the key schedule in each; every message then only
//! re-initialises the IV (`EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv)`), as `openssl speed`
//! reuses its context. ECB/CBC: EVP's own padding is PKCS#7 too, but the crate's in-place
//! update demands a spare block of output room, so the adapter turns EVP padding off and
//! applies the same PKCS#7 itself (identical bytes; checked by the Wycheproof CBC file).
//!
//! The per-message calls go straight to EVP through `openssl-sys` (the `evp` module): the crate's safe
//! wrappers ask the context for its IV length, block size and wrap mode before every call,
//! 230–264 instructions per message (7–10 % of a 16-byte ChaCha20-Poly1305 or AES-GCM
//! message) that an application calling EVP does not pay (docs/measurement.md "Host parity").
use lwcbench_core::{check_len, key_err, Aead, CipherError, CipherInfo, CipherMode};
use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;

use super::{check_aead_args, check_mode_args, info, key_bytes, pkcs7_pad, pkcs7_unpad, Kind, Lib};

/// The OpenSSL version the library reports at run time.
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

/// Two keyed contexts (encrypt, decrypt) and their lengths, asked once at keying.
struct Ctxs {
    enc: CipherCtx,
    dec: CipherCtx,
    lens: evp::Lens,
}

/// The per-message EVP calls without the `openssl` crate's per-call context queries. Every
/// length EVP would read or write past is checked against [`Lens`], taken from the context
/// when it was keyed.
mod evp {
    use std::os::raw::c_int;
    use std::ptr;

    use foreign_types::ForeignTypeRef;
    use openssl::cipher_ctx::CipherCtxRef;
    use openssl::error::ErrorStack;
    use openssl_sys as ffi;

    /// Key and IV bytes EVP reads, and the block size (1 = output length = input length).
    #[derive(Clone, Copy)]
    pub(super) struct Lens {
        pub key: usize,
        pub iv: usize,
        pub block: usize,
    }

    impl Lens {
        pub fn of(c: &CipherCtxRef) -> Lens {
            Lens { key: c.key_length(), iv: c.iv_length(), block: c.block_size() }
        }
    }

    fn cvt(r: c_int) -> Result<c_int, ErrorStack> {
        if r <= 0 {
            Err(ErrorStack::get())
        } else {
            Ok(r)
        }
    }

    fn int(n: usize) -> Result<c_int, ErrorStack> {
        c_int::try_from(n).map_err(|_| ErrorStack::get())
    }

    /// A new message: IV (and key, when given) into the keyed context; `enc` keeps its direction.
    pub fn start(
        c: &mut CipherCtxRef,
        l: Lens,
        enc: bool,
        key: Option<&[u8]>,
        iv: Option<&[u8]>,
    ) -> Result<(), ErrorStack> {
        if key.is_some_and(|k| k.len() < l.key) || iv.is_some_and(|v| v.len() < l.iv) {
            return Err(ErrorStack::get());
        }
        // SAFETY: the context is valid and keyed; key and IV hold at least the bytes EVP reads.
        cvt(unsafe {
            ffi::EVP_CipherInit_ex(
                c.as_ptr(),
                ptr::null(),
                ptr::null_mut(),
                key.map_or(ptr::null(), |k| k.as_ptr()),
                iv.map_or(ptr::null(), |v| v.as_ptr()),
                enc as c_int,
            )
        })
        .map(drop)
    }

    /// Additional data (no output).
    pub fn aad(c: &mut CipherCtxRef, ad: &[u8]) -> Result<(), ErrorStack> {
        let mut outl = 0;
        // SAFETY: a NULL output makes EVP read `ad` as additional data and write nothing.
        cvt(unsafe { ffi::EVP_CipherUpdate(c.as_ptr(), ptr::null_mut(), &mut outl, ad.as_ptr(), int(ad.len())?) })
            .map(drop)
    }

    /// `buf[..n]` through the cipher into `out`; returns the bytes written. EVP writes at most
    /// n + block − 1 bytes, so `out` needs n bytes for a stream-like context (block 1), and
    /// n + block bytes otherwise; `out` may be `buf` itself only for block 1.
    ///
    /// # Safety
    /// `out` must be valid for writes of the bytes above and either be `inp` or not overlap it.
    unsafe fn update_raw(c: &mut CipherCtxRef, out: *mut u8, inp: *const u8, n: usize) -> Result<usize, ErrorStack> {
        let mut outl = 0;
        cvt(ffi::EVP_CipherUpdate(c.as_ptr(), out, &mut outl, inp, int(n)?))?;
        Ok(outl as usize)
    }

    /// The whole buffer in place (block-1 contexts only).
    pub fn update_inplace(c: &mut CipherCtxRef, l: Lens, buf: &mut [u8]) -> Result<usize, ErrorStack> {
        if l.block != 1 {
            return Err(ErrorStack::get());
        }
        let p = buf.as_mut_ptr();
        // SAFETY: block 1: EVP writes exactly buf.len() bytes, in place is allowed.
        unsafe { update_raw(c, p, p, buf.len()) }
    }

    /// `inp` into `out` (any block size); `out` must hold inp.len() + block bytes.
    pub fn update_into(c: &mut CipherCtxRef, l: Lens, inp: &[u8], out: &mut [u8]) -> Result<usize, ErrorStack> {
        if out.len() < inp.len() + l.block {
            return Err(ErrorStack::get());
        }
        // SAFETY: `out` is a distinct buffer with room for everything EVP may write.
        unsafe { update_raw(c, out.as_mut_ptr(), inp.as_ptr(), inp.len()) }
    }

    /// Final step of an encryption (`enc`) or decryption; `out` must hold a block (EVP
    /// writes at most one).
    pub fn finish(c: &mut CipherCtxRef, l: Lens, enc: bool, out: &mut [u8]) -> Result<usize, ErrorStack> {
        if out.len() < l.block {
            return Err(ErrorStack::get());
        }
        let mut outl = 0;
        // SAFETY: `out` has room for the at most one block EVP writes.
        let f = if enc { ffi::EVP_EncryptFinal_ex } else { ffi::EVP_DecryptFinal_ex };
        cvt(unsafe { f(c.as_ptr(), out.as_mut_ptr(), &mut outl) })?;
        Ok(outl as usize)
    }

    /// The tag of the message just finished (EVP writes `tag.len()` bytes).
    #[inline(always)]
    pub fn tag(c: &mut CipherCtxRef, tag: &mut [u8]) -> Result<(), ErrorStack> {
        // SAFETY: EVP writes exactly the requested length into `tag`.
        cvt(unsafe {
            ffi::EVP_CIPHER_CTX_ctrl(c.as_ptr(), ffi::EVP_CTRL_GCM_GET_TAG, int(tag.len())?, tag.as_mut_ptr().cast())
        })
        .map(drop)
    }
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
    let lens = evp::Lens::of(&enc);
    Ok(Ctxs { enc, dec, lens })
}

/// An AES confidentiality mode through OpenSSL's EVP interface.
pub struct OsslMode {
    kind: Kind,
    bits: u16,
    ctx: Option<Ctxs>,
    /// ECB/CBC output: the crate wants a spare block of room even with padding off.
    scratch: Vec<u8>,
}

impl OsslMode {
    /// The mode `kind` with a `bits`-bit key, not yet keyed.
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
        let ctxs = self.ctx.as_mut().ok_or(CipherError::NotInitialized)?;
        let n = if self.kind.padded() { pkcs7_pad(buf, len)? } else { len };
        evp::start(&mut ctxs.enc, ctxs.lens, true, None, (!iv.is_empty()).then_some(iv)).map_err(e)?;
        update(&mut ctxs.enc, ctxs.lens, &mut buf[..n], &mut self.scratch).map_err(e)?;
        Ok(n)
    }
    fn decrypt(&mut self, iv: &[u8], buf: &mut [u8]) -> Result<usize, CipherError> {
        check_mode_args(self.kind, iv, buf, 0)?;
        let n = buf.len();
        if self.kind.padded() && (n == 0 || !n.is_multiple_of(16)) {
            return Err(CipherError::DataLength { got: n });
        }
        let ctxs = self.ctx.as_mut().ok_or(CipherError::NotInitialized)?;
        evp::start(&mut ctxs.dec, ctxs.lens, false, None, (!iv.is_empty()).then_some(iv)).map_err(e)?;
        update(&mut ctxs.dec, ctxs.lens, buf, &mut self.scratch).map_err(e)?;
        if self.kind.padded() {
            pkcs7_unpad(buf)
        } else {
            Ok(n)
        }
    }
}

/// One EVP update over the whole buffer: in place for the byte-oriented modes, through the
/// scratch buffer (plus a copy back) for ECB/CBC.
fn update(
    c: &mut CipherCtx,
    l: evp::Lens,
    buf: &mut [u8],
    scratch: &mut Vec<u8>,
) -> Result<(), openssl::error::ErrorStack> {
    let n = buf.len();
    if l.block > 1 {
        scratch.resize(n + l.block, 0);
        let out = evp::update_into(c, l, buf, scratch)?;
        if out != n {
            return Err(openssl::error::ErrorStack::get());
        }
        buf.copy_from_slice(&scratch[..n]);
        scratch.iter_mut().for_each(|b| *b = 0);
    } else {
        evp::update_inplace(c, l, buf)?;
    }
    Ok(())
}

/// An AES AEAD mode through OpenSSL's EVP interface.
pub struct OsslAead {
    kind: Kind,
    bits: u16,
    ctx: Option<Ctxs>,
    key: Vec<u8>,
    scratch: Vec<u8>, // OCB reports a 16-byte block: see `update`
}

impl OsslAead {
    /// The AEAD mode `kind` with a `bits`-bit key, not yet keyed.
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
        let ctxs = self.ctx.as_mut().ok_or(CipherError::NotInitialized)?;
        let (c, l) = (&mut ctxs.enc, ctxs.lens);
        let key = (kind == Kind::Siv).then_some(&self.key[..]);
        evp::start(c, l, true, key, (!nonce.is_empty()).then_some(nonce)).map_err(e)?;
        if kind == Kind::Ccm {
            c.set_data_len(buf.len()).map_err(e)?;
        }
        if !ad.is_empty() || kind == Kind::Siv {
            evp::aad(c, ad).map_err(e)?;
        }
        body(c, l, buf, &mut self.scratch, kind == Kind::Ccm, true, true).map_err(e)?;
        evp::tag(c, tag).map_err(e)
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        check_aead_args(self.kind, nonce, tag)?;
        let kind = self.kind;
        let ctxs = self.ctx.as_mut().ok_or(CipherError::NotInitialized)?;
        let (c, l) = (&mut ctxs.dec, ctxs.lens);
        let scratch = &mut self.scratch;
        let key = (kind == Kind::Siv).then_some(&self.key[..]);
        let r = (|| -> Result<(), openssl::error::ErrorStack> {
            evp::start(c, l, false, key, (!nonce.is_empty()).then_some(nonce))?;
            c.set_tag(tag)?;
            if kind == Kind::Ccm {
                c.set_data_len(buf.len())?;
            }
            if !ad.is_empty() || kind == Kind::Siv {
                evp::aad(c, ad)?;
            }
            // CCM verifies inside the update and has no final step
            body(c, l, buf, scratch, kind == Kind::Ccm, kind != Kind::Ccm, false)
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
// Inlined: as a call of its own it costs ~40 instructions per message in register saves
// (callgrind), a fifth of the adapter's overhead over a plain EVP loop.
#[inline(always)]
fn body(
    c: &mut CipherCtx,
    l: evp::Lens,
    buf: &mut [u8],
    scratch: &mut Vec<u8>,
    always_update: bool,
    fin: bool,
    enc: bool,
) -> Result<(), openssl::error::ErrorStack> {
    let n = buf.len();
    if l.block > 1 {
        scratch.resize(n + 2 * l.block, 0);
        let mut out = if n > 0 || always_update { evp::update_into(c, l, buf, scratch)? } else { 0 };
        if fin {
            out += evp::finish(c, l, enc, &mut scratch[out..])?;
        }
        if out != n {
            return Err(openssl::error::ErrorStack::get());
        }
        buf.copy_from_slice(&scratch[..n]);
    } else {
        if n > 0 || always_update {
            evp::update_inplace(c, l, buf)?;
        }
        if fin {
            let mut rest = [0u8; 1];
            if evp::finish(c, l, enc, &mut rest)? != 0 {
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
    /// An instance without key.
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
        let lens = evp::Lens::of(&enc);
        self.ctx = Some(Ctxs { enc, dec, lens });
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        check_len(nonce.len(), 12, lwcbench_core::iv_err)?;
        check_len(tag.len(), 16, |x, g| CipherError::TagLength { expected: x, got: g })?;
        let ctxs = self.ctx.as_mut().ok_or(CipherError::NotInitialized)?;
        let (c, l) = (&mut ctxs.enc, ctxs.lens);
        evp::start(c, l, true, None, Some(nonce)).map_err(e)?;
        if !ad.is_empty() {
            evp::aad(c, ad).map_err(e)?;
        }
        body(c, l, buf, &mut self.scratch, false, true, true).map_err(e)?;
        evp::tag(c, tag).map_err(e)
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        check_len(nonce.len(), 12, lwcbench_core::iv_err)?;
        check_len(tag.len(), 16, |x, g| CipherError::TagLength { expected: x, got: g })?;
        let ctxs = self.ctx.as_mut().ok_or(CipherError::NotInitialized)?;
        let (c, l) = (&mut ctxs.dec, ctxs.lens);
        let scratch = &mut self.scratch;
        let r = (|| -> Result<(), openssl::error::ErrorStack> {
            evp::start(c, l, false, None, Some(nonce))?;
            c.set_tag(tag)?;
            if !ad.is_empty() {
                evp::aad(c, ad)?;
            }
            body(c, l, buf, scratch, false, true, false)
        })();
        r.map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}

/// The checks of the OpenSSL ChaCha20-Poly1305 entry: the AEAD contract, RFC 8439's vectors
/// and Wycheproof's.
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
