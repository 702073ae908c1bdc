//! The Modbus/TCP ADU as it arrives on a socket: the 7-byte MBAP header, bounded, then its PDU.
//!
//! ```text
//! offset size field (Modbus Messaging on TCP/IP Implementation Guide v1.0b §3.1.3)
//! 0      2    transaction id
//! 2      2    protocol id    0 = Modbus
//! 4      2    length         bytes that follow: unit id (1) + PDU (1..=253), so 2..=254
//! 6      1    unit id
//! 7      n    PDU            function code + data
//! ```
//! The largest ADU is 7 + 253 = 260 bytes (Modbus Application Protocol v1.1b3 §4.1).
use tokio::io::{AsyncRead, AsyncReadExt};

/// MBAP header bytes.
pub const MBAP_LEN: usize = 7;
/// Largest PDU (function code + data).
pub const MAX_PDU: usize = 253;
/// Largest ADU on TCP.
pub const MAX_ADU: usize = MBAP_LEN + MAX_PDU;

/// Why bytes are not one Modbus/TCP ADU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AduError {
    /// The stream ended inside an ADU (`got` of `want` bytes).
    Truncated {
        /// Bytes read.
        got: usize,
        /// Bytes the ADU needs.
        want: usize,
    },
    /// The protocol id is not 0.
    Protocol(u16),
    /// The length field is outside 2..=254.
    Length(u16),
    /// A complete ADU followed by other bytes, or a length field that disagrees with the bytes.
    Size {
        /// The MBAP length field.
        field: u16,
        /// The bytes there are.
        bytes: usize,
    },
    /// The socket failed.
    Io(String),
}

impl std::fmt::Display for AduError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AduError::Truncated { got, want } => write!(f, "stream ended inside an ADU ({got} of {want} bytes)"),
            AduError::Protocol(p) => write!(f, "MBAP protocol id {p}, not 0 (Modbus)"),
            AduError::Length(l) => write!(
                f,
                "MBAP length field {l} is outside 2..=254 (unit id + a PDU of 1..=253 bytes; ADU at most {MAX_ADU} B)"
            ),
            AduError::Size { field, bytes } => {
                write!(f, "MBAP length field {field} does not match the {bytes} bytes after the first six")
            }
            AduError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Check the MBAP header at the start of `h` (at least 6 bytes); returns the ADU's whole length.
pub fn adu_len(h: &[u8]) -> Result<usize, AduError> {
    let protocol = u16::from_be_bytes([h[2], h[3]]);
    let length = u16::from_be_bytes([h[4], h[5]]);
    if protocol != 0 {
        return Err(AduError::Protocol(protocol));
    }
    if !(2..=(MAX_PDU as u16 + 1)).contains(&length) {
        return Err(AduError::Length(length));
    }
    Ok(6 + length as usize)
}

/// Check that `adu` is exactly one well-formed ADU (an ADU taken out of a frame).
pub fn check(adu: &[u8]) -> Result<(), AduError> {
    if adu.len() < MBAP_LEN {
        return Err(AduError::Truncated { got: adu.len(), want: MBAP_LEN });
    }
    let n = adu_len(adu)?;
    if n != adu.len() {
        return Err(AduError::Size { field: u16::from_be_bytes([adu[4], adu[5]]), bytes: adu.len() - 6 });
    }
    Ok(())
}

/// Read one ADU into `buf` (cleared first). `Ok(false)`: the stream ended cleanly before an ADU.
/// Never reads more than [`MAX_ADU`] bytes for one ADU.
pub async fn read_adu<R: AsyncRead + Unpin>(r: &mut R, buf: &mut Vec<u8>) -> Result<bool, AduError> {
    buf.clear();
    buf.resize(MBAP_LEN, 0);
    let got = read_full(r, &mut buf[..]).await?;
    if got == 0 {
        return Ok(false);
    }
    if got < MBAP_LEN {
        // A header cut short still says what it is when its first six bytes arrived.
        if got >= 6 {
            adu_len(buf)?;
        }
        return Err(AduError::Truncated { got, want: MBAP_LEN });
    }
    let n = adu_len(buf)?;
    buf.resize(n, 0);
    let more = read_full(r, &mut buf[MBAP_LEN..]).await?;
    if more < n - MBAP_LEN {
        return Err(AduError::Truncated { got: MBAP_LEN + more, want: n });
    }
    Ok(true)
}

