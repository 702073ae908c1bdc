//! EDHOC (RFC 9528) key establishment for OSCORE (feature `edhoc`), through the `lakers` crate.
//!
//! What is supported: method 3 (static DH keys on both sides), cipher suite 2 (P-256,
//! AES-CCM-16-64-128, SHA-256), credentials as CWT Claims Sets (CCS) sent by reference with a
//! 'kid' (RFC 9528 §3.5.3), compact connection identifiers. The OSCORE security context is the
//! one of RFC 9528 Appendix A.1: Master Secret = EDHOC_Exporter(0, h'', 16), Master Salt =
//! EDHOC_Exporter(1, h'', 8), the Initiator's Sender ID = C_R and Recipient ID = C_I (the
//! Responder's the other way round), AES-CCM-16-64-128 as suite 2's application AEAD.
//! [`Established::key_update`] is EDHOC-KeyUpdate (Appendix H); [`Established::needs_key_update`]
//! says when a sender sequence number limit calls for it.
//!
//! Cipher suite 0 (X25519, EdDSA) is not offered through lakers, which implements suite 2
//! only: [`own`] is this crate's own EDHOC, with suites 0 and 2.
//!
//! The CoAP transport of Appendix A.2 ([`coap_message_1`], [`coap_message_3`],
//! [`CoapEdhocRequest`]): message_1 is POSTed to `/.well-known/edhoc` behind the CBOR `true`,
//! message_3 behind C_R. A refused message is answered with an EDHOC error message (§6):
//! [`error_message`] (ERR_CODE 1, a text), [`wrong_suite_message`] (ERR_CODE 2, §6.3: the
//! suites the Responder supports), both read by [`ErrorMessage::parse`]. RFC 9529 has no trace
//! of an error message; the tests check the bytes against a hand encoding of §6's CDDL.
//!
//! No key leaves this module except into a [`SecurityContext`]; nothing here prints one.
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use lakers::{
    credential_check_or_fetch, ConnId, CredentialTransfer, EDHOCError, EDHOCMethod, EDHOCSuite, EdhocInitiator,
    EdhocInitiatorDone, EdhocInitiatorWaitM2, EdhocInitiatorWaitM4, EdhocMessageBuffer, EdhocResponder,
    EdhocResponderDone, EdhocResponderWaitM3,
};
use p256::elliptic_curve::point::DecompressPoint;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use zeroize::Zeroizing;

use crate::{Algorithm, SecurityContext, SecurityParams};

pub use lakers::Credential;

pub mod own;

/// The cryptography lakers runs on: RustCrypto with the operating system's random numbers
/// (ephemeral keys, connection identifiers).
type Crypto = lakers_crypto_rustcrypto::Crypto<rand_core::OsRng>;

fn crypto() -> Crypto {
    lakers_crypto_rustcrypto::Crypto::new(rand_core::OsRng)
}

/// The URI path an EDHOC message travels to over CoAP (RFC 9528 Appendix A.2).
pub const WELL_KNOWN_EDHOC: [&str; 2] = [".well-known", "edhoc"];
/// The EDHOC method: static DH keys on both sides.
pub const METHOD: u8 = 3;
/// The cipher suite: P-256, AES-CCM-16-64-128, SHA-256.
pub const SUITE: u8 = 2;
/// The OSCORE Master Secret length (the key length of suite 2's application AEAD).
pub const MASTER_SECRET_LEN: usize = 16;
/// The OSCORE Master Salt length (RFC 9528 Appendix A.1).
pub const MASTER_SALT_LEN: usize = 8;
/// The longest EDHOC message accepted (lakers' buffer; longer ones are refused, not cut).
pub const MAX_MESSAGE: usize = lakers::MAX_MESSAGE_SIZE_LEN;

/// Why an EDHOC step is refused; each names the step and the reason.
#[derive(Debug, PartialEq)]
pub enum Error {
    /// A credential or a private key is unusable (named).
    Credential(String),
    /// An EDHOC message was refused by the protocol (the step and lakers' reason: a MAC that
    /// does not verify, a message that does not parse, an unexpected credential...).
    Protocol {
        /// The step: "message_1", "message_2", "message_3" or "message_4".
        step: &'static str,
        /// lakers' error.
        reason: EDHOCError,
    },
    /// A CoAP payload is not an EDHOC message of Appendix A.2 (named).
    Transport(String),
    /// The exported OSCORE context is refused (equal connection identifiers, ...).
    Oscore(crate::Error),
    /// The peer's connection identifier cannot be an OSCORE ID (the step and why): refused at
    /// the message that carries it, not after message_3.
    Id(String),
}

