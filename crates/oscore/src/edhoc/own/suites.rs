//! The cipher suites (RFC 9528 §3.6): 0 (AES-CCM-16-64-128, SHA-256, 8-byte MAC, X25519,
//! EdDSA) and 2 (AES-CCM-16-64-128, SHA-256, 8-byte MAC, P-256, ES256). Both share the AEAD,
//! the hash and the MAC length; they differ in the curve. Signatures (method 0) are offered
//! with suite 0's Ed25519 only.
use core::fmt;

use p256::elliptic_curve::point::DecompressPoint;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use zeroize::Zeroizing;

/// An EDHOC cipher suite this implementation speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdhocSuite {
    /// Suite 0: X25519 key agreement, Ed25519 signatures.
    Suite0,
    /// Suite 2: P-256 key agreement (ES256 signatures are not offered).
    Suite2,
}

/// The EDHOC hash (SHA-256) output length, in bytes.
pub const HASH_LEN: usize = 32;
/// The EDHOC AEAD (AES-CCM-16-64-128) key length.
pub const KEY_LEN: usize = 16;
/// The EDHOC AEAD nonce length.
pub const IV_LEN: usize = 13;
/// The EDHOC MAC length with static DH (both suites).
pub const MAC_LEN: usize = 8;

impl EdhocSuite {
    /// Every suite, in this implementation's order of preference.
    pub const ALL: [EdhocSuite; 2] = [EdhocSuite::Suite0, EdhocSuite::Suite2];

    /// The suite's number in the IANA EDHOC Cipher Suites registry.
    pub fn id(self) -> u8 {
        match self {
            EdhocSuite::Suite0 => 0,
            EdhocSuite::Suite2 => 2,
        }
    }

    /// The suite numbered `id`, if it is one of these.
    pub fn from_id(id: i64) -> Option<EdhocSuite> {
        match id {
            0 => Some(EdhocSuite::Suite0),
            2 => Some(EdhocSuite::Suite2),
            _ => None,
        }
    }

    /// The name of its key agreement curve.
    pub fn curve(self) -> &'static str {
        match self {
            EdhocSuite::Suite0 => "X25519",
            EdhocSuite::Suite2 => "P-256",
        }
    }

    /// The public key (P-256: its x-coordinate) of the private key `secret` on the suite's curve.
    pub fn public_key(self, secret: &[u8; 32]) -> Result<[u8; 32], &'static str> {
        match self {
            EdhocSuite::Suite0 => {
                let s = x25519_dalek::StaticSecret::from(*secret);
                Ok(x25519_dalek::PublicKey::from(&s).to_bytes())
            }
            EdhocSuite::Suite2 => {
                let s = p256::SecretKey::from_bytes(&(*secret).into())
                    .map_err(|_| "P-256 private key is 0 or not below the group order")?;
                let p = s.public_key().to_encoded_point(true);
                let mut x = [0u8; 32];
                x.copy_from_slice(p.x().ok_or("P-256 public key at infinity")?);
                Ok(x)
            }
        }
    }

    /// The shared secret of `secret` and the peer's public key `public` (P-256: its
    /// x-coordinate, either y gives the same x of the product). A peer key off P-256, or an
    /// X25519 key of small order (all-zero output), is refused: RFC 9528 §9.2.
    pub fn ecdh(self, secret: &[u8; 32], public: &[u8; 32]) -> Result<Zeroizing<[u8; 32]>, &'static str> {
        match self {
            EdhocSuite::Suite0 => {
                let s = x25519_dalek::StaticSecret::from(*secret);
                let shared = s.diffie_hellman(&x25519_dalek::PublicKey::from(*public));
                if !shared.was_contributory() {
                    return Err("X25519 public key of small order (all-zero shared secret)");
                }
                Ok(Zeroizing::new(shared.to_bytes()))
            }
            EdhocSuite::Suite2 => {
                let s = p256::SecretKey::from_bytes(&(*secret).into())
                    .map_err(|_| "P-256 private key is 0 or not below the group order")?;
                let point =
                    Option::<p256::AffinePoint>::from(p256::AffinePoint::decompress(&(*public).into(), 0u8.into()))
                        .ok_or("public key is not a point on P-256")?;
                let shared = p256::ecdh::diffie_hellman(s.to_nonzero_scalar(), point);
                let mut out = Zeroizing::new([0u8; 32]);
                out.copy_from_slice(shared.raw_secret_bytes());
                Ok(out)
            }
        }
    }
}

