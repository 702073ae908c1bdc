//! Protecting and verifying CoAP requests and responses (RFC 8613 §5, §8).
//!
//! The COSE object is COSE_Encrypt0 in OSCORE's compressed form: the ciphertext (with the tag)
//! is the payload of the outer message, the Partial IV, kid and 'kid context' travel in the
//! OSCORE option (§6), and the AAD is the Enc_structure `["Encrypt0", h'', external_aad]` with
//! `external_aad = bstr .cbor [1, [alg_aead], request_kid, request_piv, h'']` (§5.4; no Class I
//! options are defined, so the last item is empty).
//!
//! Options: Uri-Host, Uri-Port and Proxy-Scheme are Class U (outer), every other option is
//! Class E (inner, encrypted), as §4.1 prescribes for options it does not list. Observe and
//! Proxy-Uri, which need both classes or a decomposition, are refused as unsupported.
use alloc::format;
use alloc::vec::Vec;

use crate::coap::{self, opt, Message, Options};
use crate::context::{piv_bytes, piv_value, SecurityContext};
use crate::option::OscoreOption;
use crate::{cbor, Error, ReplayWindow, MAX_SEQ};

/// The outer code of a protected request without Observe (§4.2): POST.
pub const OUTER_REQUEST_CODE: u8 = 0x02;
/// The outer code of a protected response without Observe (§4.2): 2.04 Changed.
pub const OUTER_RESPONSE_CODE: u8 = 0x44;

/// Where sender sequence numbers come from. Each number is handed out once; an implementation
/// that persists them must have durably reserved a number before returning it.
pub trait SequenceSource {
    /// The next unused sender sequence number (at most [`MAX_SEQ`]).
    fn next_seq(&mut self) -> Result<u64, Error>;
}

/// Sequence numbers kept in memory only: for test vectors and for contexts that live no longer
/// than one process (after a restart such a context must not be used again, §7.5.1).
#[derive(Clone, Debug)]
pub struct MemorySequence {
    next: u64,
}

impl MemorySequence {
    /// Start at `next`.
    pub fn new(next: u64) -> MemorySequence {
        MemorySequence { next }
    }
}

impl SequenceSource for MemorySequence {
    fn next_seq(&mut self) -> Result<u64, Error> {
        if self.next > MAX_SEQ {
            return Err(Error::SequenceExhausted);
        }
        self.next += 1;
        Ok(self.next - 1)
    }
}

/// What a response is bound to: the request's kid and Partial IV (§7.1). The server gets it
/// from [`unprotect_request`], the client from [`protect_request`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestBinding {
    /// The request's kid: the client's Sender ID.
    pub kid: Vec<u8>,
    /// The request's Partial IV bytes.
    pub piv: Vec<u8>,
}

/// Whether option `n` is Class U (outer only) here.
fn class_u(n: u16) -> bool {
    matches!(n, opt::URI_HOST | opt::URI_PORT | opt::PROXY_SCHEME)
}

/// Refuse the options whose processing needs more than Class E / Class U.
fn refuse_unsupported(m: &Message) -> Result<(), Error> {
    for (n, _) in &m.options {
        match *n {
            opt::OBSERVE => return Err(Error::Unsupported("the Observe option with OSCORE".into())),
            opt::PROXY_URI => return Err(Error::Unsupported("the Proxy-Uri option with OSCORE".into())),
            _ => {}
        }
    }
    Ok(())
}

/// The AAD of §5.4 for a message bound to the request (`kid`, `piv`).
pub fn aad(ctx: &SecurityContext, kid: &[u8], piv: &[u8]) -> Vec<u8> {
    let mut ext = Vec::with_capacity(16 + kid.len() + piv.len());
    cbor::array(&mut ext, 5);
    cbor::int(&mut ext, 1); // oscore_version
    cbor::array(&mut ext, 1);
    cbor::int(&mut ext, ctx.alg().cose_id());
    cbor::bstr(&mut ext, kid);
    cbor::bstr(&mut ext, piv);
    cbor::bstr(&mut ext, b""); // Class I options: none defined
    let mut out = Vec::with_capacity(ext.len() + 16);
    cbor::array(&mut out, 3);
    cbor::tstr(&mut out, "Encrypt0");
    cbor::bstr(&mut out, b"");
    cbor::bstr(&mut out, &ext);
    out
}

