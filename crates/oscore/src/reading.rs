//! A sensor reading as a CoAP request: the plain POST `lwcbench link --protocol oscore` devices
//! protect ([`request`]) and the size of that request once protected ([`protected_size`]).
//!
//! Both live here, not in the link crate, so that `lwcbench choose` prices the exact bytes the
//! devices send without depending on the link (its broker, store and runtime): the devices build
//! their requests with [`request`], and [`protected_size`] protects the same request with this
//! crate's [`protect_request`] and encoder.
use alloc::vec::Vec;

use crate::coap::{mtype, opt, Message, MAX_MESSAGE};
use crate::{protect_request, Algorithm, Error, MemorySequence, SecurityContext, SecurityParams, MAX_SEQ};

/// The Uri-Path of readings (inner, encrypted).
pub const PATH: &[u8] = b"r";
/// Content-Format application/octet-stream (RFC 7252 §12.3): a reading's bytes.
pub const OCTET_STREAM: u8 = 42;
/// Bytes of the token of a reading's request (a per-device counter).
pub const TOKEN_LEN: usize = 4;

/// The plain Confirmable POST of `reading` with message ID `message_id` and token `token`; with
/// `echo`, the Echo option (RFC 9175) the gateway asked for.
pub fn request(message_id: u16, token: u32, reading: &[u8], echo: Option<(u16, &[u8])>) -> Message {
    let mut m = Message::new(mtype::CON, 0x02, message_id, &token.to_be_bytes());
    m.add_option(opt::URI_PATH, PATH);
    m.add_option(opt::CONTENT_FORMAT, &[OCTET_STREAM]);
    if let Some((number, value)) = echo {
        m.add_option(number, value);
    }
    m.payload = reading.to_vec();
    m
}

/// The sizes of one protected reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// The whole CoAP datagram: header, token, OSCORE option, payload marker, ciphertext, tag.
    pub request: usize,
    /// The AEAD's associated data (the Enc_structure of RFC 8613 §5.4).
    pub aad: usize,
    /// The AEAD's plaintext: inner code, inner options, payload marker, the reading.
    pub plaintext: usize,
    /// Tag bytes.
    pub tag: usize,
    /// Bytes of the Partial IV (the sender sequence number, §6.1).
    pub piv: usize,
}

/// The size of the request carrying a `reading_len`-byte reading under `alg`, from a device
/// whose Sender ID is `kid`, at sender sequence number `seq` (no Echo option): the request is
/// built with [`request`] and protected with [`protect_request`] under a throw-away context (the
/// sizes do not depend on the keys). A request that exceeds a UDP datagram
/// ([`MAX_MESSAGE`]) is refused, as are a `seq` above [`MAX_SEQ`] and a kid the AEAD's nonce
/// cannot hold.
pub fn protected_size(alg: Algorithm, kid: &[u8], seq: u64, reading_len: usize) -> Result<Size, Error> {
    if seq > MAX_SEQ {
        return Err(Error::SequenceExhausted);
    }
    // Refused before a buffer of that size is made.
    if reading_len > MAX_MESSAGE {
        return Err(Error::Unsupported(alloc::format!(
            "a {reading_len}-byte reading: more than a UDP datagram holds ({MAX_MESSAGE} bytes)"
        )));
    }
    let ctx = SecurityContext::derive(&SecurityParams {
        alg,
        master_secret: &[0; 16],
        master_salt: b"",
        id_context: None,
        sender_id: kid,
        recipient_id: b"",
    })?;
    let plain = request(0, 0, &alloc::vec![0; reading_len], None);
    let (outer, binding) = protect_request(&ctx, &mut MemorySequence::new(seq), &plain)?;
    let bytes: Vec<u8> = outer.encode()?;
    if bytes.len() > MAX_MESSAGE {
        return Err(Error::Unsupported(alloc::format!(
            "a {reading_len}-byte reading makes a {}-byte request, more than a UDP datagram holds ({MAX_MESSAGE} bytes)",
            bytes.len()
        )));
    }
    let tag = alg.tag_len();
    Ok(Size {
        request: bytes.len(),
        aad: crate::protect::aad(&ctx, &binding.kid, &binding.piv).len(),
        plaintext: outer.payload.len() - tag,
        tag,
        piv: binding.piv.len(),
    })
}
