//! Credentials (RFC 9528 §3.5.2): CWT Claims Sets by 'kid' and X.509 certificates by 'x5t',
//! parsed with bounds; and this endpoint's identity, its private key checked against its
//! credential.
use alloc::format;
use alloc::vec::Vec;
use core::fmt;

use zeroize::Zeroizing;

use super::cbor::{self, Reader};
use super::{messages, refuse, schedule, suites, EdhocSuite, Error, Method};

/// The kind of public key a credential holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// A P-256 key (static DH in suite 2).
    P256,
    /// An X25519 key (static DH in suite 0).
    X25519,
    /// An Ed25519 key (signatures in suite 0).
    Ed25519,
}

pub(crate) fn kind_for(suite: EdhocSuite, method: Method) -> Result<KeyKind, Error> {
    match (suite, method) {
        (EdhocSuite::Suite0, Method::Signatures) => Ok(KeyKind::Ed25519),
        (EdhocSuite::Suite0, Method::StaticDh) => Ok(KeyKind::X25519),
        (EdhocSuite::Suite2, Method::StaticDh) => Ok(KeyKind::P256),
        (EdhocSuite::Suite2, Method::Signatures) => {
            Err(Error::new("credential", "method 0 (signatures) is offered with cipher suite 0 (Ed25519) only"))
        }
    }
}

/// A credential (RFC 9528 §3.5.2): CRED_x as it enters the transcript, ID_CRED_x (its full
/// form) and the public key it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credential {
    pub(super) id_cred: Vec<u8>,
    pub(super) cred: Vec<u8>,
    pub(super) key: [u8; 32],
    pub(super) kind: KeyKind,
}

impl Credential {
    /// A CWT Claims Set (CCS) holding a COSE_Key with a 'kid' (sent by reference as
    /// `{4: kid}`) and a P-256 (crv 1, its x-coordinate), X25519 (crv 4) or Ed25519 (crv 6)
    /// key. CRED_x is the CCS as given.
    pub fn ccs_kid(ccs: &[u8]) -> Result<Credential, Error> {
        let bad = |r: &'static str| Error::new("credential", format!("not a CCS with a COSE_Key and a kid: {r}"));
        let mut r = Reader::new(ccs);
        let mut found = None;
        for _ in 0..r.container(5).map_err(bad)? {
            if r.int().map_err(bad)? == 8 {
                for _ in 0..r.container(5).map_err(bad)? {
                    if r.int().map_err(bad)? == 1 {
                        found = Some(cose_key(&mut r).map_err(bad)?);
                    } else {
                        r.skip(cbor::MAX_DEPTH).map_err(bad)?;
                    }
                }
            } else {
                r.skip(cbor::MAX_DEPTH).map_err(bad)?;
            }
        }
        if !r.is_empty() {
            return Err(bad("bytes after the CCS"));
        }
        let (kid, kind, key) = found.ok_or_else(|| bad("no 'cnf' claim with a COSE_Key"))?;
        if kind == KeyKind::P256 && !suites::p256_on_curve(&key) {
            return Err(bad("the public key is not a point on P-256"));
        }
        Ok(Credential { id_cred: cbor::id_cred_of_kid(&kid), cred: ccs.to_vec(), key, kind })
    }

