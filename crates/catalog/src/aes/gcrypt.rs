//! libgcrypt (GnuPG's crypto library) through own `extern "C"` bindings to the documented
//! `gcry_cipher_*` API (gcrypt.h; constants transcribed from libgcrypt 1.10's header).
//! `set_key` opens one handle per direction and runs `gcry_cipher_setkey`; each message
//! resets the handle and sets the IV/counter. libgcrypt does no padding: the adapter applies
//! PKCS#7 for ECB/CBC. Handles are closed on drop; libgcrypt wipes their key material.
use std::os::raw::{c_char, c_int, c_uint, c_void};

use lwcbench_core::{check_len, key_err, Aead, CipherError, CipherInfo, CipherMode};

use super::{check_aead_args, check_mode_args, info, key_bytes, pkcs7_pad, pkcs7_unpad, Kind, Lib};

type Hd = *mut c_void;
type Err = c_uint;

#[link(name = "gcrypt")]
extern "C" {
    fn gcry_check_version(req: *const c_char) -> *const c_char;
    fn gcry_control(cmd: c_int, ...) -> Err;
    fn gcry_cipher_open(hd: *mut Hd, algo: c_int, mode: c_int, flags: c_uint) -> Err;
    fn gcry_cipher_close(hd: Hd);
    fn gcry_cipher_setkey(hd: Hd, key: *const c_void, len: usize) -> Err;
    fn gcry_cipher_setiv(hd: Hd, iv: *const c_void, len: usize) -> Err;
    fn gcry_cipher_setctr(hd: Hd, ctr: *const c_void, len: usize) -> Err;
    fn gcry_cipher_authenticate(hd: Hd, a: *const c_void, len: usize) -> Err;
    fn gcry_cipher_gettag(hd: Hd, tag: *mut c_void, len: usize) -> Err;
    fn gcry_cipher_checktag(hd: Hd, tag: *const c_void, len: usize) -> Err;
    fn gcry_cipher_encrypt(hd: Hd, out: *mut c_void, outsize: usize, inp: *const c_void, inlen: usize) -> Err;
    fn gcry_cipher_decrypt(hd: Hd, out: *mut c_void, outsize: usize, inp: *const c_void, inlen: usize) -> Err;
    fn gcry_cipher_ctl(hd: Hd, cmd: c_int, buf: *mut c_void, len: usize) -> Err;
}

const GCRYCTL_RESET: c_int = 4;
const GCRYCTL_FINALIZE: c_int = 5;
const GCRYCTL_DISABLE_SECMEM: c_int = 37;
const GCRYCTL_INITIALIZATION_FINISHED: c_int = 38;
const GCRYCTL_SET_CCM_LENGTHS: c_int = 69;
const GCRYCTL_SET_DECRYPTION_TAG: c_int = 80;

/// Initialise the library once (version check, no secure memory: keys live in ordinary
/// memory as in the other adapters) and return its version.
pub fn version() -> &'static str {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| unsafe {
        let v = gcry_check_version(std::ptr::null());
        gcry_control(GCRYCTL_DISABLE_SECMEM, 0 as c_int);
        gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0 as c_int);
        if v.is_null() {
            "?".into()
        } else {
            std::ffi::CStr::from_ptr(v).to_string_lossy().into_owned()
        }
    })
}

fn algo(bits: u16) -> c_int {
    match bits {
        128 => 7,
        192 => 8,
        _ => 9,
    }
}

fn mode_id(kind: Kind) -> c_int {
    match kind {
        Kind::Ecb => 1,
        Kind::Cfb => 2,
        Kind::Cbc => 3,
        Kind::Ofb => 5,
        Kind::Ctr => 6,
        Kind::Ccm => 8,
        Kind::Gcm => 9,
        Kind::Ocb => 11,
        Kind::Cfb8 => 12,
        Kind::Eax => 14,
        Kind::Siv => 15,
    }
}

fn ok(e: Err) -> Result<(), CipherError> {
    if e == 0 {
        Ok(())
    } else {
        Err(CipherError::NotInitialized)
    }
}

/// One open, keyed handle.
struct Handle(Hd);
// A handle is used by one thread at a time (the adapter owns it).
unsafe impl Send for Handle {}