impl Error {
    /// The CoAP response code (class * 32 + detail) a server answers an EDHOC request refused
    /// with this error: 4.00 Bad Request for a malformed or unverifiable message (RFC 9528
    /// Appendix A.2 carries EDHOC errors in 4.00 responses), 5.00 for the server's own problems.
    pub fn coap_code(&self) -> u8 {
        match self {
            Error::Protocol { .. } | Error::Transport(_) | Error::Id(_) => 0x80,
            Error::Credential(_) | Error::Oscore(_) => 0xa0,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Credential(m) => write!(f, "EDHOC credential: {m}"),
            Error::Protocol { step, reason } => {
                let why = match reason {
                    EDHOCError::MacVerificationFailed => "a MAC or AEAD tag does not verify (altered, or another key)",
                    EDHOCError::ParsingError => "it does not parse (altered or malformed)",
                    EDHOCError::UnexpectedCredential => "the peer presented another credential than the one expected",
                    EDHOCError::UnsupportedMethod => "unsupported method",
                    EDHOCError::UnsupportedCipherSuite => "unsupported cipher suite",
                    _ => "refused",
                };
                write!(f, "EDHOC {step} refused: {why} ({reason:?})")
            }
            Error::Transport(m) => write!(f, "EDHOC over CoAP: {m}"),
            Error::Oscore(e) => write!(f, "OSCORE context from EDHOC: {e}"),
            Error::Id(m) => write!(f, "EDHOC {m}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

fn proto(step: &'static str) -> impl Fn(EDHOCError) -> Error {
    move |reason| Error::Protocol { step, reason }
}

/// Run a lakers step on the peer's bytes. lakers 0.8 still has paths that panic on hostile
/// input (an ECDH point off the curve, lakers issue #93, is checked before; an overflowing
/// CBOR length in its item skipper is not), so a panic is caught and the message refused as
/// unparseable: the state it consumed is gone, the handshake ends there.
fn guarded<T>(step: &'static str, f: impl FnOnce() -> Result<T, EDHOCError>) -> Result<T, Error> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(proto(step)),
        Err(_) => Err(Error::Protocol { step, reason: EDHOCError::ParsingError }),
    }
}

/// The longest OSCORE ID with AES-CCM-16-64-128, the one AEAD exported here: its 13-byte nonce
/// minus 6 (RFC 8613 §3.3). C_I and C_R become the Recipient and Sender IDs (RFC 9528 A.1).
const MAX_OSCORE_ID: usize = 7;

/// The peer's connection identifier `what` (C_I or C_R) from `step`, if it can be an OSCORE ID.
fn oscore_id(step: &str, what: &str, id: ConnId) -> Result<ConnId, Error> {
    let n = id.as_slice().len();
    if n > MAX_OSCORE_ID {
        return Err(Error::Id(format!(
            "{step} refused: {what} of {n} bytes; an OSCORE ID holds at most {MAX_OSCORE_ID}"
        )));
    }
    Ok(id)
}

fn buffer(step: &'static str, bytes: &[u8]) -> Result<EdhocMessageBuffer, Error> {
    EdhocMessageBuffer::new_from_slice(bytes)
        .map_err(|_| Error::Transport(format!("{step} of {} bytes (at most {MAX_MESSAGE} accepted)", bytes.len())))
}

/// Whether `x` is the x-coordinate of a point on P-256. lakers' ECDH panics on one that is
/// not, so every public key it will use is checked here first.
fn on_curve(x: &[u8]) -> bool {
    let Ok(x) = <[u8; 32]>::try_from(x) else { return false };
    bool::from(p256::AffinePoint::decompress(&x.into(), 1u8.into()).is_some())
}

/// Parse a credential: a CWT Claims Set (CCS) with a P-256 COSE_Key and a 'kid'.
pub fn credential(ccs: &[u8]) -> Result<Credential, Error> {
    let c = Credential::parse_ccs(ccs)
        .map_err(|e| Error::Credential(format!("not a CCS with a P-256 COSE_Key ({e:?})")))?;
    c.by_kid().map_err(|_| Error::Credential("the CCS's COSE_Key has no 'kid' to send it by reference".into()))?;
    if !c.public_key().is_some_and(|x| on_curve(&x)) {
        return Err(Error::Credential("the CCS's public key is not a point on P-256".into()));
    }
    Ok(c)
}

/// The ephemeral public key (the x-coordinate: G_X, G_Y) in a message_1 or message_2, or a
/// parsing error; a key not on P-256 is refused as a parsing error too (RFC 9528 §9.2 asks
/// for the check), before lakers computes with it.
fn check_ephemeral(step: &'static str, m: &[u8]) -> Result<(), Error> {
    let refuse = || Error::Protocol { step, reason: EDHOCError::ParsingError };
    // A small CBOR unsigned or negative integer (one byte, or two with 0x18/0x38).
    let int_len = |b: u8| match b {
        0x00..=0x17 | 0x20..=0x37 => Some(1),
        0x18 | 0x38 => Some(2),
        _ => None,
    };
    let g = if step == "message_1" {
        // METHOD, SUITES_I (an integer or an array of integers), G_X as a 32-byte bstr.
        let mut at = int_len(*m.first().ok_or_else(refuse)?).ok_or_else(refuse)?;
        let b = *m.get(at).ok_or_else(refuse)?;
        if (0x81..=0x8a).contains(&b) {
            at += 1;
            for _ in 0..b & 0x0f {
                at += int_len(*m.get(at).ok_or_else(refuse)?).ok_or_else(refuse)?;
            }
        } else {
            at += int_len(b).ok_or_else(refuse)?;
        }
        match m.get(at..at + 2) {
            Some([0x58, 0x20]) => m.get(at + 2..at + 34),
            _ => None,
        }
    } else {
        // G_Y_CIPHERTEXT_2: a bstr whose first 32 bytes are G_Y.
        match m {
            [0x58, n, rest @ ..] if usize::from(*n) > 32 => rest.get(..32),
            [0x59, _, _, rest @ ..] => rest.get(..32),
            _ => None,
        }
    };
    match g {
        Some(x) if on_curve(x) => Ok(()),
        _ => Err(refuse()),
    }
}

/// This endpoint's authentication: its static P-256 private key and its credential (CCS).
/// The key is wiped when dropped and never printed.
pub struct Identity {
    key: Zeroizing<[u8; 32]>,
    cred: Credential,
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity").field("key", &"<redacted>").finish_non_exhaustive()
    }
}

impl Identity {
    /// An identity from a 32-byte P-256 private key and the CCS holding its public key.
    pub fn new(private_key: &[u8], ccs: &[u8]) -> Result<Identity, Error> {
        let key: [u8; 32] = private_key.try_into().map_err(|_| {
            Error::Credential(format!("P-256 private key of {} bytes (32 expected)", private_key.len()))
        })?;
        let key = Zeroizing::new(key);
        // lakers panics on a scalar that is 0 or not below the group order.
        let secret = p256::SecretKey::from_bytes(&(*key).into())
            .map_err(|_| Error::Credential("the P-256 private key is 0 or not below the group order".into()))?;
        let cred = credential(ccs)?;
        let public = secret.public_key().to_encoded_point(true);
        if public.x().map(|x| x.as_slice()) != cred.public_key().as_ref().map(|x| x.as_slice()) {
            return Err(Error::Credential("the private key does not belong to the CCS's public key".into()));
        }
        Ok(Identity { key, cred })
    }
}

/// Which side of the handshake an endpoint was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sent message_1 (the CoAP client in Appendix A.2's forward flow).
    Initiator,
    /// Answered with message_2.
    Responder,
}

enum Done {
    I(EdhocInitiatorDone<Crypto>),
    R(EdhocResponderDone<Crypto>),
}

/// A completed EDHOC session: exports OSCORE security contexts, and renews them with
/// EDHOC-KeyUpdate.
pub struct Established {
    done: Done,
    role: Role,
    c_i: ConnId,
    c_r: ConnId,
}

impl fmt::Debug for Established {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Established")
            .field("role", &self.role)
            .field("c_i", &self.c_i.as_slice())
            .field("c_r", &self.c_r.as_slice())
            .finish_non_exhaustive()
    }
}