/// Fill `buf` unless the stream ends first; returns the bytes read.
async fn read_full<R: AsyncRead + Unpin>(r: &mut R, buf: &mut [u8]) -> Result<usize, AduError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]).await {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(AduError::Io(e.to_string())),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<Option<Vec<u8>>, AduError> {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let mut r = bytes;
            let mut buf = Vec::new();
            Ok(read_adu(&mut r, &mut buf).await?.then_some(buf))
        })
    }

    /// MBAP header with the given length field, then `body` bytes.
    fn adu(length: u16, body: usize) -> Vec<u8> {
        let mut v = vec![0x00, 0x01, 0x00, 0x00];
        v.extend_from_slice(&length.to_be_bytes());
        v.extend(std::iter::repeat_n(0x11u8, body));
        v
    }

    /// A read-holding-registers request written out by hand from the Modbus specifications:
    /// transaction 1, protocol 0, length 6, unit 0x11, function 3, start 0x006B, quantity 3
    /// (Modbus Application Protocol v1.1b3 §6.3 example, in an MBAP header): 12 bytes.
    #[test]
    fn a_hand_written_request_is_one_adu() {
        let req = [0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x11, 0x03, 0x00, 0x6B, 0x00, 0x03];
        let mut two = req.to_vec();
        two.extend_from_slice(&req);
        assert_eq!(read(&two).unwrap().unwrap(), req, "reads exactly one ADU, not what follows");
        check(&req).unwrap();
    }

    /// Length field 0 and 1 leave no PDU; 254 is the largest (260 B ADU), 255 and above exceed
    /// it; a header cut short is truncated; an empty stream is a clean end.
    #[test]
    fn length_field_bounds() {
        assert_eq!(read(&adu(0, 0)), Err(AduError::Length(0)));
        assert_eq!(read(&adu(1, 1)), Err(AduError::Length(1)));
        assert_eq!(read(&adu(2, 2)).unwrap().unwrap().len(), 8);
        assert_eq!(read(&adu(254, 254)).unwrap().unwrap().len(), 260);
        assert_eq!(read(&adu(255, 255)), Err(AduError::Length(255)));
        assert_eq!(read(&adu(0xFFFF, 10)), Err(AduError::Length(0xFFFF)));
        assert_eq!(read(&adu(254, 100)), Err(AduError::Truncated { got: 106, want: 260 }));
        assert_eq!(read(&adu(6, 0)[..5]), Err(AduError::Truncated { got: 5, want: 7 }));
        assert_eq!(read(&adu(6, 0)), Err(AduError::Truncated { got: 6, want: 7 }));
        assert_eq!(read(&adu(300, 0)[..6]), Err(AduError::Length(300)), "a bad length is named even when cut short");
        assert_eq!(read(&[]), Ok(None));
        let mut p = adu(6, 6);
        p[3] = 1;
        assert_eq!(read(&p), Err(AduError::Protocol(1)));
        assert!(AduError::Length(255).to_string().contains("outside 2..=254"));
    }

    #[test]
    fn check_takes_exactly_one_adu() {
        check(&adu(6, 6)).unwrap();
        assert_eq!(check(&adu(6, 5)), Err(AduError::Size { field: 6, bytes: 5 }));
        assert_eq!(check(&adu(6, 7)), Err(AduError::Size { field: 6, bytes: 7 }));
        assert_eq!(check(&adu(0, 1)), Err(AduError::Length(0)));
        assert_eq!(check(&[0; 3]), Err(AduError::Truncated { got: 3, want: 7 }));
    }
}