/// Split `m` into the plaintext (code, Class E options, payload) and the Class U options.
fn split(m: &Message) -> Result<(Vec<u8>, Options), Error> {
    refuse_unsupported(m)?;
    if m.options.iter().any(|(n, _)| *n == opt::OSCORE) {
        return Err(Error::Malformed("the message to protect already has an OSCORE option".into()));
    }
    let (outer, inner): (Vec<_>, Vec<_>) = m.options.iter().cloned().partition(|(n, _)| class_u(*n));
    let mut plain = Vec::with_capacity(1 + m.payload.len() + 32);
    plain.push(m.code);
    coap::encode_options(&inner, &m.payload, &mut plain)?;
    Ok((plain, outer))
}

/// The outer message: the header fields of `m`, `code`, the Class U options, the OSCORE
/// option, and the ciphertext as payload.
fn outer(m: &Message, code: u8, mut options: Options, oscore: Vec<u8>, ct: Vec<u8>) -> Message {
    let at = options.partition_point(|(n, _)| *n <= opt::OSCORE);
    options.insert(at, (opt::OSCORE, oscore));
    Message { mtype: m.mtype, code, message_id: m.message_id, token: m.token.clone(), options, payload: ct }
}

/// Protect a request (§8.1) with the next sequence number of `seq`. Returns the OSCORE message
/// and the binding the response is verified against.
pub fn protect_request(
    ctx: &SecurityContext,
    seq: &mut impl SequenceSource,
    m: &Message,
) -> Result<(Message, RequestBinding), Error> {
    if !m.is_request() {
        return Err(Error::Malformed(format!("code 0x{:02x} is not a request method", m.code)));
    }
    let (mut buf, outer_opts) = split(m)?;
    let n = seq.next_seq()?;
    if n > MAX_SEQ {
        return Err(Error::SequenceExhausted);
    }
    let piv = piv_bytes(n);
    let kid = ctx.sender_id().to_vec();
    let nonce = ctx.nonce(&kid, &piv)?;
    ctx.alg().seal(ctx.sender_key(), &nonce, &aad(ctx, &kid, &piv), &mut buf)?;
    let kid_context = if ctx.send_kid_context { ctx.id_context().map(<[u8]>::to_vec) } else { None };
    let value = OscoreOption { piv: Some(piv.clone()), kid_context, kid: Some(kid.clone()) }.encode()?;
    Ok((outer(m, OUTER_REQUEST_CODE, outer_opts, value, buf), RequestBinding { kid, piv }))
}

/// The OSCORE option of a received message: exactly one, decoded.
fn oscore_option(m: &Message) -> Result<OscoreOption, Error> {
    let mut it = m.option_values(opt::OSCORE);
    let v = it.next().ok_or_else(|| Error::Malformed("no OSCORE option: the message is not protected".into()))?;
    if it.next().is_some() {
        return Err(Error::Malformed("more than one OSCORE option".into()));
    }
    OscoreOption::parse(v)
}

/// The decrypted message: the outer header and Class U options with the inner code, options
/// and payload. Outer Class E options are discarded (§8.2 step 7, §8.4 step 6).
fn merge(m: &Message, plain: &[u8]) -> Result<Message, Error> {
    let (&code, rest) = plain.split_first().ok_or_else(|| Error::Malformed("empty plaintext".into()))?;
    let (inner, payload) = coap::parse_options(rest)?;
    if inner.iter().any(|(n, _)| *n == opt::OSCORE) {
        return Err(Error::Malformed("an OSCORE option inside the protected message".into()));
    }
    let mut out = Message::new(m.mtype, code, m.message_id, &m.token);
    for (n, v) in m.options.iter().filter(|(n, _)| class_u(*n)).chain(inner.iter()) {
        out.add_option(*n, v);
    }
    out.payload = payload;
    refuse_unsupported(&out)?;
    Ok(out)
}