    /// The CCS of RFC 9529 §3's shape for the public key of `private_key` (derived here):
    /// `{2: subject, 8: {1: COSE_Key}}` with the COSE_Key `{1: 2, 2: kid, -1: 1, -2: x, -3: y}`
    /// for P-256 (EC2), `{1: 1, 2: kid, -1: 4 or 6, -2: x}` for X25519 or Ed25519 (OKP). The
    /// kid has 1 to 7 bytes (an OSCORE ID's length, so it travels compactly); the subject at
    /// most 64. The private key is not kept.
    pub fn ccs_for_key(kind: KeyKind, subject: &str, kid: &[u8], private_key: &[u8]) -> Result<Credential, Error> {
        let e = |r: String| Error::new("credential", r);
        if kid.is_empty() || kid.len() > cbor::MAX_ID {
            return Err(e(format!("a kid of {} bytes (1 to {})", kid.len(), cbor::MAX_ID)));
        }
        if subject.len() > 64 {
            return Err(e(format!("a subject of {} bytes (at most 64)", subject.len())));
        }
        let secret = secret_of(private_key)?;
        let mut c = Vec::with_capacity(120 + subject.len());
        c.extend_from_slice(&[0xa2, 0x02]);
        crate::cbor::tstr(&mut c, subject);
        c.extend_from_slice(&[0x08, 0xa1, 0x01]);
        match kind {
            KeyKind::P256 => {
                let (x, y) = suites::p256_public_xy(&secret).map_err(|r| e(r.into()))?;
                c.extend_from_slice(&[0xa5, 0x01, 0x02, 0x02]);
                crate::cbor::bstr(&mut c, kid);
                c.extend_from_slice(&[0x20, 0x01, 0x21]);
                crate::cbor::bstr(&mut c, &x);
                c.push(0x22);
                crate::cbor::bstr(&mut c, &y);
            }
            KeyKind::X25519 | KeyKind::Ed25519 => {
                let (crv, x) = if kind == KeyKind::X25519 {
                    (0x04, EdhocSuite::Suite0.public_key(&secret).map_err(|r| e(r.into()))?)
                } else {
                    (0x06, suites::ed25519_public(&secret))
                };
                c.extend_from_slice(&[0xa4, 0x01, 0x01, 0x02]);
                crate::cbor::bstr(&mut c, kid);
                c.extend_from_slice(&[0x20, crv, 0x21]);
                crate::cbor::bstr(&mut c, &x);
            }
        }
        Credential::ccs_kid(&c)
    }

    /// An X.509 certificate (DER) holding an Ed25519 key, sent by reference as
    /// `{34: [-15, SHA-256/64 of the certificate]}` ('x5t', RFC 9360); CRED_x is the
    /// certificate as a CBOR byte string.
    pub fn x509_x5t(der: &[u8]) -> Result<Credential, Error> {
        // The SubjectPublicKeyInfo of an Ed25519 key (RFC 8410): SEQUENCE { SEQUENCE { OID
        // 1.3.101.112 }, BIT STRING (0 unused bits) of 32 bytes }.
        const SPKI: [u8; 12] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00];
        if der.len() > messages::MAX_MESSAGE {
            return Err(Error::new("credential", "certificate longer than 1024 bytes"));
        }
        let at = der
            .windows(SPKI.len())
            .position(|w| w == SPKI)
            .ok_or_else(|| Error::new("credential", "the certificate holds no Ed25519 public key"))?;
        let key: [u8; 32] = der
            .get(at + SPKI.len()..at + SPKI.len() + 32)
            .and_then(|k| k.try_into().ok())
            .ok_or_else(|| Error::new("credential", "the certificate's Ed25519 key is truncated"))?;
        let digest = schedule::hash(&[der]);
        let mut id_cred = alloc::vec![0xa1, 0x18, 0x22, 0x82, 0x2e];
        crate::cbor::bstr(&mut id_cred, &digest[..8]);
        let mut cred = Vec::with_capacity(der.len() + 3);
        crate::cbor::bstr(&mut cred, der);
        Ok(Credential { id_cred, cred, key, kind: KeyKind::Ed25519 })
    }

    /// ID_CRED_x in its full form (a COSE header map).
    pub fn id_cred(&self) -> &[u8] {
        &self.id_cred
    }
    /// The kid this credential is sent by (1 to 7 bytes); None for one sent by 'x5t'.
    pub fn kid(&self) -> Option<&[u8]> {
        kid_of(&self.id_cred)
    }
    /// CRED_x as the transcript hashes and MACs take it.
    pub fn cred(&self) -> &[u8] {
        &self.cred
    }
    /// The public key (P-256: its x-coordinate).
    pub fn public_key(&self) -> &[u8; 32] {
        &self.key
    }
    /// The kind of key.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }
}