impl Established {
    /// Which side this endpoint was.
    pub fn role(&self) -> Role {
        self.role
    }
    /// C_I as an OSCORE identifier (RFC 9528 Appendix A.1: a compact integer is its one-byte
    /// CBOR encoding, a byte string its content).
    pub fn c_i(&self) -> &[u8] {
        self.c_i.as_slice()
    }
    /// C_R as an OSCORE identifier.
    pub fn c_r(&self) -> &[u8] {
        self.c_r.as_slice()
    }

    fn exporter(&mut self, label: u8, len: usize) -> Zeroizing<Vec<u8>> {
        let out = Zeroizing::new(match &mut self.done {
            Done::I(d) => d.edhoc_exporter(label, &[], len),
            Done::R(d) => d.edhoc_exporter(label, &[], len),
        });
        Zeroizing::new(out[..len].to_vec())
    }

    /// The OSCORE security context of RFC 9528 Appendix A.1 for this endpoint.
    pub fn oscore_context(&mut self) -> Result<SecurityContext, Error> {
        let secret = self.exporter(0, MASTER_SECRET_LEN);
        let salt = self.exporter(1, MASTER_SALT_LEN);
        let (sender, recipient) = match self.role {
            Role::Initiator => (self.c_r, self.c_i),
            Role::Responder => (self.c_i, self.c_r),
        };
        SecurityContext::derive(&SecurityParams {
            alg: Algorithm::AesCcm16_64_128,
            master_secret: &secret,
            master_salt: &salt,
            id_context: None,
            sender_id: sender.as_slice(),
            recipient_id: recipient.as_slice(),
        })
        .map_err(Error::Oscore)
    }

    /// EDHOC-KeyUpdate (RFC 9528 Appendix H) with `context` (both peers use the same one, e.g.
    /// nonces they exchanged), then the renewed OSCORE context. The old context must be
    /// dropped: its keys are no longer derivable, and the new one restarts sequence numbers
    /// under new keys, so no (key, nonce) pair repeats.
    pub fn key_update(&mut self, context: &[u8]) -> Result<SecurityContext, Error> {
        if context.len() > lakers::MAX_KDF_CONTEXT_LEN {
            return Err(Error::Transport(format!(
                "KeyUpdate context of {} bytes (at most {})",
                context.len(),
                lakers::MAX_KDF_CONTEXT_LEN
            )));
        }
        let prk = Zeroizing::new(match &mut self.done {
            Done::I(d) => d.edhoc_key_update(context),
            Done::R(d) => d.edhoc_key_update(context),
        });
        drop(prk);
        self.oscore_context()
    }

    /// Whether the next sender sequence number `next_seq` reaches `limit` (a configured one, or
    /// [`crate::MAX_SEQ`] + 1: the Partial IV space, RFC 8613 §7.2.1) and calls for a
    /// [`Established::key_update`] before anything more is sent.
    pub fn needs_key_update(next_seq: u64, limit: u64) -> bool {
        next_seq >= limit.min(crate::MAX_SEQ + 1)
    }
}

/// An Initiator that sent message_1 and waits for message_2.
pub struct Initiator {
    wait: EdhocInitiatorWaitM2<Crypto>,
    peer: Credential,
    c_i: ConnId,
}

/// An Initiator that sent message_3 and waits for message_4 (or for the first OSCORE
/// response, which also proves the Responder has the keys).
pub struct InitiatorSentM3 {
    wait: EdhocInitiatorWaitM4<Crypto>,
    c_i: ConnId,
    c_r: ConnId,
}

