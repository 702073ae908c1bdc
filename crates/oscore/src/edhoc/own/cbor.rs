//! The CBOR this EDHOC reads from the wire (RFC 8949, deterministic encoding as RFC 9528 §3.1
//! requires): a bounded reader that refuses indefinite lengths, non-shortest heads, lengths
//! past the end of the input and nesting deeper than [`MAX_DEPTH`]; and the encodings of
//! connection identifiers (§3.3.2) and of compact ID_CRED_x (§3.5.3). Encoding otherwise goes
//! through [`crate::cbor`].
use alloc::vec::Vec;

use crate::cbor;

/// The deepest nesting of arrays and maps read (a CCS's COSE_Key sits at depth 2).
pub const MAX_DEPTH: u8 = 8;
/// The longest connection identifier accepted: OSCORE uses it as a Sender ID, which has at
/// most 7 bytes with AES-CCM's 13-byte nonce (RFC 8613 §3.3).
pub const MAX_ID: usize = 7;

/// Why CBOR input is refused (a short phrase for the caller's one-line error).
pub type Refusal = &'static str;

/// A data item's head: its major type and argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// The major type, 0 to 7.
    pub major: u8,
    /// The argument (a value, a length or a count); for major type 7, the simple value.
    pub arg: u64,
    /// The initial byte's additional information (0..=27).
    pub info: u8,
}

/// A cursor over untrusted bytes; nothing it returns reaches past the input.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, at: 0 }
    }
    /// Whether all input is read.
    pub fn is_empty(&self) -> bool {
        self.at >= self.buf.len()
    }
    /// The offset of the next byte.
    pub fn position(&self) -> usize {
        self.at
    }
    /// The input from `from` to the current position (the encoding of what was read since).
    pub fn since(&self, from: usize) -> &'a [u8] {
        self.buf.get(from..self.at).unwrap_or(&[])
    }
    /// The initial byte of the next item, without consuming it.
    pub fn peek(&self) -> Option<u8> {
        self.buf.get(self.at).copied()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Refusal> {
        let end = self.at.checked_add(n).ok_or("length past the end")?;
        let s = self.buf.get(self.at..end).ok_or("truncated")?;
        self.at = end;
        Ok(s)
    }

    /// Read a head, refusing indefinite lengths, reserved values and non-shortest arguments.
    pub fn head(&mut self) -> Result<Head, Refusal> {
        let b = self.take(1)?[0];
        let (major, info) = (b >> 5, b & 0x1f);
        let arg = match info {
            0..=23 => u64::from(info),
            24..=27 => {
                let n = 1usize << (info - 24);
                let mut v = 0u64;
                for x in self.take(n)? {
                    v = (v << 8) | u64::from(*x);
                }
                // Deterministic encoding: the shortest head (and simple values below 32 never
                // take the one-byte extension).
                let min = match info {
                    24 if major == 7 => 32,
                    24 => 24,
                    25 => 0x100,
                    26 => 0x1_0000,
                    _ => 0x1_0000_0000,
                };
                if v < min {
                    return Err("not the shortest encoding (non-deterministic CBOR)");
                }
                v
            }
            28..=30 => return Err("reserved additional information"),
            _ => return Err("indefinite length (non-deterministic CBOR)"),
        };
        Ok(Head { major, arg, info })
    }

    /// Read a byte string.
    pub fn bytes(&mut self) -> Result<&'a [u8], Refusal> {
        let h = self.head()?;
        if h.major != 2 {
            return Err("a byte string expected");
        }
        let n = usize::try_from(h.arg).map_err(|_| "length past the end")?;
        self.take(n)
    }

    /// Read an integer (major type 0 or 1) that fits in an i64.
    pub fn int(&mut self) -> Result<i64, Refusal> {
        let h = self.head()?;
        let v = i64::try_from(h.arg).map_err(|_| "integer out of range")?;
        match h.major {
            0 => Ok(v),
            1 => Ok(-1 - v),
            _ => Err("an integer expected"),
        }
    }

    /// Read the head of an array or a map (`major` 4 or 5) and return its count, which cannot
    /// exceed the bytes left (every item takes at least one).
    pub fn container(&mut self, major: u8) -> Result<usize, Refusal> {
        let h = self.head()?;
        if h.major != major {
            return Err(if major == 4 { "an array expected" } else { "a map expected" });
        }
        let n = usize::try_from(h.arg).map_err(|_| "count past the end")?;
        let left = self.buf.len().saturating_sub(self.at);
        let per = if major == 5 { 2 } else { 1 };
        if n.checked_mul(per).is_none_or(|need| need > left) {
            return Err("count past the end");
        }
        Ok(n)
    }

    /// Skip one whole item of any type, nested at most `depth` more levels.
    pub fn skip(&mut self, depth: u8) -> Result<(), Refusal> {
        let h = self.head()?;
        match h.major {
            0 | 1 => Ok(()),
            2 | 3 => {
                let n = usize::try_from(h.arg).map_err(|_| "length past the end")?;
                self.take(n).map(|_| ())
            }
            4 | 5 => {
                let depth = depth.checked_sub(1).ok_or("nested too deep")?;
                let per: u64 = if h.major == 5 { 2 } else { 1 };
                let n = h.arg.checked_mul(per).ok_or("count past the end")?;
                let left = (self.buf.len().saturating_sub(self.at)) as u64;
                if n > left {
                    return Err("count past the end");
                }
                for _ in 0..n {
                    self.skip(depth)?;
                }
                Ok(())
            }
            6 => {
                let depth = depth.checked_sub(1).ok_or("nested too deep")?;
                self.skip(depth)
            }
            _ => match h.info {
                20..=22 | 24 => Ok(()),
                _ => Err("floats and other simple values are not used by EDHOC"),
            },
        }
    }

    /// Skip one item and return its encoding.
    pub fn item(&mut self, depth: u8) -> Result<&'a [u8], Refusal> {
        let from = self.at;
        self.skip(depth)?;
        Ok(self.since(from))
    }
}

