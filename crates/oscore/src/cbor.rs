//! The few CBOR items OSCORE encodes (RFC 8949, preferred serialisation): arrays, byte and
//! text strings, integers and null. Only encoding: OSCORE never parses CBOR from the wire.
use alloc::vec::Vec;

/// Append the head of an item: major type `major` (0..7) with argument `arg`, shortest form.
pub fn head(out: &mut Vec<u8>, major: u8, arg: u64) {
    let m = major << 5;
    match arg {
        0..=23 => out.push(m | arg as u8),
        24..=0xff => out.extend_from_slice(&[m | 24, arg as u8]),
        0x100..=0xffff => {
            out.push(m | 25);
            out.extend_from_slice(&(arg as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(m | 26);
            out.extend_from_slice(&(arg as u32).to_be_bytes());
        }
        _ => {
            out.push(m | 27);
            out.extend_from_slice(&arg.to_be_bytes());
        }
    }
}

/// Append an integer (major type 0 or 1).
pub fn int(out: &mut Vec<u8>, v: i64) {
    if v >= 0 {
        head(out, 0, v as u64);
    } else {
        // -1 - v never overflows for a negative i64.
        head(out, 1, (-1 - v) as u64);
    }
}

/// Append a byte string.
pub fn bstr(out: &mut Vec<u8>, b: &[u8]) {
    head(out, 2, b.len() as u64);
    out.extend_from_slice(b);
}

/// Append a text string.
pub fn tstr(out: &mut Vec<u8>, s: &str) {
    head(out, 3, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// Append the head of an array of `n` items.
pub fn array(out: &mut Vec<u8>, n: u64) {
    head(out, 4, n);
}

/// Append null.
pub fn null(out: &mut Vec<u8>) {
    out.push(0xf6);
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected encodings from RFC 8949 Appendix A.
    #[test]
    fn encodings_match_rfc_8949_appendix_a() {
        let enc = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut v = Vec::new();
            f(&mut v);
            v
        };
        assert_eq!(enc(&|o| int(o, 0)), [0x00]);
        assert_eq!(enc(&|o| int(o, 23)), [0x17]);
        assert_eq!(enc(&|o| int(o, 24)), [0x18, 0x18]);
        assert_eq!(enc(&|o| int(o, 1000)), [0x19, 0x03, 0xe8]);
        assert_eq!(enc(&|o| int(o, 1_000_000)), [0x1a, 0x00, 0x0f, 0x42, 0x40]);
        assert_eq!(enc(&|o| int(o, 1_000_000_000_000)), [0x1b, 0x00, 0x00, 0x00, 0xe8, 0xd4, 0xa5, 0x10, 0x00]);
        assert_eq!(enc(&|o| int(o, -1)), [0x20]);
        assert_eq!(enc(&|o| int(o, -1000)), [0x39, 0x03, 0xe7]);
        assert_eq!(enc(&|o| bstr(o, &[1, 2, 3, 4])), [0x44, 1, 2, 3, 4]);
        assert_eq!(enc(&|o| tstr(o, "IETF")), [0x64, 0x49, 0x45, 0x54, 0x46]);
        assert_eq!(enc(&|o| array(o, 3)), [0x83]);
        assert_eq!(enc(&null), [0xf6]);
    }
}