impl Initiator {
    /// Start: message_1 with the one-byte connection identifier C_I = `c_i` (its OSCORE ID;
    /// the bytes of the integers -24..=23 travel as those integers, others as a byte string,
    /// RFC 9528 §3.3.2), expecting the Responder to authenticate with `peer`.
    pub fn start(own: &Identity, peer: Credential, c_i: u8) -> Result<(Initiator, Vec<u8>), Error> {
        let c_i = ConnId::from_slice(&[c_i])
            .ok_or_else(|| Error::Credential(format!("C_I 0x{c_i:02x} is not a connection identifier")))?;
        let mut i = EdhocInitiator::new(crypto(), EDHOCMethod::StatStat, EDHOCSuite::CipherSuite2);
        i.set_identity(*own.key, own.cred);
        let (wait, m1) = i.prepare_message_1(Some(c_i), &None).map_err(proto("message_1"))?;
        Ok((Initiator { wait, peer, c_i }, m1.as_slice().to_vec()))
    }

    /// Verify message_2 (the Responder's credential must be `peer`, its MAC must verify) and
    /// build message_3.
    pub fn process_message_2(self, message_2: &[u8]) -> Result<(InitiatorSentM3, Vec<u8>), Error> {
        let m2 = buffer("message_2", message_2)?;
        check_ephemeral("message_2", message_2)?;
        let (processing, c_r, id_cred_r, ead_2) = guarded("message_2", || self.wait.parse_message_2(&m2))?;
        let c_r = oscore_id("message_2", "C_R", c_r)?;
        if ead_2.is_some_and(|e| e.is_critical) {
            return Err(Error::Protocol { step: "message_2", reason: EDHOCError::EADUnprocessable });
        }
        let cred_r = credential_check_or_fetch(Some(self.peer), id_cred_r).map_err(proto("message_2"))?;
        let processed = guarded("message_2", || processing.verify_message_2(cred_r))?;
        let (wait, m3, prk_out) =
            processed.prepare_message_3(CredentialTransfer::ByReference, &None).map_err(proto("message_3"))?;
        drop(Zeroizing::new(prk_out));
        if c_r.as_slice() == self.c_i.as_slice() {
            return Err(Error::Oscore(crate::Error::Params("C_R equals C_I".into())));
        }
        Ok((InitiatorSentM3 { wait, c_i: self.c_i, c_r }, m3.as_slice().to_vec()))
    }
}

impl InitiatorSentM3 {
    /// C_R, the Responder's connection identifier (message_3 travels behind it over CoAP).
    pub fn c_r(&self) -> &[u8] {
        self.c_r.as_slice()
    }

    /// Verify message_4 and complete.
    pub fn process_message_4(self, message_4: &[u8]) -> Result<Established, Error> {
        let m4 = buffer("message_4", message_4)?;
        let (done, _) = guarded("message_4", || self.wait.process_message_4(&m4))?;
        Ok(Established { done: Done::I(done), role: Role::Initiator, c_i: self.c_i, c_r: self.c_r })
    }

    /// Complete without message_4 (the first OSCORE response from the Responder then confirms
    /// its keys, RFC 9528 §5.4.2).
    pub fn complete(self) -> Result<Established, Error> {
        let done = self.wait.completed_without_message_4().map_err(proto("message_4"))?;
        Ok(Established { done: Done::R(done), role: Role::Initiator, c_i: self.c_i, c_r: self.c_r })
    }
}

/// A Responder that answered message_1 with message_2 and waits for message_3: the state
/// [`Responder`] and [`OpenResponder`] share.
struct Answered {
    wait: EdhocResponderWaitM3<Crypto>,
    c_i: ConnId,
    c_r: ConnId,
}

impl Answered {
    /// Process message_1 for `own` and answer message_2 with C_R = `c_r` (its form checked by
    /// the caller). A C_I equal to `c_r` is refused as an [`Error::Oscore`], which tells a
    /// caller choosing C_R itself to try another.
    fn process_message_1(own: &Identity, message_1: &[u8], c_r: ConnId) -> Result<(Answered, Vec<u8>), Error> {
        let m1 = buffer("message_1", message_1)?;
        check_ephemeral("message_1", message_1)?;
        let r = EdhocResponder::new(crypto(), EDHOCMethod::StatStat, *own.key, own.cred);
        let (processed, c_i, ead_1) = guarded("message_1", || r.process_message_1(&m1))?;
        let c_i = oscore_id("message_1", "C_I", c_i)?;
        if ead_1.is_some_and(|e| e.is_critical) {
            return Err(Error::Protocol { step: "message_1", reason: EDHOCError::EADUnprocessable });
        }
        if c_i.as_slice() == c_r.as_slice() {
            // Appendix A.1: C_R must differ from C_I, or both directions would share a Sender ID.
            return Err(Error::Oscore(crate::Error::Params("C_I equals the C_R chosen here".into())));
        }
        let (wait, m2) = processed
            .prepare_message_2(CredentialTransfer::ByReference, Some(c_r), &None)
            .map_err(proto("message_2"))?;
        Ok((Answered { wait, c_i, c_r }, m2.as_slice().to_vec()))
    }

    /// Verify message_3 against the credential `expected` gives for its ID_CRED_I (lakers then
    /// checks that ID_CRED_I names it), complete, and build message_4.
    fn process_message_3(
        self,
        message_3: &[u8],
        expected: impl FnOnce(&lakers::IdCred) -> Result<Credential, Error>,
    ) -> Result<(Established, Vec<u8>), Error> {
        let m3 = buffer("message_3", message_3)?;
        let (processing, id_cred_i, ead_3) = guarded("message_3", || self.wait.parse_message_3(&m3))?;
        if ead_3.is_some_and(|e| e.is_critical) {
            return Err(Error::Protocol { step: "message_3", reason: EDHOCError::EADUnprocessable });
        }
        let cred = expected(&id_cred_i)?;
        let cred_i = credential_check_or_fetch(Some(cred), id_cred_i).map_err(proto("message_3"))?;
        let (processed, prk_out) = guarded("message_3", || processing.verify_message_3(cred_i))?;
        drop(Zeroizing::new(prk_out));
        let (done, m4) = processed.prepare_message_4(&None).map_err(proto("message_4"))?;
        Ok((
            Established { done: Done::R(done), role: Role::Responder, c_i: self.c_i, c_r: self.c_r },
            m4.as_slice().to_vec(),
        ))
    }

