//! The AEAD algorithms OSCORE can use here, named by their COSE identifiers (RFC 9053).
use alloc::format;
use alloc::vec::Vec;

use aes::Aes128;
use aes_gcm::aead::{AeadInOut, KeyInit};
use ccm::consts::{U13, U16, U8};

use crate::Error;

/// An AEAD algorithm with a COSE identifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// AES-CCM-16-64-128 (COSE 10): 13-byte nonce, 8-byte tag. OSCORE's mandatory algorithm.
    AesCcm16_64_128,
    /// AES-CCM-16-128-128 (COSE 30): 13-byte nonce, 16-byte tag.
    AesCcm16_128_128,
    /// ChaCha20/Poly1305 (COSE 24): 256-bit key, 12-byte nonce, 16-byte tag.
    ChaCha20Poly1305,
    /// AES-GCM with a 128-bit key, A128GCM (COSE 1): 12-byte nonce, 16-byte tag.
    A128Gcm,
}

/// Every algorithm supported, in the order the docs list them.
pub const ALL: [Algorithm; 4] =
    [Algorithm::AesCcm16_64_128, Algorithm::AesCcm16_128_128, Algorithm::ChaCha20Poly1305, Algorithm::A128Gcm];

impl Algorithm {
    /// The COSE algorithm identifier (IANA COSE Algorithms registry).
    pub fn cose_id(self) -> i64 {
        match self {
            Algorithm::AesCcm16_64_128 => 10,
            Algorithm::AesCcm16_128_128 => 30,
            Algorithm::ChaCha20Poly1305 => 24,
            Algorithm::A128Gcm => 1,
        }
    }

    /// The algorithm of a COSE identifier; others are refused with the identifier.
    pub fn from_cose_id(id: i64) -> Result<Algorithm, Error> {
        ALL.iter()
            .copied()
            .find(|a| a.cose_id() == id)
            .ok_or_else(|| Error::Unsupported(format!("COSE algorithm {id} (supported: 10, 30, 24, 1)")))
    }

    /// The algorithm a name denotes: the COSE name (`AES-CCM-16-64-128`, `ChaCha20/Poly1305`,
    /// `A128GCM`, ...) or a lower-case short form (`aes-ccm-16-64-128`, `chacha20-poly1305`,
    /// `aes-128-gcm`). Ascon-AEAD128 is refused with the reason.
    pub fn from_name(name: &str) -> Result<Algorithm, Error> {
        let n: Vec<u8> =
            name.bytes().filter(|b| !matches!(b, b'-' | b'_' | b'/' | b' ')).map(|b| b.to_ascii_lowercase()).collect();
        match n.as_slice() {
            b"aesccm1664128" | b"10" => Ok(Algorithm::AesCcm16_64_128),
            b"aesccm16128128" | b"30" => Ok(Algorithm::AesCcm16_128_128),
            b"chacha20poly1305" | b"24" => Ok(Algorithm::ChaCha20Poly1305),
            b"a128gcm" | b"aes128gcm" | b"1" => Ok(Algorithm::A128Gcm),
            _ if n.starts_with(b"ascon") => Err(Error::Unsupported(format!(
                "{name}: Ascon-AEAD128 has no identifier in the IANA COSE Algorithms registry \
                 (an individual Internet-Draft proposes one), and OSCORE names its AEAD by that \
                 identifier in the key derivation and in every message's AAD"
            ))),
            _ => Err(Error::Unsupported(format!(
                "AEAD {name} (supported: AES-CCM-16-64-128, AES-CCM-16-128-128, ChaCha20/Poly1305, A128GCM)"
            ))),
        }
    }