/// Whether the one-byte identifier `b` is the encoding of an integer -24..=23, and so travels
/// as that integer (RFC 9528 §3.3.2).
pub fn is_compact(b: u8) -> bool {
    matches!(b, 0x00..=0x17 | 0x20..=0x37)
}

/// Append a connection identifier (or a kid): the one-byte integer form when it has one, else a
/// byte string.
pub fn put_id(out: &mut Vec<u8>, raw: &[u8]) {
    match raw {
        [b] if is_compact(*b) => out.push(*b),
        _ => cbor::bstr(out, raw),
    }
}

/// Read a connection identifier: an integer -24..=23 (its raw form is its one-byte encoding)
/// or a byte string of at most [`MAX_ID`] bytes that has no integer form.
pub fn read_id(r: &mut Reader<'_>) -> Result<Vec<u8>, Refusal> {
    match r.peek() {
        Some(b) if is_compact(b) => {
            r.head()?;
            Ok(alloc::vec![b])
        }
        Some(b) if b >> 5 == 2 => {
            let v = r.bytes()?;
            if let [b] = v {
                if is_compact(*b) {
                    return Err("identifier as a byte string where its integer form is required");
                }
            }
            if v.len() > MAX_ID {
                return Err("identifier longer than an OSCORE ID can be (7 bytes)");
            }
            Ok(v.to_vec())
        }
        Some(_) => Err("identifier is neither an integer -24..23 nor a byte string"),
        None => Err("truncated"),
    }
}

/// The full ID_CRED_x `{4: kid}` (a map with one 'kid' parameter) of a kid.
pub fn id_cred_of_kid(kid: &[u8]) -> Vec<u8> {
    let mut out = alloc::vec![0xa1, 0x04];
    cbor::bstr(&mut out, kid);
    out
}

/// Append ID_CRED_x as PLAINTEXT_2/3 carry it (RFC 9528 §3.5.3.2): a map holding only a kid
/// travels as the kid (in its integer form when it has one), any other map as is.
pub fn put_id_cred(out: &mut Vec<u8>, id_cred: &[u8]) {
    if let [0xa1, 0x04, rest @ ..] = id_cred {
        let mut r = Reader::new(rest);
        if let Ok(kid) = r.bytes() {
            if r.is_empty() {
                put_id(out, kid);
                return;
            }
        }
    }
    out.extend_from_slice(id_cred);
}