    /// The Debug of a Responder: the connection identifiers only (lakers' state holds secrets).
    fn fmt_as(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(name)
            .field("c_i", &self.c_i.as_slice())
            .field("c_r", &self.c_r.as_slice())
            .finish_non_exhaustive()
    }
}

/// A Responder that answered message_1 with message_2 and waits for message_3.
pub struct Responder {
    state: Answered,
    peer: Credential,
}

impl Responder {
    /// Process message_1 and answer message_2 with the one-byte connection identifier C_R =
    /// `c_r` (other than C_I; a compact one keeps message_3's CoAP payload parseable by
    /// [`CoapEdhocRequest`]), expecting the Initiator to authenticate with `peer`.
    pub fn process_message_1(
        own: &Identity,
        peer: Credential,
        message_1: &[u8],
        c_r: u8,
    ) -> Result<(Responder, Vec<u8>), Error> {
        let c_r = ConnId::from_slice(&[c_r])
            .ok_or_else(|| Error::Credential(format!("C_R 0x{c_r:02x} is not a connection identifier")))?;
        let (state, m2) = Answered::process_message_1(own, message_1, c_r)?;
        Ok((Responder { state, peer }, m2))
    }

    /// C_I, the Initiator's connection identifier.
    pub fn c_i(&self) -> &[u8] {
        self.state.c_i.as_slice()
    }
    /// C_R, this Responder's connection identifier.
    pub fn c_r(&self) -> &[u8] {
        self.state.c_r.as_slice()
    }

    /// Verify message_3 (the Initiator's credential must be `peer`), complete, and build
    /// message_4 (sent when message_3 came alone to `/.well-known/edhoc`).
    pub fn process_message_3(self, message_3: &[u8]) -> Result<(Established, Vec<u8>), Error> {
        let peer = self.peer;
        self.state.process_message_3(message_3, |_| Ok(peer))
    }
}

// The handshake states hold lakers' secrets: their Debug shows the connection identifiers only.
impl fmt::Debug for Initiator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Initiator").field("c_i", &self.c_i.as_slice()).finish_non_exhaustive()
    }
}

impl fmt::Debug for InitiatorSentM3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InitiatorSentM3")
            .field("c_i", &self.c_i.as_slice())
            .field("c_r", &self.c_r.as_slice())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Responder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.state.fmt_as("Responder", f)
    }
}

/// The CoAP payload that carries message_1 (RFC 9528 Appendix A.2): CBOR `true`, then message_1.
pub fn coap_message_1(message_1: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + message_1.len());
    out.push(0xf5);
    out.extend_from_slice(message_1);
    out
}

/// The CoAP payload that carries message_3: C_R (CBOR: the compact integer's byte as is, a
/// byte string with its header), then message_3.
pub fn coap_message_3(c_r: &[u8], message_3: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + c_r.len() + message_3.len());
    match c_r {
        [b] if b >> 5 <= 1 && b & 0x1f < 24 => out.push(*b),
        _ => crate::cbor::bstr(&mut out, c_r),
    }
    out.extend_from_slice(message_3);
    out
}

/// A POST to `/.well-known/edhoc`, told apart by its first byte (Appendix A.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoapEdhocRequest<'a> {
    /// CBOR `true`: message_1 follows.
    Message1(&'a [u8]),
    /// A connection identifier C_R (compact: one byte), then message_3.
    Message3 {
        /// C_R as an OSCORE identifier.
        c_r: u8,
        /// message_3.
        message_3: &'a [u8],
    },
}

