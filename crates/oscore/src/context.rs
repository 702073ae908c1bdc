//! The security context (RFC 8613 §3): derivation of the Sender Key, Recipient Key and Common
//! IV from the Master Secret with HKDF-SHA256 (§3.2.1), and the AEAD nonce (§5.2).
use alloc::format;
use alloc::vec::Vec;

use hkdf::Hkdf;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::{cbor, Algorithm, Error};

/// The input parameters of a security context (§3.2): what two endpoints share beforehand.
#[derive(Clone)]
pub struct SecurityParams<'a> {
    /// The AEAD algorithm.
    pub alg: Algorithm,
    /// The Master Secret (at least 16 bytes here: it is the only secret the keys come from).
    pub master_secret: &'a [u8],
    /// The Master Salt (empty: the default, §3.2).
    pub master_salt: &'a [u8],
    /// The ID Context, if any.
    pub id_context: Option<&'a [u8]>,
    /// This endpoint's Sender ID.
    pub sender_id: &'a [u8],
    /// This endpoint's Recipient ID (the peer's Sender ID).
    pub recipient_id: &'a [u8],
}

/// A derived security context: the Common Context, one Sender Context and one Recipient
/// Context (§3.1) less their mutable state (the sequence number and the replay window are
/// kept by the caller: [`crate::SequenceSource`], [`crate::ReplayWindow`]). Keys are wiped
/// when it is dropped.
pub struct SecurityContext {
    alg: Algorithm,
    id_context: Option<Vec<u8>>,
    sender_id: Vec<u8>,
    recipient_id: Vec<u8>,
    sender_key: Zeroizing<Vec<u8>>,
    recipient_key: Zeroizing<Vec<u8>>,
    common_iv: Zeroizing<Vec<u8>>,
    /// Whether requests carry the ID Context as 'kid context' (§5.1; the application decides).
    pub send_kid_context: bool,
}

/// Master Secrets longer than this are refused (a bound on what is read and hashed).
pub const MAX_MASTER_SECRET: usize = 256;
/// Master Salts and ID Contexts longer than this are refused ('kid context' has a one-byte
/// length in the OSCORE option, §6.1).
pub const MAX_CONTEXT_ID: usize = 255;

/// The CBOR `info` of the key derivation (§3.2.1):
/// `[ id: bstr, id_context: bstr / nil, alg_aead: int, type: tstr, L: uint ]`.
pub fn info(id: &[u8], id_context: Option<&[u8]>, alg: Algorithm, kind: &str, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + id.len() + id_context.map_or(0, <[u8]>::len));
    cbor::array(&mut out, 5);
    cbor::bstr(&mut out, id);
    match id_context {
        Some(c) => cbor::bstr(&mut out, c),
        None => cbor::null(&mut out),
    }
    cbor::int(&mut out, alg.cose_id());
    cbor::tstr(&mut out, kind);
    cbor::head(&mut out, 0, len as u64);
    out
}

impl SecurityContext {
    /// Derive a context from its parameters; invalid parameters are refused, each named.
    pub fn derive(p: &SecurityParams<'_>) -> Result<SecurityContext, Error> {
        let max_id = p.alg.nonce_len() - 6;
        if p.master_secret.len() < 16 || p.master_secret.len() > MAX_MASTER_SECRET {
            return Err(Error::Params(format!(
                "Master Secret of {} bytes (16 to {MAX_MASTER_SECRET} accepted)",
                p.master_secret.len()
            )));
        }
        if p.master_salt.len() > MAX_CONTEXT_ID {
            return Err(Error::Params(format!("Master Salt longer than {MAX_CONTEXT_ID} bytes")));
        }
        if p.id_context.is_some_and(|c| c.len() > MAX_CONTEXT_ID) {
            return Err(Error::Params(format!("ID Context longer than {MAX_CONTEXT_ID} bytes")));
        }
        for (what, id) in [("Sender ID", p.sender_id), ("Recipient ID", p.recipient_id)] {
            // §3.3: an ID longer than nonce length - 6 does not fit in the nonce.
            if id.len() > max_id {
                return Err(Error::Params(format!(
                    "{what} of {} bytes; {} allows at most {max_id}",
                    id.len(),
                    p.alg.name()
                )));
            }
        }
        if p.sender_id == p.recipient_id {
            // §3.3: the same ID both ways would make the two directions share (key, nonce) pairs
            // under a symmetric deployment.
            return Err(Error::Params("Sender ID and Recipient ID are equal".into()));
        }
        let hk = Hkdf::<Sha256>::new(Some(p.master_salt), p.master_secret);
        let expand = |id: &[u8], kind: &str, len: usize| -> Result<Zeroizing<Vec<u8>>, Error> {
            let mut okm = Zeroizing::new(alloc::vec![0u8; len]);
            hk.expand(&info(id, p.id_context, p.alg, kind, len), &mut okm)
                .map_err(|_| Error::Params(format!("HKDF output of {len} bytes")))?;
            Ok(okm)
        };
        let kl = p.alg.key_len();
        Ok(SecurityContext {
            alg: p.alg,
            id_context: p.id_context.map(<[u8]>::to_vec),
            sender_id: p.sender_id.to_vec(),
            recipient_id: p.recipient_id.to_vec(),
            sender_key: expand(p.sender_id, "Key", kl)?,
            recipient_key: expand(p.recipient_id, "Key", kl)?,
            common_iv: expand(b"", "IV", p.alg.nonce_len())?,
            send_kid_context: false,
        })
    }

