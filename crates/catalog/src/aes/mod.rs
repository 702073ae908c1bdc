//! The AES library matrix (system libraries + RustCrypto): AES in the modes libraries offer — ECB, CBC, CFB (128-bit segments), CFB8, OFB, CTR, GCM,
//! CCM, EAX, OCB and SIV — with 128/192/256-bit keys, through four libraries: RustCrypto
//! crates, OpenSSL (the `openssl` crate), libgcrypt and wolfSSL (own `extern "C"` bindings).
//! See docs/aes-libraries.md.
//!
//! Entries are named `AES-<bits>-<MODE>` with the library as implementation, e.g.
//! `AES-128-GCM/openssl`. Authenticated modes are [`lwcbench_core::Aead`]s; the others are
//! [`lwcbench_core::CipherMode`]s. Fixed parameters per entry (one entry per parameter set, as the study):
//! CBC/CFB/OFB/CTR 16-byte IV (CTR: the IV is the whole initial 128-bit big-endian counter
//! block, as SP 800-38A), GCM 12-byte nonce, CCM 12-byte nonce, EAX 16-byte nonce, OCB
//! 12-byte nonce, every tag 16 bytes; SIV (RFC 5297, CMAC) is deterministic: no nonce, one
//! associated-data component, a double-length key (AES-128-SIV takes 256 bits).
//! ECB and CBC pad with PKCS#7 (a whole extra block when the message is block-aligned).
use lwcbench_core::{BitOrder, CipherError, CipherInfo, Family, Language, Origin};

pub mod ccm_star;
pub mod check;
#[cfg(lwc_gcrypt)]
pub mod gcrypt;
mod make;
#[cfg(feature = "openssl")]
pub mod ossl;
pub mod rc;
mod register;
#[cfg(lwc_wolfssl)]
pub mod wolf;

pub use make::{make_aead, make_mode};
pub use register::{missing_libraries, register};

/// The modes, in table order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Electronic codebook, PKCS#7 padding.
    Ecb,
    /// Cipher block chaining, PKCS#7 padding.
    Cbc,
    /// 128-bit cipher feedback.
    Cfb,
    /// 8-bit cipher feedback.
    Cfb8,
    /// Output feedback.
    Ofb,
    /// Counter mode (128-bit big-endian counter).
    Ctr,
    /// Galois/counter mode (AEAD).
    Gcm,
    /// Counter with CBC-MAC (AEAD).
    Ccm,
    /// EAX (AEAD).
    Eax,
    /// Offset codebook mode, OCB3 (AEAD).
    Ocb,
    /// Synthetic IV, RFC 5297 (AEAD, deterministic).
    Siv,
}

impl Kind {
    /// Every mode, in table order.
    pub const ALL: [Kind; 11] = [
        Kind::Ecb,
        Kind::Cbc,
        Kind::Cfb,
        Kind::Cfb8,
        Kind::Ofb,
        Kind::Ctr,
        Kind::Gcm,
        Kind::Ccm,
        Kind::Eax,
        Kind::Ocb,
        Kind::Siv,
    ];
    /// The mode's name in entry names ("ECB", "GCM", ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Ecb => "ECB",
            Kind::Cbc => "CBC",
            Kind::Cfb => "CFB",
            Kind::Cfb8 => "CFB8",
            Kind::Ofb => "OFB",
            Kind::Ctr => "CTR",
            Kind::Gcm => "GCM",
            Kind::Ccm => "CCM",
            Kind::Eax => "EAX",
            Kind::Ocb => "OCB",
            Kind::Siv => "SIV",
        }
    }
    /// Position in [`Kind::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }
    /// The mode at position `i` (below 11) of [`Kind::ALL`].
    pub const fn from_index(i: usize) -> Kind {
        Kind::ALL[i]
    }
    /// An authenticated mode (GCM, CCM, EAX, OCB, SIV).
    pub const fn is_aead(self) -> bool {
        matches!(self, Kind::Gcm | Kind::Ccm | Kind::Eax | Kind::Ocb | Kind::Siv)
    }
    /// ECB and CBC pad (PKCS#7); the others keep the message length.
    pub const fn padded(self) -> bool {
        matches!(self, Kind::Ecb | Kind::Cbc)
    }
    /// IV or nonce bytes this catalogue uses (0 for ECB and SIV, 12 for GCM, CCM, OCB).
    pub const fn iv_bytes(self) -> usize {
        match self {
            Kind::Ecb | Kind::Siv => 0,
            Kind::Gcm | Kind::Ccm | Kind::Ocb => 12,
            _ => 16,
        }
    }
    /// Tag bytes: 16 for the AEADs, 0 otherwise.
    pub const fn tag_bytes(self) -> usize {
        if self.is_aead() {
            16
        } else {
            0
        }
    }
    /// Ciphertext bytes on the wire for an `n`-byte message: padded body + tag (the IV or
    /// nonce is sent too but not counted here; see [`Kind::iv_bytes`]).
    pub const fn ciphertext_len(self, n: usize) -> usize {
        if self.padded() {
            (n / 16 + 1) * 16
        } else {
            n + self.tag_bytes()
        }
    }
    /// The mode of this name, case-insensitive.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// The AES key sizes.