impl<'a> CoapEdhocRequest<'a> {
    /// Tell a request payload apart; anything else is refused, named.
    pub fn parse(payload: &'a [u8]) -> Result<CoapEdhocRequest<'a>, Error> {
        match payload {
            [] => Err(Error::Transport("empty payload".into())),
            [0xf5, rest @ ..] => Ok(CoapEdhocRequest::Message1(rest)),
            [b, rest @ ..] if b >> 5 <= 1 && b & 0x1f < 24 => {
                Ok(CoapEdhocRequest::Message3 { c_r: *b, message_3: rest })
            }
            [b, ..] => Err(Error::Transport(format!(
                "payload starts with 0x{b:02x}: neither CBOR true (message_1) nor a compact C_R (message_3)"
            ))),
        }
    }
}

/// Whether `key` is a usable P-256 private key: 32 bytes, not 0, below the group order.
pub fn private_key_ok(key: &[u8]) -> bool {
    <[u8; 32]>::try_from(key).is_ok_and(|k| p256::SecretKey::from_bytes(&k.into()).is_ok())
}

/// The longest 'kid' [`ccs`] writes (lakers keeps at most 16 bytes).
pub const MAX_KID: usize = 16;

/// A CWT Claims Set (RFC 9528 §3.5.2) for the P-256 public key of `private_key`, shaped as the
/// ones of RFC 9529 §3: `{2: subject, 8: {1: {1: 2, 2: kid, -1: 1, -2: x, -3: y}}}`.
pub fn ccs(subject: &str, kid: &[u8], private_key: &[u8]) -> Result<Vec<u8>, Error> {
    if kid.is_empty() || kid.len() > MAX_KID {
        return Err(Error::Credential(format!("a kid of {} bytes (1 to {MAX_KID})", kid.len())));
    }
    if subject.len() > 64 {
        return Err(Error::Credential(format!("a subject of {} bytes (at most 64)", subject.len())));
    }
    let k: [u8; 32] = private_key
        .try_into()
        .map_err(|_| Error::Credential(format!("P-256 private key of {} bytes (32 expected)", private_key.len())))?;
    let k = Zeroizing::new(k);
    let secret = p256::SecretKey::from_bytes(&(*k).into())
        .map_err(|_| Error::Credential("the P-256 private key is 0 or not below the group order".into()))?;
    let point = secret.public_key().to_encoded_point(false);
    let (Some(x), Some(y)) = (point.x(), point.y()) else {
        return Err(Error::Credential("the public key is the point at infinity".into()));
    };
    let mut out = Vec::with_capacity(110 + subject.len());
    out.extend_from_slice(&[0xa2, 0x02]);
    crate::cbor::tstr(&mut out, subject);
    out.extend_from_slice(&[0x08, 0xa1, 0x01, 0xa5, 0x01, 0x02, 0x02]);
    crate::cbor::bstr(&mut out, kid);
    out.extend_from_slice(&[0x20, 0x01, 0x21]);
    crate::cbor::bstr(&mut out, x);
    out.push(0x22);
    crate::cbor::bstr(&mut out, y);
    Ok(out)
}

/// The 'kid' an ID_CRED_x sent by reference names (`{4: kid}`); None for a credential sent by
/// value or anything else.
fn referenced_kid(id_cred: &lakers::IdCred) -> Option<Vec<u8>> {
    match id_cred.as_full_value() {
        [0xa1, 0x04, h, kid @ ..] if (0x40..=0x57).contains(h) && usize::from(h - 0x40) == kid.len() => {
            Some(kid.to_vec())
        }
        _ => None,
    }
}

/// A Responder that serves many Initiators: it learns which one it talks to from the 'kid' in
/// message_3 (ID_CRED_I by reference) and looks the credential up then. It answered
/// message_1 with message_2 and waits for message_3.
pub struct OpenResponder {
    state: Answered,
}

impl fmt::Debug for OpenResponder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.state.fmt_as("OpenResponder", f)
    }
}

impl OpenResponder {
    /// Process message_1 and answer message_2 with the connection identifier C_R = `c_r` (1 to
    /// 7 bytes: an OSCORE Sender ID; a C_R equal to the Initiator's C_I is refused, so the
    /// caller tries another).
    pub fn process_message_1(own: &Identity, message_1: &[u8], c_r: &[u8]) -> Result<(OpenResponder, Vec<u8>), Error> {
        if c_r.is_empty() || c_r.len() > 7 {
            return Err(Error::Credential(format!("a C_R of {} bytes (1 to 7)", c_r.len())));
        }
        let c_r = ConnId::from_slice(c_r)
            .ok_or_else(|| Error::Credential(format!("C_R of {} bytes is not a connection identifier", c_r.len())))?;
        let (state, m2) = Answered::process_message_1(own, message_1, c_r)?;
        Ok((OpenResponder { state }, m2))
    }

    /// C_I, the Initiator's connection identifier.
    pub fn c_i(&self) -> &[u8] {
        self.state.c_i.as_slice()
    }
    /// C_R, this Responder's connection identifier.
    pub fn c_r(&self) -> &[u8] {
        self.state.c_r.as_slice()
    }

    /// Verify message_3 against the credential `lookup` gives for the kid in ID_CRED_I, complete,
    /// and build message_4. Returns the session, message_4 and that kid. A credential sent by
    /// value, or a kid `lookup` does not know, is refused as an unexpected credential (the
    /// caller names the kid: `lookup` sees it).
    pub fn process_message_3(
        self,
        message_3: &[u8],
        lookup: impl FnOnce(&[u8]) -> Option<Credential>,
    ) -> Result<(Established, Vec<u8>, Vec<u8>), Error> {
        let mut kid = Vec::new();
        let (done, m4) = self.state.process_message_3(message_3, |id_cred_i| {
            let unexpected = || Error::Protocol { step: "message_3", reason: EDHOCError::UnexpectedCredential };
            kid = referenced_kid(id_cred_i).ok_or_else(unexpected)?;
            lookup(&kid).ok_or_else(unexpected)
        })?;
        Ok((done, m4, kid))
    }
}

/// Tell apart a POST to `/.well-known/edhoc` whose C_R may be a byte string too (Appendix A.2):
/// CBOR `true` then message_1, or C_R (a compact integer, or a byte string of 1 to 7 bytes)
/// then message_3. Returns None for message_1's C_R.
pub fn split_coap_request(payload: &[u8]) -> Result<(Option<Vec<u8>>, &[u8]), Error> {
    match payload {
        [] => Err(Error::Transport("empty payload".into())),
        [0xf5, rest @ ..] => Ok((None, rest)),
        [b, rest @ ..] if b >> 5 <= 1 && b & 0x1f < 24 => Ok((Some(alloc::vec![*b]), rest)),
        [h @ 0x41..=0x47, rest @ ..] if rest.len() >= usize::from(h - 0x40) => {
            let (c_r, m3) = rest.split_at(usize::from(h - 0x40));
            Ok((Some(c_r.to_vec()), m3))
        }
        [b, ..] => Err(Error::Transport(format!(
            "payload starts with 0x{b:02x}: neither CBOR true (message_1) nor a C_R (message_3)"
        ))),
    }
}

