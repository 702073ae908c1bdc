//! wolfSSL's wolfCrypt through own `extern "C"` bindings to the `wc_Aes*` API (aes.h of
//! wolfSSL 5.5). The `Aes` object is allocated by a small C shim (its size depends on the
//! library's build options); `set_key` runs `wc_AesSetKey`/`wc_AesGcmSetKey`/
//! `wc_AesCcmSetKey` (ECB/CBC: one object per direction, as wolfSSL keeps only one
//! schedule); each message sets the IV with `wc_AesSetIV`. wolfSSL does no padding: the
//! adapter applies PKCS#7 for ECB/CBC and always passes whole, correctly sized buffers
//! (the study met a heap overflow in a wolfSSL CBC wrapper above 1 KiB; long inputs are
//! covered by the cross-library agreement check, up to 64 KiB).
//! SIV: wolfSSL 5.5's SIV API takes the key on every call (`wc_AesSivEncrypt(key, …)`), so
//! `set_key` only stores the key and the key schedule is part of every message.
use std::os::raw::{c_char, c_int, c_void};

use lwcbench_core::{check_len, key_err, Aead, CipherError, CipherInfo, CipherMode};

use super::{check_aead_args, check_mode_args, info, key_bytes, pkcs7_pad, pkcs7_unpad, Kind, Lib};

type A = *mut c_void;

extern "C" {
    fn lwc_wolf_version() -> *const c_char;
    fn lwc_wolf_aes_new() -> A;
    fn lwc_wolf_aes_free(a: A);
}

#[link(name = "wolfssl")]
extern "C" {
    fn wc_AesSetKey(a: A, key: *const u8, len: u32, iv: *const u8, dir: c_int) -> c_int;
    fn wc_AesSetIV(a: A, iv: *const u8) -> c_int;
    fn wc_AesCbcEncrypt(a: A, out: *mut u8, inp: *const u8, sz: u32) -> c_int;
    fn wc_AesCbcDecrypt(a: A, out: *mut u8, inp: *const u8, sz: u32) -> c_int;
    fn wc_AesEcbEncrypt(a: A, out: *mut u8, inp: *const u8, sz: u32) -> c_int;
    fn wc_AesEcbDecrypt(a: A, out: *mut u8, inp: *const u8, sz: u32) -> c_int;
    fn wc_AesCfbEncrypt(a: A, out: *mut u8, inp: *const u8, sz: u32) -> c_int;
    fn wc_AesCfbDecrypt(a: A, out: *mut u8, inp: *const u8, sz: u32) -> c_int;
    fn wc_AesCfb8Encrypt(a: A, out: *mut u8, inp: *const u8, sz: u32) -> c_int;
    fn wc_AesCfb8Decrypt(a: A, out: *mut u8, inp: *const u8, sz: u32) -> c_int;
    fn wc_AesOfbEncrypt(a: A, out: *mut u8, inp: *const u8, sz: u32) -> c_int;
    fn wc_AesOfbDecrypt(a: A, out: *mut u8, inp: *const u8, sz: u32) -> c_int;
    fn wc_AesCtrEncrypt(a: A, out: *mut u8, inp: *const u8, sz: u32) -> c_int;
    fn wc_AesGcmSetKey(a: A, key: *const u8, len: u32) -> c_int;
    fn wc_AesGcmEncrypt(
        a: A,
        out: *mut u8,
        inp: *const u8,
        sz: u32,
        iv: *const u8,
        iv_sz: u32,
        tag: *mut u8,
        tag_sz: u32,
        ad: *const u8,
        ad_sz: u32,
    ) -> c_int;
    fn wc_AesGcmDecrypt(
        a: A,
        out: *mut u8,
        inp: *const u8,
        sz: u32,
        iv: *const u8,
        iv_sz: u32,
        tag: *const u8,
        tag_sz: u32,
        ad: *const u8,
        ad_sz: u32,
    ) -> c_int;
    fn wc_AesCcmSetKey(a: A, key: *const u8, len: u32) -> c_int;
    fn wc_AesCcmEncrypt(
        a: A,
        out: *mut u8,
        inp: *const u8,
        sz: u32,
        n: *const u8,
        n_sz: u32,
        tag: *mut u8,
        tag_sz: u32,
        ad: *const u8,
        ad_sz: u32,
    ) -> c_int;
    fn wc_AesCcmDecrypt(
        a: A,
        out: *mut u8,
        inp: *const u8,
        sz: u32,
        n: *const u8,
        n_sz: u32,
        tag: *const u8,
        tag_sz: u32,
        ad: *const u8,
        ad_sz: u32,
    ) -> c_int;
    fn wc_AesSivEncrypt(
        key: *const u8,
        key_sz: u32,
        ad: *const u8,
        ad_sz: u32,
        n: *const u8,
        n_sz: u32,
        inp: *const u8,
        sz: u32,
        siv: *mut u8,
        out: *mut u8,
    ) -> c_int;
    fn wc_AesSivDecrypt(
        key: *const u8,
        key_sz: u32,
        ad: *const u8,
        ad_sz: u32,
        n: *const u8,
        n_sz: u32,
        inp: *const u8,
        sz: u32,
        siv: *mut u8,
        out: *mut u8,
    ) -> c_int;
}