/// Read ID_CRED_x as PLAINTEXT_2/3 carry it and return its full form (the map).
pub fn read_id_cred(r: &mut Reader<'_>) -> Result<Vec<u8>, Refusal> {
    match r.peek() {
        Some(b) if is_compact(b) => {
            r.head()?;
            Ok(id_cred_of_kid(&[b]))
        }
        Some(b) if b >> 5 == 2 => {
            let kid = r.bytes()?;
            if let [b] = kid {
                if is_compact(*b) {
                    return Err("kid as a byte string where its integer form is required");
                }
            }
            Ok(id_cred_of_kid(kid))
        }
        Some(b) if b >> 5 == 5 => {
            let map = r.item(MAX_DEPTH)?;
            if map.starts_with(&[0xa1, 0x04]) {
                return Err("a map with only a kid where the compact form is required");
            }
            Ok(map.to_vec())
        }
        Some(_) => Err("ID_CRED is neither a map, a kid byte string nor a kid integer"),
        None => Err("truncated"),
    }
}

/// Read the EAD items left in a plaintext or message_1 (RFC 9528 §3.8): a label, then an
/// optional byte string. Critical items (negative labels) are refused, since none is
/// supported; the others are ignored, as §3.8 allows.
pub fn skip_ead(r: &mut Reader<'_>) -> Result<(), Refusal> {
    while !r.is_empty() {
        let label = r.int().map_err(|_| "trailing bytes that are not EAD items")?;
        if label < 0 {
            return Err("a critical EAD item, which is not supported");
        }
        if r.peek().is_some_and(|b| b >> 5 == 2) {
            r.bytes()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_travel_in_their_integer_form_when_they_have_one() {
        // RFC 9528 §3.3.2: h'0d' is the integer 13, h'2d' the integer -14; h'18' has no one-byte
        // integer form and travels as the byte string 0x4118 (RFC 9529 §2's C_R).
        for (raw, wire) in [(&[0x0d][..], &[0x0d][..]), (&[0x2d], &[0x2d]), (&[0x18], &[0x41, 0x18]), (&[], &[0x40])] {
            let mut out = Vec::new();
            put_id(&mut out, raw);
            assert_eq!(out, wire);
            let mut r = Reader::new(wire);
            assert_eq!(read_id(&mut r).unwrap(), raw);
            assert!(r.is_empty());
        }
        assert!(read_id(&mut Reader::new(&[0x41, 0x0d])).is_err());
        assert!(read_id(&mut Reader::new(&[0x18, 0x30])).is_err());
        assert!(read_id(&mut Reader::new(&[0x48, 1, 2, 3, 4, 5, 6, 7, 8])).is_err());
    }

    #[test]
    fn heads_are_bounded_and_deterministic() {
        assert_eq!(Reader::new(&[0x18, 0x05]).head(), Err("not the shortest encoding (non-deterministic CBOR)"));
        assert!(Reader::new(&[0x5f]).head().is_err());
        assert!(Reader::new(&[0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).bytes().is_err());
        assert!(Reader::new(&[0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).skip(8).is_err());
        let deep = [0x81u8; 20];
        assert_eq!(Reader::new(&deep).skip(MAX_DEPTH), Err("nested too deep"));
    }

    #[test]
    fn id_cred_compact_forms() {
        // RFC 9529 §3: ID_CRED_R = {4: h'32'} travels as 0x32; §2's x5t map as itself.
        let mut out = Vec::new();
        put_id_cred(&mut out, &[0xa1, 0x04, 0x41, 0x32]);
        assert_eq!(out, [0x32]);
        assert_eq!(read_id_cred(&mut Reader::new(&[0x32])).unwrap(), [0xa1, 0x04, 0x41, 0x32]);
        let x5t = [0xa1, 0x18, 0x22, 0x82, 0x2e, 0x48, 0x79, 0xf2, 0xa4, 0x1b, 0x51, 0x0c, 0x1f, 0x9b];
        out.clear();
        put_id_cred(&mut out, &x5t);
        assert_eq!(out, x5t);
        assert_eq!(read_id_cred(&mut Reader::new(&x5t)).unwrap(), x5t);
        assert!(read_id_cred(&mut Reader::new(&[0xa1, 0x04, 0x41, 0x32])).is_err());
    }
}