/// An EDHOC error message (RFC 9528 §6) with ERR_CODE 1 and `reason` as ERR_INFO: what a
/// Responder answers over CoAP in a 4.00 response (Appendix A.2).
pub fn error_message(reason: &str) -> Vec<u8> {
    let mut out = alloc::vec![0x01];
    crate::cbor::tstr(&mut out, reason);
    out
}

/// The ERR_INFO text of an EDHOC error message with ERR_CODE 1 (at most 512 bytes, control
/// characters shown as '?'); None for anything else.
pub fn error_reason(message: &[u8]) -> Option<String> {
    let (len, at): (usize, usize) = match message {
        [0x01, h @ 0x60..=0x77, ..] => (usize::from(h - 0x60), 2),
        [0x01, 0x78, n, ..] => (usize::from(*n), 3),
        [0x01, 0x79, a, b, ..] => (usize::from(u16::from_be_bytes([*a, *b])), 4),
        _ => return None,
    };
    let text = message.get(at..at.checked_add(len)?)?;
    if at + len != message.len() || len > 512 {
        return None;
    }
    let s = core::str::from_utf8(text).ok()?;
    Some(s.chars().map(|c| if c.is_control() { '?' } else { c }).collect())
}

/// ERR_CODE 2, "Wrong Selected Cipher Suite" (RFC 9528 §6.3).
pub const ERR_WRONG_SUITE: u8 = 2;

/// An EDHOC error message with ERR_CODE 2 and ERR_INFO = SUITES_R, the cipher suites this
/// Responder supports (RFC 9528 §6.3): what it MUST answer a message_1 whose selected suite it
/// does not support. SUITES_R is one integer for one suite, else an array (`suites_r` holds 1
/// to [`own::messages::MAX_SUITES`] suites, each 0 to 23 as the registry's suites here are).
pub fn wrong_suite_message(suites_r: &[u8]) -> Result<Vec<u8>, Error> {
    if suites_r.is_empty() || suites_r.len() > own::messages::MAX_SUITES {
        return Err(Error::Transport(format!(
            "SUITES_R of {} suites (1 to {})",
            suites_r.len(),
            own::messages::MAX_SUITES
        )));
    }
    let mut out = alloc::vec![ERR_WRONG_SUITE];
    if let [s] = suites_r {
        crate::cbor::int(&mut out, i64::from(*s));
    } else {
        crate::cbor::array(&mut out, suites_r.len() as u64);
        for s in suites_r {
            crate::cbor::int(&mut out, i64::from(*s));
        }
    }
    Ok(out)
}

/// An EDHOC error message as an Initiator reads it (RFC 9528 §6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorMessage {
    /// ERR_CODE 1: the Responder's text (control characters shown as '?').
    Unspecified(String),
    /// ERR_CODE 2: SUITES_R, the cipher suites the Responder supports, in its order.
    WrongSelectedSuite(Vec<i64>),
}

impl ErrorMessage {
    /// Parse an error message (ERR_CODE 1 or 2, deterministic CBOR, nothing after ERR_INFO);
    /// anything else is refused, named in one line.
    pub fn parse(message: &[u8]) -> Result<ErrorMessage, String> {
        if message.len() > own::messages::MAX_MESSAGE {
            return Err(format!(
                "an EDHOC error message of {} bytes (at most {})",
                message.len(),
                own::messages::MAX_MESSAGE
            ));
        }
        let mut r = own::cbor::Reader::new(message);
        let bad = |what: &str| format!("malformed EDHOC error message: {what}");
        match r.int().map_err(|e| bad(&format!("ERR_CODE: {e}")))? {
            1 => error_reason(message).map(ErrorMessage::Unspecified).ok_or_else(|| bad("ERR_CODE 1 without a text")),
            2 => {
                let suites = match r.peek() {
                    Some(b) if b >> 5 == 4 => {
                        let n = r.container(4).map_err(|e| bad(&format!("SUITES_R: {e}")))?;
                        // CDDL `[ 2* suite ]`: one suite travels as an integer.
                        if !(2..=own::messages::MAX_SUITES).contains(&n) {
                            let max = own::messages::MAX_SUITES;
                            return Err(bad(&format!("SUITES_R array of {n} suites (2 to {max})")));
                        }
                        (0..n)
                            .map(|_| r.int().map_err(|e| bad(&format!("SUITES_R holds a non-integer ({e})"))))
                            .collect::<Result<Vec<_>, _>>()?
                    }
                    Some(_) => alloc::vec![r.int().map_err(|e| bad(&format!("SUITES_R is not an integer ({e})")))?],
                    None => return Err(bad("ERR_CODE 2 without SUITES_R")),
                };
                if !r.is_empty() {
                    return Err(bad("bytes after SUITES_R"));
                }
                Ok(ErrorMessage::WrongSelectedSuite(suites))
            }
            c => Err(bad(&format!("ERR_CODE {c} (1 and 2 are read)"))),
        }
    }