const AES_ENCRYPTION: c_int = 0;
const AES_DECRYPTION: c_int = 1;

/// The wolfSSL version the library reports at run time.
pub fn version() -> &'static str {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| unsafe { std::ffi::CStr::from_ptr(lwc_wolf_version()).to_string_lossy().into_owned() })
}

fn ok(r: c_int) -> Result<(), CipherError> {
    if r == 0 {
        Ok(())
    } else {
        Err(CipherError::NotInitialized)
    }
}

/// One heap-allocated `Aes` object, wiped and freed on drop.
struct Obj(A);
unsafe impl Send for Obj {}
impl Obj {
    fn new() -> Result<Obj, CipherError> {
        let a = unsafe { lwc_wolf_aes_new() };
        if a.is_null() {
            Err(CipherError::NotInitialized)
        } else {
            Ok(Obj(a))
        }
    }
}
impl Drop for Obj {
    fn drop(&mut self) {
        unsafe { lwc_wolf_aes_free(self.0) }
    }
}

fn len32(n: usize) -> Result<u32, CipherError> {
    u32::try_from(n).map_err(|_| CipherError::DataLength { got: n })
}

/// An AES confidentiality mode through wolfCrypt.
pub struct WolfMode {
    kind: Kind,
    bits: u16,
    objs: Option<(Obj, Obj)>,
}

impl WolfMode {
    /// The mode `kind` with a `bits`-bit key, not yet keyed.
    pub fn new(kind: Kind, bits: u16) -> Self {
        WolfMode { kind, bits, objs: None }
    }
}

impl CipherMode for WolfMode {
    fn info(&self) -> CipherInfo {
        info(Lib::WolfSsl, self.kind, self.bits)
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), key_bytes(self.kind, self.bits), key_err)?;
        self.objs = None;
        let (e, d) = (Obj::new()?, Obj::new()?);
        // CFB/OFB/CTR run the forward cipher in both directions
        let ddir = if matches!(self.kind, Kind::Ecb | Kind::Cbc) { AES_DECRYPTION } else { AES_ENCRYPTION };
        ok(unsafe { wc_AesSetKey(e.0, key.as_ptr(), key.len() as u32, std::ptr::null(), AES_ENCRYPTION) })?;
        ok(unsafe { wc_AesSetKey(d.0, key.as_ptr(), key.len() as u32, std::ptr::null(), ddir) })?;
        self.objs = Some((e, d));
        Ok(())
    }
    fn ciphertext_len(&self, len: usize) -> usize {
        self.kind.ciphertext_len(len)
    }
    fn encrypt(&mut self, iv: &[u8], buf: &mut [u8], len: usize) -> Result<usize, CipherError> {
        check_mode_args(self.kind, iv, buf, len)?;
        let (a, _) = self.objs.as_ref().ok_or(CipherError::NotInitialized)?;
        let n = if self.kind.padded() { pkcs7_pad(buf, len)? } else { len };
        let sz = len32(n)?;
        let p = buf.as_mut_ptr();
        if self.kind != Kind::Ecb {
            ok(unsafe { wc_AesSetIV(a.0, iv.as_ptr()) })?; // also drops leftover keystream
        }
        ok(unsafe {
            match self.kind {
                Kind::Ecb => wc_AesEcbEncrypt(a.0, p, p, sz),
                Kind::Cbc => wc_AesCbcEncrypt(a.0, p, p, sz),
                Kind::Cfb => wc_AesCfbEncrypt(a.0, p, p, sz),
                Kind::Cfb8 => wc_AesCfb8Encrypt(a.0, p, p, sz),
                Kind::Ofb => wc_AesOfbEncrypt(a.0, p, p, sz),
                Kind::Ctr => wc_AesCtrEncrypt(a.0, p, p, sz),
                _ => unreachable!("AEAD modes are not CipherModes"),
            }
        })?;
        Ok(n)
    }
    fn decrypt(&mut self, iv: &[u8], buf: &mut [u8]) -> Result<usize, CipherError> {
        check_mode_args(self.kind, iv, buf, 0)?;
        let n = buf.len();
        if self.kind.padded() && (n == 0 || !n.is_multiple_of(16)) {
            return Err(CipherError::DataLength { got: n });
        }
        let (_, a) = self.objs.as_ref().ok_or(CipherError::NotInitialized)?;
        let sz = len32(n)?;
        let p = buf.as_mut_ptr();
        if self.kind != Kind::Ecb {
            ok(unsafe { wc_AesSetIV(a.0, iv.as_ptr()) })?;
        }
        ok(unsafe {
            match self.kind {
                Kind::Ecb => wc_AesEcbDecrypt(a.0, p, p, sz),
                Kind::Cbc => wc_AesCbcDecrypt(a.0, p, p, sz),
                Kind::Cfb => wc_AesCfbDecrypt(a.0, p, p, sz),
                Kind::Cfb8 => wc_AesCfb8Decrypt(a.0, p, p, sz),
                Kind::Ofb => wc_AesOfbDecrypt(a.0, p, p, sz),
                Kind::Ctr => wc_AesCtrEncrypt(a.0, p, p, sz),
                _ => unreachable!("AEAD modes are not CipherModes"),
            }
        })?;
        if self.kind.padded() {
            pkcs7_unpad(buf)
        } else {
            Ok(n)
        }
    }
}