/// Verify a request (§8.2) against the one context `ctx` and its replay window: the kid (and
/// 'kid context', if sent) must name `ctx`, the Partial IV must be new to `window`, the tag
/// must verify; only then is the window updated. Returns the decrypted request and its binding.
pub fn unprotect_request(
    ctx: &SecurityContext,
    window: &mut ReplayWindow,
    bytes: &[u8],
) -> Result<(Message, RequestBinding), Error> {
    let m = Message::parse(bytes)?;
    if !m.is_request() {
        return Err(Error::Malformed(format!("code 0x{:02x} is not a request method", m.code)));
    }
    let o = oscore_option(&m)?;
    let (Some(piv), Some(kid)) = (o.piv, o.kid) else {
        return Err(Error::Malformed("a request's OSCORE option must carry a Partial IV and a kid".into()));
    };
    if kid != ctx.recipient_id() {
        return Err(Error::ContextNotFound);
    }
    if let Some(c) = &o.kid_context {
        if ctx.id_context() != Some(c.as_slice()) {
            return Err(Error::ContextNotFound);
        }
    }
    let seq = piv_value(&piv)?;
    window.check(seq)?;
    if m.payload.is_empty() {
        return Err(Error::Malformed("an OSCORE request with no ciphertext".into()));
    }
    let nonce = ctx.nonce(&kid, &piv)?;
    let mut buf = m.payload.clone();
    ctx.alg().open(ctx.recipient_key(), &nonce, &aad(ctx, &kid, &piv), &mut buf)?;
    let plain = merge(&m, &buf)?;
    window.accept(seq)?;
    Ok((plain, RequestBinding { kid, piv }))
}

/// Protect a response (§8.3) to the request `req`. With `seq`, the response carries its own
/// Partial IV (a new nonce from the server's Sender ID); without, it reuses the request's nonce
/// under the server's Sender Key, which only a first response to each request may do.
pub fn protect_response(
    ctx: &SecurityContext,
    req: &RequestBinding,
    m: &Message,
    seq: Option<&mut dyn SequenceSource>,
) -> Result<Message, Error> {
    if m.code >> 5 < 2 {
        return Err(Error::Malformed(format!("code 0x{:02x} is not a response code", m.code)));
    }
    let (mut buf, outer_opts) = split(m)?;
    let (nonce, piv) = match seq {
        Some(s) => {
            let n = s.next_seq()?;
            if n > MAX_SEQ {
                return Err(Error::SequenceExhausted);
            }
            let piv = piv_bytes(n);
            (ctx.nonce(ctx.sender_id(), &piv)?, Some(piv))
        }
        None => (ctx.nonce(&req.kid, &req.piv)?, None),
    };
    ctx.alg().seal(ctx.sender_key(), &nonce, &aad(ctx, &req.kid, &req.piv), &mut buf)?;
    let value = OscoreOption { piv, kid_context: None, kid: None }.encode()?;
    Ok(outer(m, OUTER_RESPONSE_CODE, outer_opts, value, buf))
}

/// Verify a response (§8.4) to the request `req` the client sent with `ctx`.
pub fn unprotect_response(ctx: &SecurityContext, req: &RequestBinding, bytes: &[u8]) -> Result<Message, Error> {
    let m = Message::parse(bytes)?;
    if m.code >> 5 < 2 {
        return Err(Error::Malformed(format!("code 0x{:02x} is not a response code", m.code)));
    }
    let o = oscore_option(&m)?;
    if let Some(k) = &o.kid {
        if k != ctx.recipient_id() {
            return Err(Error::ContextNotFound);
        }
    }
    let nonce = match &o.piv {
        Some(p) => {
            piv_value(p)?;
            ctx.nonce(ctx.recipient_id(), p)?
        }
        None => ctx.nonce(&req.kid, &req.piv)?,
    };
    if m.payload.is_empty() {
        return Err(Error::Malformed("an OSCORE response with no ciphertext".into()));
    }
    let mut buf = m.payload.clone();
    ctx.alg().open(ctx.recipient_key(), &nonce, &aad(ctx, &req.kid, &req.piv), &mut buf)?;
    merge(&m, &buf)
}
