//! Instances from the libraries this build binds, and their versions.
use lwcbench_core::{Aead, CipherMode};

#[cfg(lwc_gcrypt)]
use super::gcrypt;
#[cfg(feature = "openssl")]
use super::ossl;
use super::rc;
#[cfg(lwc_wolfssl)]
use super::wolf;
use super::{Kind, Lib};

impl Lib {
    /// Ok(version) if built, else the message saying why not and how to fix it.
    pub fn status(self) -> Result<&'static str, &'static str> {
        match self {
            Lib::RustCrypto => Ok("aes 0.9 / cbc 0.2 / cfb-mode 0.9 / cfb8 0.9 / ofb 0.7 / ctr 0.10 / ecb 0.2 / aes-gcm 0.11 / ccm 0.6 / eax 0.6 / ocb3 0.2 / aes-siv 0.8"),
            Lib::OpenSsl => {
                #[cfg(feature = "openssl")]
                return Ok(ossl::version());
                #[cfg(not(feature = "openssl"))]
                return Err("openssl: not built — the `openssl` feature of lwcbench-catalog is off (it needs libssl-dev; run scripts/setup.sh and build with default features)");
            }
            Lib::Gcrypt => {
                #[cfg(lwc_gcrypt)]
                return Ok(gcrypt::version());
                #[cfg(not(lwc_gcrypt))]
                return Err(env!("LWC_GCRYPT_STATUS"));
            }
            Lib::WolfSsl => {
                #[cfg(lwc_wolfssl)]
                return Ok(wolf::version());
                #[cfg(not(lwc_wolfssl))]
                return Err(env!("LWC_WOLFSSL_STATUS"));
            }
        }
    }
}

/// A fresh unkeyed instance of a non-AEAD mode (None if unsupported or not built).
pub fn make_mode(lib: Lib, kind: Kind, bits: u16) -> Option<Box<dyn CipherMode + Send>> {
    if kind.is_aead() || !lib.built() || !lib.supports(kind) {
        return None;
    }
    match lib {
        Lib::RustCrypto => Some(rc::mode(kind, bits)),
        #[cfg(feature = "openssl")]
        Lib::OpenSsl => Some(Box::new(ossl::OsslMode::new(kind, bits))),
        #[cfg(lwc_gcrypt)]
        Lib::Gcrypt => Some(Box::new(gcrypt::GcryMode::new(kind, bits))),
        #[cfg(lwc_wolfssl)]
        Lib::WolfSsl => Some(Box::new(wolf::WolfMode::new(kind, bits))),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// A fresh unkeyed instance of an AEAD mode (None if unsupported or not built).
pub fn make_aead(lib: Lib, kind: Kind, bits: u16) -> Option<Box<dyn Aead + Send>> {
    if !kind.is_aead() || !lib.built() || !lib.supports(kind) {
        return None;
    }
    match lib {
        Lib::RustCrypto => Some(rc::aead(kind, bits)),
        #[cfg(feature = "openssl")]
        Lib::OpenSsl => Some(Box::new(ossl::OsslAead::new(kind, bits))),
        #[cfg(lwc_gcrypt)]
        Lib::Gcrypt => Some(Box::new(gcrypt::GcryAead::new(kind, bits))),
        #[cfg(lwc_wolfssl)]
        Lib::WolfSsl => Some(Box::new(wolf::WolfAead::new(kind, bits))),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}
