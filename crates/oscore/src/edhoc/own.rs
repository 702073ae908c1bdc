//! This crate's own EDHOC (RFC 9528): cipher suites 0 and 2, method 3 (static DH keys, CCS
//! credentials by 'kid') and method 0 (Ed25519 signatures, suite 0, with CCS or X.509
//! credentials by 'kid' or 'x5t'), Initiator and Responder, with the OSCORE context of
//! Appendix A.1 and EDHOC-KeyUpdate (Appendix H).
//!
//! Why our own: no maintained Rust crate speaks cipher suite 0 (lakers, which the parent module
//! wraps, implements suite 2 only, and so do lakers-python and aiocoap), and the project needs
//! X25519/EdDSA beside P-256. It is checked against RFC 9529: §2 (method 0, suite 0: every
//! intermediate value of the trace) and §3 (method 3, suite 2), and against lakers at suite 2
//! in both directions (tests/edhoc_own_rfc9529.rs, tests/edhoc_own.rs). No foreign peer here
//! speaks suite 0, so at suite 0 the trace is the only outside check.
//!
//! Parts: [`cbor`] (the bounded reader, identifier encodings), [`suites`] (the curves and
//! signatures), [`schedule`] (the key schedule and transcript hashes), [`messages`] (the
//! message encodings and parsers), [`credential`] (credentials and identities), [`handshake`]
//! (the Initiator, the Responder and the completed session). A Responder either expects one
//! Initiator's credential ([`Responder`]) or serves many ([`OpenResponder`], a gateway: it
//! looks the credential up by the kid in message_3); either takes its cipher suite from its
//! configuration. [`Credential::ccs_for_key`] builds a CCS for a P-256, X25519 or Ed25519
//! private key. Every peer message is parsed with bounds (at most
//! [`messages::MAX_MESSAGE`] bytes, CBOR nested at most [`cbor::MAX_DEPTH`] deep) and refused
//! with a one-line [`Error`]; MACs are compared in constant time; private keys, shared
//! secrets and PRKs are wiped when dropped. The code needs `alloc` only, except
//! [`Initiator::start`] and [`Responder::process_message_1`], which draw ephemeral keys from
//! the operating system.
//!
//! What is not done: EAD items are never sent, and received non-critical ones are ignored
//! (critical ones refused); credentials are never sent by value nor fetched: each side is
//! given its peer's credential (or, for an [`OpenResponder`], a look-up by kid), and a message
//! naming another one is refused; a Responder refuses a message_1 whose selected suite is not
//! its own with an [`Error`] (its caller answers the error message of §6.3:
//! [`super::wrong_suite_message`]), and an Initiator does not retry with another suite;
//! methods 1 and 2 and ES256 are not offered.
use alloc::string::String;
use core::fmt;

pub mod cbor;
pub mod credential;
pub mod handshake;
pub mod messages;
pub mod schedule;
pub mod suites;

pub use credential::{Credential, Identity, KeyKind};
pub use handshake::{Established, Initiator, InitiatorSentM3, OpenResponder, Params, Responder, ResponderConfig};
pub use suites::EdhocSuite;

use suites::{HASH_LEN, MAC_LEN};

/// Why an EDHOC step or a credential is refused: the step and the reason, in one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    step: &'static str,
    reason: String,
}

impl Error {
    pub(crate) fn new(step: &'static str, reason: impl Into<String>) -> Error {
        Error { step, reason: reason.into() }
    }
    /// The step: "credential", "message_1" to "message_4", or "OSCORE context".
    pub fn step(&self) -> &'static str {
        self.step
    }
    /// The reason.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EDHOC {} refused: {}", self.step, self.reason)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

pub(crate) fn refuse(step: &'static str) -> impl Fn(&'static str) -> Error {
    move |r| Error::new(step, r)
}

/// The authentication method (RFC 9528 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Method 0: both sides sign (Ed25519, suite 0 only).
    Signatures,
    /// Method 3: both sides authenticate with static DH keys.
    StaticDh,
}

impl Method {
    /// The method's number.
    pub fn id(self) -> u8 {
        match self {
            Method::Signatures => 0,
            Method::StaticDh => 3,
        }
    }
    pub(crate) fn signs(self) -> bool {
        self == Method::Signatures
    }
    /// MAC_2/MAC_3's length: the hash length when the side signs, else the suite's MAC length.
    pub(crate) fn mac_len(self) -> usize {
        if self.signs() {
            HASH_LEN
        } else {
            MAC_LEN
        }
    }
}