/// A COSE_Key map: its kid, kind and 32-byte public key.
fn cose_key(r: &mut Reader<'_>) -> Result<(Vec<u8>, KeyKind, [u8; 32]), cbor::Refusal> {
    let (mut kid, mut crv, mut x) = (None, None, None);
    for _ in 0..r.container(5)? {
        match r.int()? {
            2 => kid = Some(r.bytes()?.to_vec()),
            -1 => crv = Some(r.int()?),
            -2 => x = Some(r.bytes()?),
            _ => r.skip(cbor::MAX_DEPTH)?,
        }
    }
    let kind = match crv.ok_or("the COSE_Key has no crv")? {
        1 => KeyKind::P256,
        4 => KeyKind::X25519,
        6 => KeyKind::Ed25519,
        _ => return Err("the COSE_Key's curve is not P-256, X25519 or Ed25519"),
    };
    let x: [u8; 32] = x.ok_or("the COSE_Key has no x")?.try_into().map_err(|_| "the COSE_Key's x is not 32 bytes")?;
    let kid = kid.ok_or("the COSE_Key has no kid")?;
    if kid.len() > cbor::MAX_ID {
        return Err("kid longer than 7 bytes");
    }
    Ok((kid, kind, x))
}

/// This endpoint's authentication: its private key (static DH or Ed25519) and its credential.
/// The key is wiped when dropped and never printed.
#[derive(Clone)]
pub struct Identity {
    pub(super) secret: Zeroizing<[u8; 32]>,
    pub(super) cred: Credential,
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity").field("id_cred", &self.cred.id_cred).finish_non_exhaustive()
    }
}

/// A 32-byte private key, in a copy wiped on drop.
fn secret_of(private_key: &[u8]) -> Result<Zeroizing<[u8; 32]>, Error> {
    let secret: [u8; 32] = private_key
        .try_into()
        .map_err(|_| Error::new("credential", format!("private key of {} bytes (32 expected)", private_key.len())))?;
    Ok(Zeroizing::new(secret))
}

impl Identity {
    /// An identity from a 32-byte private key and the credential holding its public key.
    pub fn new(private_key: &[u8], cred: Credential) -> Result<Identity, Error> {
        let secret = secret_of(private_key)?;
        let public = match cred.kind {
            KeyKind::P256 => EdhocSuite::Suite2.public_key(&secret).map_err(refuse("credential"))?,
            KeyKind::X25519 => EdhocSuite::Suite0.public_key(&secret).map_err(refuse("credential"))?,
            KeyKind::Ed25519 => suites::ed25519_public(&secret),
        };
        if public != cred.key {
            return Err(Error::new("credential", "the private key does not belong to the credential's public key"));
        }
        Ok(Identity { secret, cred })
    }
    /// An identity from a 32-byte private key of `kind` and the CCS [`Credential::ccs_for_key`]
    /// builds for it (its bytes, [`Credential::cred`], are what the peer is given).
    pub fn with_ccs(kind: KeyKind, subject: &str, kid: &[u8], private_key: &[u8]) -> Result<Identity, Error> {
        Identity::new(private_key, Credential::ccs_for_key(kind, subject, kid, private_key)?)
    }

    /// The credential.
    pub fn credential(&self) -> &Credential {
        &self.cred
    }
}

/// The kid of a full ID_CRED_x `{4: kid}` of 1 to 7 bytes; None for any other map.
pub(super) fn kid_of(id_cred: &[u8]) -> Option<&[u8]> {
    match id_cred {
        [0xa1, 0x04, h @ 0x41..=0x47, kid @ ..] if usize::from(h - 0x40) == kid.len() => Some(kid),
        _ => None,
    }
}