pub const KEY_BITS: [u16; 3] = [128, 192, 256];

const fn key_index(bits: u16) -> usize {
    match bits {
        128 => 0,
        192 => 1,
        _ => 2,
    }
}

macro_rules! names {
    ($($m:literal),*) => {
        [$([concat!("AES-128-", $m), concat!("AES-192-", $m), concat!("AES-256-", $m)]),*]
    };
}
static NAMES: [[&str; 3]; 11] = names!("ECB", "CBC", "CFB", "CFB8", "OFB", "CTR", "GCM", "CCM", "EAX", "OCB", "SIV");

/// `AES-<bits>-<MODE>`.
pub fn name(kind: Kind, bits: u16) -> &'static str {
    NAMES[kind.index()][key_index(bits)]
}

/// The four libraries, in table order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lib {
    /// The RustCrypto crates.
    RustCrypto,
    /// OpenSSL's libcrypto.
    OpenSsl,
    /// libgcrypt.
    Gcrypt,
    /// wolfSSL's wolfCrypt.
    WolfSsl,
}

impl Lib {
    /// Every library, in table order.
    pub const ALL: [Lib; 4] = [Lib::RustCrypto, Lib::OpenSsl, Lib::Gcrypt, Lib::WolfSsl];
    /// The implementation name in entry ids.
    pub const fn as_str(self) -> &'static str {
        match self {
            Lib::RustCrypto => "rustcrypto",
            Lib::OpenSsl => "openssl",
            Lib::Gcrypt => "gcrypt",
            Lib::WolfSsl => "wolfssl",
        }
    }
    /// The library of this implementation name, case-insensitive.
    pub fn parse(s: &str) -> Option<Lib> {
        Lib::ALL.into_iter().find(|l| l.as_str().eq_ignore_ascii_case(s.trim()))
    }
    /// Built into this binary?
    pub fn built(self) -> bool {
        self.status().is_ok()
    }
    /// Does this library (as this build binds it) offer the mode? Key sizes: all three
    /// wherever a mode is offered.
    pub fn supports(self, kind: Kind) -> bool {
        match self {
            Lib::RustCrypto | Lib::Gcrypt => true,
            Lib::OpenSsl => kind != Kind::Eax, // OpenSSL has no EAX
            Lib::WolfSsl => !matches!(kind, Kind::Eax | Kind::Ocb), // not in wolfSSL 5.5 (Debian 12)
        }
    }
    /// Why a mode is missing, for the support matrix.
    pub fn unsupported_reason(self, kind: Kind) -> &'static str {
        match (self, kind) {
            (Lib::OpenSsl, Kind::Eax) => "OpenSSL has no EAX",
            (Lib::WolfSsl, Kind::Eax) => "wolfSSL ≥ 5.6 only (EAX); Debian's is older",
            (Lib::WolfSsl, Kind::Ocb) => "wolfSSL has no OCB",
            _ => "",
        }
    }
    /// A documented limitation of the library for this mode and message length, reported by
    /// `lwcbench verify` as a finding instead of a failure.
    pub fn limitation(self, kind: Kind, len: usize) -> Option<&'static str> {
        match (self, kind, len) {
            (Lib::OpenSsl, Kind::Siv, 0) => Some("OpenSSL 3.0 AES-SIV refuses an empty message (EVP final fails; openssl/openssl issues 17268 and 26580)"),
            _ => None,
        }
    }
    fn origin(self) -> Origin {
        match self {
            Lib::RustCrypto => Origin::Crate { name: "RustCrypto", version: "aes 0.9" },
            l => Origin::System { library: l.as_str(), version: l.status().unwrap_or("?") },
        }
    }
    fn language(self) -> Language {
        if self == Lib::RustCrypto {
            Language::Rust
        } else {
            Language::C
        }
    }
}

