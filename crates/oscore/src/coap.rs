//! A bounded CoAP message encoder and parser (RFC 7252 §3, UDP framing): what OSCORE needs.
//!
//! The parser reads at most [`MAX_MESSAGE`] bytes, allocates at most their size, and refuses
//! what RFC 7252 calls a message format error (a token length of 9-15, an option delta or
//! length nibble of 15, an option number above 65535, a payload marker with no payload).
use alloc::format;
use alloc::vec::Vec;

use crate::Error;

/// The largest message accepted: a UDP datagram's payload.
pub const MAX_MESSAGE: usize = 65_507;

/// CoAP option numbers OSCORE treats specially.
pub mod opt {
    /// Uri-Host (Class U).
    pub const URI_HOST: u16 = 3;
    /// Observe (Class E and U: not handled here yet).
    pub const OBSERVE: u16 = 6;
    /// Uri-Port (Class U).
    pub const URI_PORT: u16 = 7;
    /// OSCORE (RFC 8613 §2).
    pub const OSCORE: u16 = 9;
    /// Uri-Path (Class E).
    pub const URI_PATH: u16 = 11;
    /// Content-Format (Class E).
    pub const CONTENT_FORMAT: u16 = 12;
    /// Proxy-Uri (Class U after decomposition: not handled here yet).
    pub const PROXY_URI: u16 = 35;
    /// Proxy-Scheme (Class U).
    pub const PROXY_SCHEME: u16 = 39;
}

/// Message types (RFC 7252 §3).
pub mod mtype {
    /// Confirmable.
    pub const CON: u8 = 0;
    /// Non-confirmable.
    pub const NON: u8 = 1;
    /// Acknowledgement.
    pub const ACK: u8 = 2;
    /// Reset.
    pub const RST: u8 = 3;
}

/// Options as (number, value), ordered by number.
pub type Options = Vec<(u16, Vec<u8>)>;

/// A CoAP message. Options are kept in the order of their numbers (stable for repeats), as
/// the encoding requires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Type: [`mtype`].
    pub mtype: u8,
    /// Code: class in the top 3 bits, detail in the low 5 (0.02 POST = 0x02, 2.04 = 0x44).
    pub code: u8,
    /// Message ID.
    pub message_id: u16,
    /// Token, 0 to 8 bytes.
    pub token: Vec<u8>,
    /// Options (number, value).
    pub options: Options,
    /// Payload.
    pub payload: Vec<u8>,
}

impl Message {
    /// A message with no options and no payload.
    pub fn new(mtype: u8, code: u8, message_id: u16, token: &[u8]) -> Message {
        Message { mtype, code, message_id, token: token.to_vec(), options: Vec::new(), payload: Vec::new() }
    }

    /// Add an option, keeping the options ordered by number (after any with the same number).
    pub fn add_option(&mut self, number: u16, value: &[u8]) {
        let at = self.options.partition_point(|(n, _)| *n <= number);
        self.options.insert(at, (number, value.to_vec()));
    }

    /// The values of option `number`.
    pub fn option_values(&self, number: u16) -> impl Iterator<Item = &[u8]> {
        self.options.iter().filter(move |(n, _)| *n == number).map(|(_, v)| v.as_slice())
    }

    /// Whether the code is a request method (class 0, detail 1-31).
    pub fn is_request(&self) -> bool {
        self.code >> 5 == 0 && self.code != 0
    }

    /// Encode the message (RFC 7252 §3).
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        if self.token.len() > 8 {
            return Err(Error::Malformed(format!("token of {} bytes (at most 8)", self.token.len())));
        }
        if self.mtype > 3 {
            return Err(Error::Malformed(format!("message type {}", self.mtype)));
        }
        let mut out = Vec::with_capacity(4 + self.token.len() + self.payload.len() + 16);
        out.push(0x40 | self.mtype << 4 | self.token.len() as u8);
        out.push(self.code);
        out.extend_from_slice(&self.message_id.to_be_bytes());
        out.extend_from_slice(&self.token);
        encode_options(&self.options, &self.payload, &mut out)?;
        Ok(out)
    }

    /// Parse a message; anything malformed is refused with the reason.
    pub fn parse(b: &[u8]) -> Result<Message, Error> {
        if b.len() > MAX_MESSAGE {
            return Err(Error::Malformed(format!("{} bytes, more than a datagram holds", b.len())));
        }
        if b.len() < 4 {
            return Err(Error::Malformed(format!("{} bytes, shorter than the 4-byte header", b.len())));
        }
        if b[0] >> 6 != 1 {
            return Err(Error::Malformed(format!("CoAP version {}", b[0] >> 6)));
        }
        let tkl = usize::from(b[0] & 0x0f);
        if tkl > 8 {
            return Err(Error::Malformed(format!("token length {tkl} (9-15 are reserved)")));
        }
        let token = b.get(4..4 + tkl).ok_or_else(|| Error::Malformed("message ends inside the token".into()))?;
        let (options, payload) = parse_options(&b[4 + tkl..])?;
        Ok(Message {
            mtype: b[0] >> 4 & 3,
            code: b[1],
            message_id: u16::from_be_bytes([b[2], b[3]]),
            token: token.to_vec(),
            options,
            payload,
        })
    }
}

/// The extended encoding of an option delta or length: (nibble, extension bytes).
fn nibble(v: usize) -> (u8, Vec<u8>) {
    match v {
        0..=12 => (v as u8, Vec::new()),
        13..=268 => (13, alloc::vec![(v - 13) as u8]),
        _ => (14, ((v - 269) as u16).to_be_bytes().to_vec()),
    }
}