    /// The AEAD algorithm.
    pub fn alg(&self) -> Algorithm {
        self.alg
    }
    /// The ID Context.
    pub fn id_context(&self) -> Option<&[u8]> {
        self.id_context.as_deref()
    }
    /// This endpoint's Sender ID.
    pub fn sender_id(&self) -> &[u8] {
        &self.sender_id
    }
    /// This endpoint's Recipient ID.
    pub fn recipient_id(&self) -> &[u8] {
        &self.recipient_id
    }
    /// The Sender Key (for test vectors; never print it).
    pub fn sender_key(&self) -> &[u8] {
        &self.sender_key
    }
    /// The Recipient Key (for test vectors; never print it).
    pub fn recipient_key(&self) -> &[u8] {
        &self.recipient_key
    }
    /// The Common IV.
    pub fn common_iv(&self) -> &[u8] {
        &self.common_iv
    }

    /// The AEAD nonce of a Partial IV `piv` (its bytes, at most 5) sent by the endpoint whose
    /// Sender ID is `id_piv` (§5.2): `[len(ID_PIV) | ID_PIV left-padded to nonce length - 6 |
    /// PIV left-padded to 5]` XOR the Common IV.
    pub fn nonce(&self, id_piv: &[u8], piv: &[u8]) -> Result<Vec<u8>, Error> {
        let n = self.alg.nonce_len();
        if id_piv.len() > n - 6 || piv.len() > 5 {
            return Err(Error::Malformed(format!(
                "a nonce cannot hold an ID of {} bytes and a Partial IV of {} bytes",
                id_piv.len(),
                piv.len()
            )));
        }
        let mut out = alloc::vec![0u8; n];
        out[0] = id_piv.len() as u8;
        out[n - 5 - id_piv.len()..n - 5].copy_from_slice(id_piv);
        out[n - piv.len()..].copy_from_slice(piv);
        for (o, c) in out.iter_mut().zip(self.common_iv.iter()) {
            *o ^= c;
        }
        Ok(out)
    }

    /// A fingerprint of the Sender Context (algorithm, Sender ID, ID Context, Sender Key):
    /// 32 hex digits of a SHA-256 over them. It ties a persisted sequence number state to one
    /// sender key without revealing it.
    pub fn sender_fingerprint(&self) -> alloc::string::String {
        let mut h = Sha256::new();
        h.update(b"lwcbench-oscore sender v1\0");
        h.update(self.alg.cose_id().to_be_bytes());
        for part in [&self.sender_id[..], self.id_context.as_deref().unwrap_or(b"\xff-none"), &self.sender_key[..]] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part);
        }
        let d = h.finalize();
        d[..16].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The Partial IV bytes of a sequence number: big-endian, no leading zero bytes, 0 as one zero
/// byte (§6.1).
pub fn piv_bytes(seq: u64) -> Vec<u8> {
    let b = seq.to_be_bytes();
    let skip = (seq.leading_zeros() / 8).min(7) as usize;
    b[skip..].to_vec()
}

/// The sequence number of Partial IV bytes; a PIV longer than 5 bytes or with a leading zero
/// byte (other than the one byte of 0) is malformed.
pub fn piv_value(piv: &[u8]) -> Result<u64, Error> {
    if piv.is_empty() || piv.len() > 5 {
        return Err(Error::Malformed(format!("Partial IV of {} bytes (1 to 5)", piv.len())));
    }
    if piv.len() > 1 && piv[0] == 0 {
        return Err(Error::Malformed("Partial IV with a leading zero byte".into()));
    }
    Ok(piv.iter().fold(0u64, |a, b| a << 8 | u64::from(*b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piv_encoding_is_minimal() {
        assert_eq!(piv_bytes(0), [0]);
        assert_eq!(piv_bytes(20), [0x14]);
        assert_eq!(piv_bytes(256), [1, 0]);
        assert_eq!(piv_bytes(crate::MAX_SEQ), [0xff; 5]);
        assert_eq!(piv_value(&[1, 0]), Ok(256));
        assert!(piv_value(&[0, 1]).is_err());
        assert!(piv_value(&[1; 6]).is_err());
        assert!(piv_value(&[]).is_err());
    }

    #[test]
    fn bad_parameters_are_refused_by_name() {
        let ok = SecurityParams {
            alg: Algorithm::A128Gcm,
            master_secret: &[7; 16],
            master_salt: b"",
            id_context: None,
            sender_id: b"",
            recipient_id: b"\x01",
        };
        assert!(SecurityContext::derive(&ok).is_ok());
        let e = |p: SecurityParams<'_>| SecurityContext::derive(&p).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e(SecurityParams { sender_id: &[1; 7], ..ok.clone() }).contains("Sender ID of 7 bytes"));
        assert!(e(SecurityParams { master_secret: &[1; 15], ..ok.clone() }).contains("Master Secret"));
        assert!(e(SecurityParams { recipient_id: b"", ..ok.clone() }).contains("equal"));
        assert!(e(SecurityParams { id_context: Some(&[0; 256]), ..ok.clone() }).contains("ID Context"));
        let ccm = SecurityParams { alg: Algorithm::AesCcm16_64_128, sender_id: &[1; 7], ..ok };
        assert!(SecurityContext::derive(&ccm).is_ok(), "a 13-byte nonce holds a 7-byte ID");
    }
}