/// An AES AEAD mode through wolfCrypt.
pub struct WolfAead {
    kind: Kind,
    bits: u16,
    obj: Option<Obj>,
    key: Vec<u8>, // SIV only
}

impl WolfAead {
    /// The AEAD mode `kind` with a `bits`-bit key, not yet keyed.
    pub fn new(kind: Kind, bits: u16) -> Self {
        WolfAead { kind, bits, obj: None, key: Vec::new() }
    }
}

impl Drop for WolfAead {
    fn drop(&mut self) {
        self.key.iter_mut().for_each(|b| unsafe { std::ptr::write_volatile(b, 0) });
    }
}

impl Aead for WolfAead {
    fn info(&self) -> CipherInfo {
        info(Lib::WolfSsl, self.kind, self.bits)
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), key_bytes(self.kind, self.bits), key_err)?;
        self.obj = None;
        match self.kind {
            Kind::Siv => {
                self.key.iter_mut().for_each(|b| *b = 0);
                self.key.clear();
                self.key.extend_from_slice(key);
            }
            Kind::Gcm | Kind::Ccm => {
                let o = Obj::new()?;
                let kl = key.len() as u32;
                ok(unsafe {
                    if self.kind == Kind::Gcm {
                        wc_AesGcmSetKey(o.0, key.as_ptr(), kl)
                    } else {
                        wc_AesCcmSetKey(o.0, key.as_ptr(), kl)
                    }
                })?;
                self.obj = Some(o);
            }
            _ => unreachable!("wolfSSL: {:?} not offered", self.kind),
        }
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        check_aead_args(self.kind, nonce, tag)?;
        let (sz, adl) = (len32(buf.len())?, len32(ad.len())?);
        let p = buf.as_mut_ptr();
        if self.kind == Kind::Siv {
            if self.key.is_empty() {
                return Err(CipherError::NotInitialized);
            }
            return ok(unsafe {
                wc_AesSivEncrypt(
                    self.key.as_ptr(),
                    self.key.len() as u32,
                    ad.as_ptr(),
                    adl,
                    nonce.as_ptr(),
                    0,
                    p,
                    sz,
                    tag.as_mut_ptr(),
                    p,
                )
            });
        }
        let o = self.obj.as_ref().ok_or(CipherError::NotInitialized)?;
        let nl = nonce.len() as u32;
        ok(unsafe {
            if self.kind == Kind::Gcm {
                wc_AesGcmEncrypt(o.0, p, p, sz, nonce.as_ptr(), nl, tag.as_mut_ptr(), 16, ad.as_ptr(), adl)
            } else {
                wc_AesCcmEncrypt(o.0, p, p, sz, nonce.as_ptr(), nl, tag.as_mut_ptr(), 16, ad.as_ptr(), adl)
            }
        })
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        check_aead_args(self.kind, nonce, tag)?;
        let (sz, adl) = (len32(buf.len())?, len32(ad.len())?);
        let p = buf.as_mut_ptr();
        let r = if self.kind == Kind::Siv {
            if self.key.is_empty() {
                return Err(CipherError::NotInitialized);
            }
            let mut siv = [0u8; 16];
            siv.copy_from_slice(tag);
            unsafe {
                wc_AesSivDecrypt(
                    self.key.as_ptr(),
                    self.key.len() as u32,
                    ad.as_ptr(),
                    adl,
                    nonce.as_ptr(),
                    0,
                    p,
                    sz,
                    siv.as_mut_ptr(),
                    p,
                )
            }
        } else {
            let o = self.obj.as_ref().ok_or(CipherError::NotInitialized)?;
            let nl = nonce.len() as u32;
            unsafe {
                if self.kind == Kind::Gcm {
                    wc_AesGcmDecrypt(o.0, p, p, sz, nonce.as_ptr(), nl, tag.as_ptr(), 16, ad.as_ptr(), adl)
                } else {
                    wc_AesCcmDecrypt(o.0, p, p, sz, nonce.as_ptr(), nl, tag.as_ptr(), 16, ad.as_ptr(), adl)
                }
            }
        };
        ok(r).map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}