/// Append `options` (sorted by number) and, if not empty, the payload marker and `payload`.
pub fn encode_options(options: &[(u16, Vec<u8>)], payload: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
    let mut last = 0u16;
    for (n, v) in options {
        if *n < last {
            return Err(Error::Malformed(format!("option {n} after option {last}: options must be in order")));
        }
        if v.len() > 65_535 + 269 {
            return Err(Error::Malformed(format!("option {n} of {} bytes", v.len())));
        }
        let (dn, dx) = nibble(usize::from(n - last));
        let (ln, lx) = nibble(v.len());
        out.push(dn << 4 | ln);
        out.extend_from_slice(&dx);
        out.extend_from_slice(&lx);
        out.extend_from_slice(v);
        last = *n;
    }
    if !payload.is_empty() {
        out.push(0xff);
        out.extend_from_slice(payload);
    }
    Ok(())
}

/// Read an extended option delta or length for `nibble`, advancing `i`.
fn extended(b: &[u8], i: &mut usize, nib: u8, what: &str) -> Result<usize, Error> {
    let short = || Error::Malformed(format!("message ends inside an option {what}"));
    match nib {
        0..=12 => Ok(usize::from(nib)),
        13 => {
            let v = *b.get(*i).ok_or_else(short)?;
            *i += 1;
            Ok(usize::from(v) + 13)
        }
        14 => {
            let v = b.get(*i..*i + 2).ok_or_else(short)?;
            *i += 2;
            Ok(usize::from(u16::from_be_bytes([v[0], v[1]])) + 269)
        }
        _ => Err(Error::Malformed(format!("option {what} nibble 15 is reserved"))),
    }
}

/// Parse options and payload (what follows the token of a message, or the code byte of an
/// OSCORE plaintext).
pub fn parse_options(b: &[u8]) -> Result<(Options, Vec<u8>), Error> {
    let mut options = Vec::new();
    let mut number = 0usize;
    let mut i = 0;
    while i < b.len() {
        let first = b[i];
        i += 1;
        if first == 0xff {
            if i == b.len() {
                return Err(Error::Malformed("payload marker followed by no payload".into()));
            }
            return Ok((options, b[i..].to_vec()));
        }
        let delta = extended(b, &mut i, first >> 4, "delta")?;
        let len = extended(b, &mut i, first & 0x0f, "length")?;
        number += delta;
        let n = u16::try_from(number).map_err(|_| Error::Malformed(format!("option number {number} above 65535")))?;
        let v = b.get(i..i + len).ok_or_else(|| Error::Malformed(format!("option {n} runs past the message end")))?;
        options.push((n, v.to_vec()));
        i += len;
    }
    Ok((options, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn rfc_8613_c4_request_parses_and_re_encodes() {
        // The unprotected request of RFC 8613 Appendix C.4: CON GET, MID 0x5d1f, token 0x3974,
        // Uri-Host "localhost", Uri-Path "tv1".
        let b = hex("44015d1f00003974396c6f63616c686f737483747631");
        let m = Message::parse(&b).unwrap();
        assert_eq!((m.mtype, m.code, m.message_id), (mtype::CON, 0x01, 0x5d1f));
        assert_eq!(m.token, hex("00003974"));
        assert_eq!(m.options, vec![(3, b"localhost".to_vec()), (11, b"tv1".to_vec())]);
        assert_eq!(m.encode().unwrap(), b);
    }

    #[test]
    fn extended_deltas_and_lengths_round_trip() {
        let mut m = Message::new(mtype::NON, 0x02, 7, &[]);
        m.add_option(2000, &[0xaa; 300]);
        m.add_option(14, &[1; 13]);
        m.add_option(1, &[]);
        m.payload = vec![9; 3];
        let b = m.encode().unwrap();
        // Hand-computed heads: delta 1 len 0; delta 13 (13+0) len 13 (13+0); delta 1986 (14:
        // 269+1717) len 300 (14: 269+31).
        assert_eq!(&b[4..7], [0x10, 0xdd, 0x00]);
        assert_eq!(b[7], 0x00);
        assert_eq!(&b[21..26], [0xee, 0x06, 0xb5, 0x00, 0x1f]);
        assert_eq!(Message::parse(&b).unwrap(), m);
    }

    #[test]
    fn malformed_messages_are_refused_by_reason() {
        let e = |b: &[u8]| Message::parse(b).unwrap_err().to_string();
        assert!(e(&[0x40, 1, 0]).contains("shorter than"));
        assert!(e(&[0x80, 1, 0, 0]).contains("version 2"));
        assert!(e(&[0x49, 1, 0, 0]).contains("token length 9"));
        assert!(e(&[0x42, 1, 0, 0, 1]).contains("inside the token"));
        assert!(e(&[0x40, 1, 0, 0, 0xff]).contains("no payload"));
        assert!(e(&[0x40, 1, 0, 0, 0xf0]).contains("nibble 15"));
        assert!(e(&[0x40, 1, 0, 0, 0x0f]).contains("nibble 15"));
        assert!(e(&[0x40, 1, 0, 0, 0x13, 1]).contains("past the message end"));
        assert!(e(&[0x40, 1, 0, 0, 0xd0]).contains("inside an option delta"));
        // Two maximal deltas: 65804 + 65804 > 65535.
        assert!(e(&[0x40, 1, 0, 0, 0xe0, 0xff, 0xff, 0xe0, 0xff, 0xff]).contains("above 65535"));
    }
}