/// Metadata of one library × mode × key size.
pub fn info(lib: Lib, kind: Kind, bits: u16) -> CipherInfo {
    let rounds = match bits {
        128 => 10,
        192 => 12,
        _ => 14,
    };
    CipherInfo {
        name: name(kind, bits),
        implementation: lib.as_str(),
        family: if kind.is_aead() { Family::Aead } else { Family::Mode },
        key_bits: if kind == Kind::Siv { 2 * bits } else { bits },
        iv_bits: (kind.iv_bytes() * 8) as u16,
        block_bits: 128,
        tag_bits: (kind.tag_bytes() * 8) as u16,
        // expanded encryption key + one chaining/counter block
        state_bytes: 16 * (rounds + 1) + 16,
        origin: lib.origin(),
        language: lib.language(),
        bit_order: BitOrder::MsbFirst,
        bit_granular: false,
        note: if kind.padded() { "PKCS#7 padding" } else { "" },
    }
}

/// PKCS#7: pad `buf[..len]` to the next whole block (a full block if aligned); returns the
/// padded length. `buf` must hold it.
pub fn pkcs7_pad(buf: &mut [u8], len: usize) -> Result<usize, CipherError> {
    let n = (len / 16 + 1) * 16;
    if buf.len() < n {
        return Err(CipherError::BufferTooSmall { needed: n, got: buf.len() });
    }
    let p = (n - len) as u8;
    buf[len..n].fill(p);
    Ok(n)
}

/// PKCS#7: the unpadded length, or `DataLength` for a bad pad. (Not constant time: these
/// unauthenticated modes are padding oracles anyway.)
pub fn pkcs7_unpad(buf: &[u8]) -> Result<usize, CipherError> {
    let bad = CipherError::DataLength { got: buf.len() };
    let &p = buf.last().ok_or(bad)?;
    if p == 0 || p > 16 || !buf.len().is_multiple_of(16) || buf[buf.len() - p as usize..].iter().any(|&b| b != p) {
        return Err(bad);
    }
    Ok(buf.len() - p as usize)
}

/// Shared argument checks of every [`lwcbench_core::CipherMode`] adapter.
pub fn check_mode_args(kind: Kind, iv: &[u8], buf: &[u8], len: usize) -> Result<(), CipherError> {
    lwcbench_core::check_len(iv.len(), kind.iv_bytes(), lwcbench_core::iv_err)?;
    let need = kind.ciphertext_len(len);
    if buf.len() < need || len > buf.len() {
        return Err(CipherError::BufferTooSmall { needed: need.max(len), got: buf.len() });
    }
    Ok(())
}

/// Shared argument checks of every AEAD adapter.
pub fn check_aead_args(kind: Kind, nonce: &[u8], tag: &[u8]) -> Result<(), CipherError> {
    lwcbench_core::check_len(nonce.len(), kind.iv_bytes(), lwcbench_core::iv_err)?;
    lwcbench_core::check_len(tag.len(), 16, |e, g| CipherError::TagLength { expected: e, got: g })
}

/// AES key bytes for a mode (SIV: two keys).
pub fn key_bytes(kind: Kind, bits: u16) -> usize {
    let b = bits as usize / 8;
    if kind == Kind::Siv {
        2 * b
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkcs7_round_trip_and_rejects() {
        // RFC 5652 §6.3: k − (l mod k) octets of value k − (l mod k)
        let mut b = [0u8; 32];
        assert_eq!(pkcs7_pad(&mut b, 13).unwrap(), 16);
        assert_eq!(&b[13..16], &[3, 3, 3]);
        assert_eq!(pkcs7_unpad(&b[..16]).unwrap(), 13);
        assert_eq!(pkcs7_pad(&mut b, 16).unwrap(), 32);
        assert_eq!(&b[16..32], &[16; 16]);
        b[31] = 0;
        assert!(pkcs7_unpad(&b).is_err());
        b[31] = 17;
        assert!(pkcs7_unpad(&b).is_err());
        assert!(pkcs7_pad(&mut [0u8; 16], 16).is_err());
    }

    #[test]
    fn names_and_lengths() {
        assert_eq!(name(Kind::Cfb8, 192), "AES-192-CFB8");
        assert_eq!(Kind::Cbc.ciphertext_len(16), 32);
        assert_eq!(Kind::Ecb.ciphertext_len(15), 16);
        assert_eq!(Kind::Ctr.ciphertext_len(15), 15);
        assert_eq!(Kind::Gcm.ciphertext_len(15), 31);
        assert_eq!(info(Lib::RustCrypto, Kind::Siv, 128).key_bits, 256);
    }
}