    /// The refusal in one line, with `responder` and `initiator` naming the two sides and
    /// `selected` the suite the Initiator selected: e.g. "the gateway supports cipher suite 2
    /// only; this device selected 0".
    pub fn describe(&self, responder: &str, initiator: &str, selected: u8) -> String {
        match self {
            ErrorMessage::Unspecified(text) => text.clone(),
            ErrorMessage::WrongSelectedSuite(s) => {
                let list = match s.as_slice() {
                    [one] => format!("cipher suite {one} only"),
                    [init @ .., last] => {
                        let init: Vec<String> = init.iter().map(|x| x.to_string()).collect();
                        format!("cipher suites {} and {last}", init.join(", "))
                    }
                    [] => "no cipher suite".into(),
                };
                format!("{responder} supports {list}; {initiator} selected {selected}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coap_payloads_of_appendix_a2() {
        assert_eq!(coap_message_1(&[3, 2]), [0xf5, 3, 2]);
        assert_eq!(coap_message_3(&[0x27], &[9]), [0x27, 9]);
        assert_eq!(coap_message_3(&[0xff], &[9]), [0x41, 0xff, 9]);
        assert_eq!(CoapEdhocRequest::parse(&[0xf5, 1]), Ok(CoapEdhocRequest::Message1(&[1])));
        assert_eq!(CoapEdhocRequest::parse(&[0x37, 1]), Ok(CoapEdhocRequest::Message3 { c_r: 0x37, message_3: &[1] }));
        assert!(CoapEdhocRequest::parse(&[]).is_err());
        assert!(CoapEdhocRequest::parse(&[0x41, 0xff]).is_err());
    }

    #[test]
    fn key_update_is_due_at_the_limit() {
        assert!(!Established::needs_key_update(9, 10));
        assert!(Established::needs_key_update(10, 10));
        assert!(!Established::needs_key_update(crate::MAX_SEQ, u64::MAX));
        assert!(Established::needs_key_update(crate::MAX_SEQ + 1, u64::MAX));
    }
    #[test]
    fn wrong_suite_messages_of_rfc_9528_section_6_3() {
        // By hand from §6's CDDL (a CBOR sequence ERR_CODE, ERR_INFO) and RFC 8949: unsigned 2
        // is 0x02, unsigned 0 is 0x00, an array of 2 is 0x82, unsigned 24 is 0x18 0x18.
        assert_eq!(wrong_suite_message(&[2]).unwrap(), [0x02, 0x02]);
        assert_eq!(wrong_suite_message(&[0]).unwrap(), [0x02, 0x00]);
        assert_eq!(wrong_suite_message(&[0, 2]).unwrap(), [0x02, 0x82, 0x00, 0x02]);
        assert_eq!(wrong_suite_message(&[24, 2]).unwrap(), [0x02, 0x82, 0x18, 0x18, 0x02]);
        assert!(wrong_suite_message(&[]).is_err());
        assert!(wrong_suite_message(&[0; 11]).is_err());
        let p = |b: &[u8]| ErrorMessage::parse(b);
        assert_eq!(p(&[0x02, 0x02]), Ok(ErrorMessage::WrongSelectedSuite(alloc::vec![2])));
        assert_eq!(p(&[0x02, 0x82, 0x00, 0x02]), Ok(ErrorMessage::WrongSelectedSuite(alloc::vec![0, 2])));
        // A negative suite (private use, -24): 0x37.
        assert_eq!(p(&[0x02, 0x37]), Ok(ErrorMessage::WrongSelectedSuite(alloc::vec![-24])));
        assert_eq!(p(&[0x01, 0x62, b'n', b'o']), Ok(ErrorMessage::Unspecified("no".into())));
        let e = |b: &[u8]| p(b).unwrap_err();
        assert_eq!(e(&[]), "malformed EDHOC error message: ERR_CODE: truncated");
        assert_eq!(e(&[0x02]), "malformed EDHOC error message: ERR_CODE 2 without SUITES_R");
        assert_eq!(e(&[0x02, 0x82, 0x00]), "malformed EDHOC error message: SUITES_R: count past the end");
        assert_eq!(e(&[0x02, 0x18]), "malformed EDHOC error message: SUITES_R is not an integer (truncated)");
        assert_eq!(
            e(&[0x02, 0x41, 0x02]),
            "malformed EDHOC error message: SUITES_R is not an integer (an integer expected)"
        );
        assert_eq!(
            e(&[0x02, 0x82, 0x00, 0x41]),
            "malformed EDHOC error message: SUITES_R holds a non-integer (an integer expected)"
        );
        // `[ 2* suite ]`: an array of one suite, or of none, is not SUITES_R.
        assert_eq!(e(&[0x02, 0x81, 0x02]), "malformed EDHOC error message: SUITES_R array of 1 suites (2 to 10)");
        assert_eq!(e(&[0x02, 0x80]), "malformed EDHOC error message: SUITES_R array of 0 suites (2 to 10)");
        let mut eleven = alloc::vec![0x02, 0x8b];
        eleven.extend([0x00; 11]);
        assert_eq!(e(&eleven), "malformed EDHOC error message: SUITES_R array of 11 suites (2 to 10)");
        // A huge count is refused before anything is allocated.
        assert_eq!(
            e(&[0x02, 0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            "malformed EDHOC error message: SUITES_R: count past the end"
        );
        assert_eq!(e(&[0x02, 0x02, 0x00]), "malformed EDHOC error message: bytes after SUITES_R");
        assert_eq!(e(&[0x02, 0x18, 0x02]), "malformed EDHOC error message: SUITES_R is not an integer (not the shortest encoding (non-deterministic CBOR))");
        assert_eq!(e(&[0x03, 0x02]), "malformed EDHOC error message: ERR_CODE 3 (1 and 2 are read)");
        assert_eq!(e(&[0x01, 0x02]), "malformed EDHOC error message: ERR_CODE 1 without a text");
        assert_eq!(e(&[0x02; 1025]), "an EDHOC error message of 1025 bytes (at most 1024)");
        let d = |s: &[i64]| ErrorMessage::WrongSelectedSuite(s.to_vec()).describe("the gateway", "this device", 0);
        assert_eq!(d(&[2]), "the gateway supports cipher suite 2 only; this device selected 0");
        assert_eq!(d(&[2, 3, 6]), "the gateway supports cipher suites 2, 3 and 6; this device selected 0");
    }
}