    /// The COSE name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::AesCcm16_64_128 => "AES-CCM-16-64-128",
            Algorithm::AesCcm16_128_128 => "AES-CCM-16-128-128",
            Algorithm::ChaCha20Poly1305 => "ChaCha20/Poly1305",
            Algorithm::A128Gcm => "A128GCM",
        }
    }

    /// Key length in bytes.
    pub fn key_len(self) -> usize {
        match self {
            Algorithm::ChaCha20Poly1305 => 32,
            _ => 16,
        }
    }

    /// Nonce length in bytes (also the Common IV's length, §3.2.1).
    pub fn nonce_len(self) -> usize {
        match self {
            Algorithm::AesCcm16_64_128 | Algorithm::AesCcm16_128_128 => 13,
            Algorithm::ChaCha20Poly1305 | Algorithm::A128Gcm => 12,
        }
    }

    /// Tag length in bytes.
    pub fn tag_len(self) -> usize {
        match self {
            Algorithm::AesCcm16_64_128 => 8,
            _ => 16,
        }
    }

    /// Encrypt `buf` in place and append the tag. The lengths of `key` and `nonce` are the
    /// algorithm's (checked by the caller: the context derives them).
    pub(crate) fn seal(self, key: &[u8], nonce: &[u8], aad: &[u8], buf: &mut Vec<u8>) -> Result<(), Error> {
        fn go<A: AeadInOut + KeyInit>(key: &[u8], nonce: &[u8], aad: &[u8], buf: &mut Vec<u8>) -> Result<(), Error> {
            let c = A::new_from_slice(key).map_err(|_| Error::Params(format!("key of {} bytes", key.len())))?;
            let n = aes_gcm::aead::Nonce::<A>::try_from(nonce)
                .map_err(|_| Error::Params(format!("nonce of {} bytes", nonce.len())))?;
            let tag = c
                .encrypt_inout_detached(&n, aad, buf.as_mut_slice().into())
                .map_err(|_| Error::Params(format!("plaintext of {} bytes too long for the AEAD", buf.len())))?;
            buf.extend_from_slice(&tag);
            Ok(())
        }
        match self {
            Algorithm::AesCcm16_64_128 => go::<ccm::Ccm<Aes128, U8, U13>>(key, nonce, aad, buf),
            Algorithm::AesCcm16_128_128 => go::<ccm::Ccm<Aes128, U16, U13>>(key, nonce, aad, buf),
            Algorithm::ChaCha20Poly1305 => go::<chacha20poly1305::ChaCha20Poly1305>(key, nonce, aad, buf),
            Algorithm::A128Gcm => go::<aes_gcm::Aes128Gcm>(key, nonce, aad, buf),
        }
    }

    /// Verify and decrypt `buf` (ciphertext followed by the tag) in place; on success `buf`
    /// holds the plaintext, on failure it is cleared (no unverified plaintext is left).
    pub(crate) fn open(self, key: &[u8], nonce: &[u8], aad: &[u8], buf: &mut Vec<u8>) -> Result<(), Error> {
        fn go<A: AeadInOut + KeyInit>(
            tag_len: usize,
            key: &[u8],
            nonce: &[u8],
            aad: &[u8],
            buf: &mut Vec<u8>,
        ) -> Result<(), Error> {
            let c = A::new_from_slice(key).map_err(|_| Error::Params(format!("key of {} bytes", key.len())))?;
            let n = aes_gcm::aead::Nonce::<A>::try_from(nonce)
                .map_err(|_| Error::Params(format!("nonce of {} bytes", nonce.len())))?;
            let Some(split) = buf.len().checked_sub(tag_len) else {
                buf.clear();
                return Err(Error::DecryptionFailed);
            };
            let tag = aes_gcm::aead::Tag::<A>::try_from(&buf[split..]).map_err(|_| Error::DecryptionFailed)?;
            buf.truncate(split);
            if c.decrypt_inout_detached(&n, aad, buf.as_mut_slice().into(), &tag).is_err() {
                buf.fill(0);
                buf.clear();
                return Err(Error::DecryptionFailed);
            }
            Ok(())
        }
        let t = self.tag_len();
        match self {
            Algorithm::AesCcm16_64_128 => go::<ccm::Ccm<Aes128, U8, U13>>(t, key, nonce, aad, buf),
            Algorithm::AesCcm16_128_128 => go::<ccm::Ccm<Aes128, U16, U13>>(t, key, nonce, aad, buf),
            Algorithm::ChaCha20Poly1305 => go::<chacha20poly1305::ChaCha20Poly1305>(t, key, nonce, aad, buf),
            Algorithm::A128Gcm => go::<aes_gcm::Aes128Gcm>(t, key, nonce, aad, buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_identifiers_round_trip() {
        for a in ALL {
            assert_eq!(Algorithm::from_cose_id(a.cose_id()), Ok(a));
            assert_eq!(Algorithm::from_name(a.name()), Ok(a));
        }
        assert_eq!(Algorithm::from_name("aes-128-gcm"), Ok(Algorithm::A128Gcm));
        assert!(Algorithm::from_cose_id(3).is_err(), "A256GCM is not offered");
    }

    #[test]
    fn ascon_is_refused_with_the_registry_reason() {
        let e = Algorithm::from_name("ascon-aead128").unwrap_err().to_string();
        assert!(e.contains("IANA COSE Algorithms registry"), "{e}");
    }

    #[test]
    fn a_short_buffer_fails_to_open_and_leaves_nothing() {
        let mut b = alloc::vec![1u8; 5];
        let r = Algorithm::AesCcm16_64_128.open(&[0; 16], &[0; 13], b"", &mut b);
        assert_eq!(r, Err(Error::DecryptionFailed));
        assert!(b.is_empty());
    }
}
