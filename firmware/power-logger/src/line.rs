//! One `LWCP` line: body, then ` *` and the CRC-32 (zlib) of the body in 8 lower-case hex
//! digits, then CRLF (docs/power.md, "Line formats").
use core::fmt::{self, Write};

/// Longest line: a header with a 24-character pin name is under 160 bytes.
const CAP: usize = 192;
/// ` *` + 8 hex digits + CRLF.
const TRAILER: usize = 12;

/// CRC-32 as zlib's `crc32` (reflected polynomial EDB88320h, initial and final complement).
pub fn crc32(data: &[u8]) -> u32 {
    !data.iter().fold(!0u32, |c, &b| TABLE[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8))
}

const TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// A framed line, built with `write!` and closed by [`Line::finish`].
pub struct Line {
    buf: [u8; CAP],
    len: usize,
    done: bool,
}

impl Line {
    pub(crate) fn new() -> Self {
        Line { buf: [0; CAP], len: 0, done: false }
    }

    /// Start a line of this type (`H`, `P`, `T`, `I`).
    pub(crate) fn of(kind: char) -> Self {
        let mut l = Line::new();
        let _ = write!(l, "LWCP {kind}");
        l
    }

    /// Append the CRC and CRLF; the body is fixed from here on.
    pub(crate) fn finish(mut self) -> Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let crc = crc32(&self.buf[..self.len]);
        let mut t = [b' ', b'*', 0, 0, 0, 0, 0, 0, 0, 0, b'\r', b'\n'];
        for (i, d) in t[2..10].iter_mut().enumerate() {
            *d = HEX[(crc >> (28 - 4 * i)) as usize & 15];
        }
        self.buf[self.len..self.len + TRAILER].copy_from_slice(&t);
        self.len += TRAILER;
        self.done = true;
        self
    }

    /// The bytes to send.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // Room for the trailer is kept; nothing is appended after it.
        let room = if self.done { 0 } else { CAP - TRAILER - self.len };
        if s.len() > room {
            return Err(fmt::Error);
        }
        self.buf[self.len..self.len + s.len()].copy_from_slice(s.as_bytes());
        self.len += s.len();
        Ok(())
    }
}
