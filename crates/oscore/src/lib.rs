//! OSCORE, Object Security for Constrained RESTful Environments (RFC 8613).
//!
//! What this crate does (docs/oscore.md says what it does not do yet):
//! * [`context`]: the security context derived from a Master Secret with HKDF-SHA256 (§3.2) and
//!   the AEAD nonce (§5.2);
//! * [`coap`]: a bounded CoAP message encoder and parser (RFC 7252 §3), the part OSCORE needs;
//! * [`option`]: the OSCORE option value (§6.1);
//! * [`protect`]: protection and verification of requests and responses as COSE_Encrypt0 objects
//!   with the external AAD of §5.4 (§8.1–§8.4);
//! * [`reading`]: a sensor reading as a CoAP POST, and its size once protected;
//! * [`replay`]: the replay window of §7.4;
//! * [`seq`] (feature `std`): sender sequence numbers persisted the way RFC 8613 Appendix B.1
//!   describes: a block is reserved durably before any number in it is used, so no number is
//!   used twice across restarts or processes;
//! * [`edhoc`] (feature `edhoc`): EDHOC (RFC 9528) method 3, cipher suite 2 through lakers, and
//!   [`edhoc::own`], this crate's own EDHOC with cipher suites 0 (X25519, EdDSA) and 2, methods 0
//!   and 3, checked against RFC 9529; both establish the OSCORE context of RFC 9528 Appendix
//!   A.1, with EDHOC-KeyUpdate.
//!
//! Algorithms: AES-CCM-16-64-128 (COSE 10, OSCORE's mandatory one), AES-CCM-16-128-128 (30),
//! ChaCha20/Poly1305 (24), A128GCM (1). Ascon-AEAD128 is refused: it has no identifier in the
//! IANA COSE Algorithms registry, and OSCORE names its AEAD by that identifier (in the key
//! derivation's `info` and in every message's AAD).
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub mod alg;
pub mod cbor;
pub mod coap;
pub mod context;
#[cfg(feature = "edhoc")]
pub mod edhoc;
pub mod option;
pub mod protect;
pub mod reading;
pub mod replay;
#[cfg(feature = "std")]
pub mod seq;

use alloc::string::String;
use core::fmt;

pub use alg::Algorithm;
pub use context::{SecurityContext, SecurityParams};
pub use protect::{
    protect_request, protect_response, unprotect_request, unprotect_response, MemorySequence, RequestBinding,
    SequenceSource,
};
pub use replay::ReplayWindow;

/// The largest sender sequence number: a Partial IV has at most 5 bytes (§6.1, §7.2.1).
pub const MAX_SEQ: u64 = (1 << 40) - 1;

/// Why a message or a parameter is refused. Each names its reason; [`Error::coap_code`] gives
/// the CoAP error response RFC 8613 §8.2 prescribes for a request refused that way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The CoAP message, the OSCORE option or the decrypted inner message is malformed.
    Malformed(String),
    /// Well formed, but something this implementation does not handle (named).
    Unsupported(String),
    /// A security context parameter is invalid (named).
    Params(String),
    /// The kid (and kid context) of a request name no context held here.
    ContextNotFound,
    /// The Partial IV was already received (replay window, §7.4).
    Replayed(u64),
    /// The Partial IV is below the replay window: it can no longer be told from a replay.
    TooOld(u64),
    /// The AEAD tag does not verify: altered, or protected under another key or AAD.
    DecryptionFailed,
    /// No sender sequence number is left (2^40 - 1 used): the context must be renewed (§7.2.1).
    SequenceExhausted,
    /// The persisted sequence number state cannot be read or written (the file and reason).
    State(String),
}

impl Error {
    /// The CoAP response code (class * 32 + detail) a server answers a request refused with
    /// this error (§8.2): 4.02 Bad Option for a malformed OSCORE option, 4.01 Unauthorized
    /// for an unknown context or a replay, 4.00 Bad Request for a failed decryption; 5.00 for
    /// errors of the server's own state.
    pub fn coap_code(&self) -> u8 {
        match self {
            Error::Malformed(_) | Error::Unsupported(_) => 0x82,
            Error::ContextNotFound | Error::Replayed(_) | Error::TooOld(_) => 0x81,
            Error::DecryptionFailed => 0x80,
            Error::Params(_) | Error::SequenceExhausted | Error::State(_) => 0xa0,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Malformed(m) => write!(f, "malformed message: {m}"),
            Error::Unsupported(m) => write!(f, "unsupported: {m}"),
            Error::Params(m) => write!(f, "security context: {m}"),
            Error::ContextNotFound => write!(f, "security context not found (kid or kid context unknown)"),
            Error::Replayed(p) => write!(f, "replay detected: Partial IV {p} was already received"),
            Error::TooOld(p) => write!(f, "replay detected: Partial IV {p} is below the replay window"),
            Error::DecryptionFailed => write!(f, "decryption failed (the tag does not verify)"),
            Error::SequenceExhausted => {
                write!(f, "sender sequence numbers exhausted (2^40 - 1 used): renew the security context")
            }
            Error::State(m) => write!(f, "sequence number state: {m}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}