impl Handle {
    fn open(kind: Kind, bits: u16, key: &[u8]) -> Result<Handle, CipherError> {
        version();
        let mut hd: Hd = std::ptr::null_mut();
        ok(unsafe { gcry_cipher_open(&mut hd, algo(bits), mode_id(kind), 0) })?;
        let h = Handle(hd);
        ok(unsafe { gcry_cipher_setkey(h.0, key.as_ptr().cast(), key.len()) })?;
        Ok(h)
    }
    /// Reset and load the IV / counter / nonce for a new message.
    fn start(&self, kind: Kind, iv: &[u8]) -> Result<(), CipherError> {
        ok(unsafe { gcry_cipher_ctl(self.0, GCRYCTL_RESET, std::ptr::null_mut(), 0) })?;
        match kind {
            Kind::Ecb => Ok(()),
            Kind::Ctr => ok(unsafe { gcry_cipher_setctr(self.0, iv.as_ptr().cast(), iv.len()) }),
            Kind::Siv if iv.is_empty() => Ok(()),
            _ => ok(unsafe { gcry_cipher_setiv(self.0, iv.as_ptr().cast(), iv.len()) }),
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        unsafe { gcry_cipher_close(self.0) }
    }
}

/// An AES confidentiality mode through libgcrypt.
pub struct GcryMode {
    kind: Kind,
    bits: u16,
    h: Option<(Handle, Handle)>,
}

impl GcryMode {
    /// The mode `kind` with a `bits`-bit key, not yet keyed.
    pub fn new(kind: Kind, bits: u16) -> Self {
        GcryMode { kind, bits, h: None }
    }
}

impl CipherMode for GcryMode {
    fn info(&self) -> CipherInfo {
        info(Lib::Gcrypt, self.kind, self.bits)
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), key_bytes(self.kind, self.bits), key_err)?;
        self.h = None;
        self.h = Some((Handle::open(self.kind, self.bits, key)?, Handle::open(self.kind, self.bits, key)?));
        Ok(())
    }
    fn ciphertext_len(&self, len: usize) -> usize {
        self.kind.ciphertext_len(len)
    }
    fn encrypt(&mut self, iv: &[u8], buf: &mut [u8], len: usize) -> Result<usize, CipherError> {
        check_mode_args(self.kind, iv, buf, len)?;
        let (h, _) = self.h.as_ref().ok_or(CipherError::NotInitialized)?;
        let n = if self.kind.padded() { pkcs7_pad(buf, len)? } else { len };
        h.start(self.kind, iv)?;
        // in place: input NULL, length 0 (gcrypt.h)
        ok(unsafe { gcry_cipher_encrypt(h.0, buf.as_mut_ptr().cast(), n, std::ptr::null(), 0) })?;
        Ok(n)
    }
    fn decrypt(&mut self, iv: &[u8], buf: &mut [u8]) -> Result<usize, CipherError> {
        check_mode_args(self.kind, iv, buf, 0)?;
        let n = buf.len();
        if self.kind.padded() && (n == 0 || !n.is_multiple_of(16)) {
            return Err(CipherError::DataLength { got: n });
        }
        let (_, h) = self.h.as_ref().ok_or(CipherError::NotInitialized)?;
        h.start(self.kind, iv)?;
        ok(unsafe { gcry_cipher_decrypt(h.0, buf.as_mut_ptr().cast(), n, std::ptr::null(), 0) })?;
        if self.kind.padded() {
            pkcs7_unpad(buf)
        } else {
            Ok(n)
        }
    }
}

/// An AES AEAD mode through libgcrypt.
pub struct GcryAead {
    kind: Kind,
    bits: u16,
    h: Option<Handle>,
}

impl GcryAead {
    /// The AEAD mode `kind` with a `bits`-bit key, not yet keyed.
    pub fn new(kind: Kind, bits: u16) -> Self {
        GcryAead { kind, bits, h: None }
    }
    fn begin(&self, nonce: &[u8], ad: &[u8], len: usize) -> Result<&Handle, CipherError> {
        let h = self.h.as_ref().ok_or(CipherError::NotInitialized)?;
        h.start(self.kind, nonce)?;
        if self.kind == Kind::Ccm {
            // CCM needs the lengths up front: [message, AD, tag] as u64 (gcrypt manual §5.2)
            let mut l: [u64; 3] = [len as u64, ad.len() as u64, 16];
            ok(unsafe {
                gcry_cipher_ctl(h.0, GCRYCTL_SET_CCM_LENGTHS, l.as_mut_ptr().cast(), std::mem::size_of_val(&l))
            })?;
        }
        if !ad.is_empty() || self.kind == Kind::Siv {
            ok(unsafe { gcry_cipher_authenticate(h.0, ad.as_ptr().cast(), ad.len()) })?;
        }
        if self.kind == Kind::Ocb {
            // OCB must be told which call is the last (gcry_cipher_final)
            ok(unsafe { gcry_cipher_ctl(h.0, GCRYCTL_FINALIZE, std::ptr::null_mut(), 0) })?;
        }
        Ok(h)
    }
}

impl Aead for GcryAead {
    fn info(&self) -> CipherInfo {
        info(Lib::Gcrypt, self.kind, self.bits)
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), key_bytes(self.kind, self.bits), key_err)?;
        self.h = None;
        self.h = Some(Handle::open(self.kind, self.bits, key)?);
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        check_aead_args(self.kind, nonce, tag)?;
        let h = self.begin(nonce, ad, buf.len())?;
        ok(unsafe { gcry_cipher_encrypt(h.0, buf.as_mut_ptr().cast(), buf.len(), std::ptr::null(), 0) })?;
        ok(unsafe { gcry_cipher_gettag(h.0, tag.as_mut_ptr().cast(), tag.len()) })
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        check_aead_args(self.kind, nonce, tag)?;
        let r = (|| {
            let h = self.begin(nonce, ad, buf.len())?;
            if self.kind == Kind::Siv {
                // SIV checks inside decrypt and needs the tag (the IV) first
                ok(unsafe {
                    gcry_cipher_ctl(h.0, GCRYCTL_SET_DECRYPTION_TAG, tag.as_ptr() as *mut c_void, tag.len())
                })?;
            }
            ok(unsafe { gcry_cipher_decrypt(h.0, buf.as_mut_ptr().cast(), buf.len(), std::ptr::null(), 0) })?;
            if self.kind != Kind::Siv {
                ok(unsafe { gcry_cipher_checktag(h.0, tag.as_ptr().cast(), tag.len()) })?;
            }
            Ok::<(), CipherError>(())
        })();
        r.map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}
