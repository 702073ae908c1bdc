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

impl fmt::Display for EdhocSuite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EdhocSuite::Suite0 => write!(f, "cipher suite 0 (AES-CCM-16-64-128, SHA-256, X25519, EdDSA)"),
            EdhocSuite::Suite2 => write!(f, "cipher suite 2 (AES-CCM-16-64-128, SHA-256, P-256, ES256)"),
        }
    }
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