impl core::str::FromStr for EdhocSuite {
    type Err = alloc::string::String;
    /// "0" or "2" (also "suite0", "suite2"), as a command's option takes it.
    fn from_str(s: &str) -> Result<EdhocSuite, Self::Err> {
        match s.trim().to_ascii_lowercase().trim_start_matches("suite").trim_start_matches(['-', '_', ' ']) {
            "0" => Ok(EdhocSuite::Suite0),
            "2" => Ok(EdhocSuite::Suite2),
            _ => Err(alloc::format!("unknown EDHOC cipher suite {s:?} (expected 0 or 2)")),
        }
    }
}

/// Whether `x` is the x-coordinate of a point on P-256 (a credential's key is checked once,
/// when parsed).
pub fn p256_on_curve(x: &[u8; 32]) -> bool {
    bool::from(p256::AffinePoint::decompress(&(*x).into(), 0u8.into()).is_some())
}

impl fmt::Display for EdhocSuite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EdhocSuite::Suite0 => write!(f, "cipher suite 0 (AES-CCM-16-64-128, SHA-256, X25519, EdDSA)"),
            EdhocSuite::Suite2 => write!(f, "cipher suite 2 (AES-CCM-16-64-128, SHA-256, P-256, ES256)"),
        }
    }
}

/// The P-256 public key of `secret`, both coordinates (x, y), as a CCS holds it.
pub fn p256_public_xy(secret: &[u8; 32]) -> Result<([u8; 32], [u8; 32]), &'static str> {
    let s = p256::SecretKey::from_bytes(&(*secret).into())
        .map_err(|_| "P-256 private key is 0 or not below the group order")?;
    let p = s.public_key().to_encoded_point(false);
    let (Some(x), Some(y)) = (p.x(), p.y()) else {
        return Err("P-256 public key at infinity");
    };
    let (mut xa, mut ya) = ([0u8; 32], [0u8; 32]);
    xa.copy_from_slice(x);
    ya.copy_from_slice(y);
    Ok((xa, ya))
}

/// The Ed25519 public key of the signing key `secret`.
pub fn ed25519_public(secret: &[u8; 32]) -> [u8; 32] {
    ed25519_dalek::SigningKey::from_bytes(secret).verifying_key().to_bytes()
}

/// An Ed25519 signature (RFC 8032, deterministic) of `msg` with `secret`.
pub fn ed25519_sign(secret: &[u8; 32], msg: &[u8]) -> [u8; 64] {
    use ed25519_dalek::Signer;
    ed25519_dalek::SigningKey::from_bytes(secret).sign(msg).to_bytes()
}

/// Verify an Ed25519 signature (strictly: no small-order keys, canonical encodings).
pub fn ed25519_verify(public: &[u8; 32], msg: &[u8], sig: &[u8]) -> Result<(), &'static str> {
    let sig: [u8; 64] = sig.try_into().map_err(|_| "an Ed25519 signature has 64 bytes")?;
    let key = ed25519_dalek::VerifyingKey::from_bytes(public).map_err(|_| "the Ed25519 public key is invalid")?;
    key.verify_strict(msg, &ed25519_dalek::Signature::from_bytes(&sig))
        .map_err(|_| "the signature does not verify (altered, or another key)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suites_parse_by_number_or_name() {
        assert_eq!("0".parse::<EdhocSuite>(), Ok(EdhocSuite::Suite0));
        assert_eq!("suite2".parse::<EdhocSuite>(), Ok(EdhocSuite::Suite2));
        assert_eq!("Suite-0".parse::<EdhocSuite>(), Ok(EdhocSuite::Suite0));
        assert_eq!("3".parse::<EdhocSuite>(), Err("unknown EDHOC cipher suite \"3\" (expected 0 or 2)".into()));
    }

    #[test]
    fn p256_curve_check() {
        // RFC 9529 §3's G_X is on P-256; x = 1 is not (1 - 3 + b is no square mod p, as
        // tests/edhoc.rs notes from a computation in Python).
        let g_x: [u8; 32] = *b"\x8a\xf6\xf4\x30\xeb\xe1\x8d\x34\x18\x40\x17\xa9\xa1\x1b\xf5\x11\xc8\xdf\xf8\xf8\x34\x73\x0b\x96\xc1\xb7\xc8\xdb\xca\x2f\xc3\xb6";
        assert!(p256_on_curve(&g_x));
        let mut one = [0u8; 32];
        one[31] = 1;
        assert!(!p256_on_curve(&one));
    }
}
