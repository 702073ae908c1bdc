//! The OSCORE option value (RFC 8613 §6.1): flag byte `0 0 0 h k n n n`, then the Partial IV
//! (n bytes), then, if h, the 'kid context' with its one-byte length s, then, if k, the kid
//! (the rest of the value). A value with all flags zero and nothing else is sent empty.
use alloc::format;
use alloc::vec::Vec;

use crate::Error;

/// The decoded fields of an OSCORE option value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OscoreOption {
    /// The Partial IV bytes (absent: none sent).
    pub piv: Option<Vec<u8>>,
    /// The 'kid context' (absent: none sent).
    pub kid_context: Option<Vec<u8>>,
    /// The kid (absent: none sent; present and empty is a valid, empty kid).
    pub kid: Option<Vec<u8>>,
}

impl OscoreOption {
    /// Encode the option value.
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        let piv = self.piv.as_deref().unwrap_or_default();
        if piv.len() > 5 || self.piv.as_ref().is_some_and(Vec::is_empty) {
            return Err(Error::Malformed(format!("Partial IV of {} bytes (1 to 5)", piv.len())));
        }
        let mut flags = piv.len() as u8;
        if self.kid.is_some() {
            flags |= 0x08;
        }
        if self.kid_context.is_some() {
            flags |= 0x10;
        }
        if flags == 0 {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(1 + piv.len() + 16);
        out.push(flags);
        out.extend_from_slice(piv);
        if let Some(c) = &self.kid_context {
            let s = u8::try_from(c.len())
                .map_err(|_| Error::Malformed(format!("kid context of {} bytes (at most 255)", c.len())))?;
            out.push(s);
            out.extend_from_slice(c);
        }
        if let Some(k) = &self.kid {
            out.extend_from_slice(k);
        }
        Ok(out)
    }

    /// Decode an option value; reserved flag bits, a Partial IV length of 6 or 7, a value that
    /// ends early, and bytes left over with no kid flag are refused (§6.1: 4.02 Bad Option).
    pub fn parse(v: &[u8]) -> Result<OscoreOption, Error> {
        let Some(&flags) = v.first() else {
            return Ok(OscoreOption::default());
        };
        if flags & 0xe0 != 0 {
            // Bit 0 (0x80) is the extension flag of RFC 8613 §6.1 (used by later documents);
            // no extension is understood here.
            return Err(Error::Malformed(format!("OSCORE option flag bits 0x{:02x} are reserved", flags & 0xe0)));
        }
        let n = usize::from(flags & 0x07);
        if n > 5 {
            return Err(Error::Malformed(format!("OSCORE option Partial IV length {n} is reserved")));
        }
        let short = || Error::Malformed("OSCORE option value ends early".into());
        let mut i = 1;
        let piv = if n > 0 {
            let p = v.get(i..i + n).ok_or_else(short)?.to_vec();
            i += n;
            Some(p)
        } else {
            None
        };
        let kid_context = if flags & 0x10 != 0 {
            let s = usize::from(*v.get(i).ok_or_else(short)?);
            let c = v.get(i + 1..i + 1 + s).ok_or_else(short)?.to_vec();
            i += 1 + s;
            Some(c)
        } else {
            None
        };
        let kid = if flags & 0x08 != 0 {
            Some(v[i..].to_vec())
        } else if i < v.len() {
            return Err(Error::Malformed(format!("OSCORE option has {} bytes after its fields", v.len() - i)));
        } else {
            None
        };
        if flags == 0 {
            // §6.1: a value with all flags zero is sent as the empty value.
            return Err(Error::Malformed("OSCORE option value 0x00 must be sent empty".into()));
        }
        Ok(OscoreOption { piv, kid_context, kid })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_of_rfc_8613_appendix_c_decode() {
        // C.4: 0x0914 = k, n=1, PIV 0x14, empty kid.
        let o = OscoreOption::parse(&[0x09, 0x14]).unwrap();
        assert_eq!(o, OscoreOption { piv: Some(vec![0x14]), kid_context: None, kid: Some(vec![]) });
        // C.6: 0x19 14 08 37cbf3210017a2d3 = h, k, n=1, 8-byte kid context, empty kid.
        let v = [0x19, 0x14, 0x08, 0x37, 0xcb, 0xf3, 0x21, 0x00, 0x17, 0xa2, 0xd3];
        let o = OscoreOption::parse(&v).unwrap();
        assert_eq!(o.kid_context.as_deref(), Some(&v[3..]));
        assert_eq!(o.encode().unwrap(), v);
        // C.7: empty value, nothing present.
        assert_eq!(OscoreOption::parse(&[]).unwrap(), OscoreOption::default());
        assert!(OscoreOption::default().encode().unwrap().is_empty());
    }

    #[test]
    fn malformed_values_are_refused_by_reason() {
        let e = |v: &[u8]| OscoreOption::parse(v).unwrap_err().to_string();
        assert!(e(&[0x80]).contains("reserved"));
        assert!(e(&[0x26]).contains("reserved"), "bit 0x20 is reserved");
        assert!(e(&[0x06, 1, 2, 3, 4, 5, 6]).contains("length 6"));
        assert!(e(&[0x02, 1]).contains("ends early"));
        assert!(e(&[0x11]).contains("ends early"));
        assert!(e(&[0x10, 0x03, 1, 2]).contains("ends early"));
        assert!(e(&[0x01, 1, 7]).contains("after its fields"));
        assert!(e(&[0x00]).contains("sent empty"));
    }
}
