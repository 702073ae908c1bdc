//! The EDHOC messages and plaintexts (RFC 9528 §5.2–§5.5): their encodings and bounded
//! parsers. No cryptography here: the handshake (the parent module) encrypts and verifies.
use alloc::vec::Vec;

use super::cbor::{put_id, put_id_cred, read_id, read_id_cred, skip_ead, Reader, Refusal};
use crate::cbor;

/// The longest EDHOC message accepted; credentials travel by reference here, so the largest
/// message seen (RFC 9529 §2's message_2, 116 bytes) is far below it.
pub const MAX_MESSAGE: usize = 1024;
/// The most cipher suites a SUITES_I array may list.
pub const MAX_SUITES: usize = 10;

/// A parsed message_1.
#[derive(Debug, PartialEq, Eq)]
pub struct Message1<'a> {
    /// METHOD.
    pub method: i64,
    /// SUITES_I in order; the last one is the selected suite.
    pub suites: Vec<i64>,
    /// G_X.
    pub g_x: &'a [u8],
    /// C_I (raw).
    pub c_i: Vec<u8>,
}

fn check_len(m: &[u8]) -> Result<(), Refusal> {
    if m.len() > MAX_MESSAGE {
        return Err("longer than the 1024 bytes accepted");
    }
    Ok(())
}

/// message_1 = ( METHOD, SUITES_I, G_X, C_I ) (no EAD_1 sent): SUITES_I as an integer when it
/// lists one suite, else as an array whose last element is the selected suite.
pub fn message_1(method: u8, suites: &[u8], g_x: &[u8], c_i: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(40 + suites.len() + c_i.len());
    cbor::int(&mut out, i64::from(method));
    if let [s] = suites {
        cbor::int(&mut out, i64::from(*s));
    } else {
        cbor::array(&mut out, suites.len() as u64);
        for s in suites {
            cbor::int(&mut out, i64::from(*s));
        }
    }
    cbor::bstr(&mut out, g_x);
    put_id(&mut out, c_i);
    out
}

/// Parse message_1; EAD_1 items are skipped, a critical one refused.
pub fn parse_message_1(m: &[u8]) -> Result<Message1<'_>, Refusal> {
    check_len(m)?;
    let mut r = Reader::new(m);
    let method = r.int().map_err(|_| "METHOD is not an integer")?;
    let suites = match r.peek() {
        Some(b) if b >> 5 == 4 => {
            let n = r.container(4)?;
            if !(2..=MAX_SUITES).contains(&n) {
                return Err("SUITES_I array of fewer than 2 or more than 10 suites");
            }
            (0..n).map(|_| r.int().map_err(|_| "SUITES_I holds a non-integer")).collect::<Result<Vec<_>, _>>()?
        }
        _ => alloc::vec![r.int().map_err(|_| "SUITES_I is neither an integer nor an array")?],
    };
    let g_x = r.bytes().map_err(|_| "G_X is not a byte string")?;
    let c_i = read_id(&mut r)?;
    skip_ead(&mut r)?;
    Ok(Message1 { method, suites, g_x, c_i })
}

/// message_2 = bstr( G_Y || CIPHERTEXT_2 ).
pub fn message_2(g_y: &[u8], ciphertext_2: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(3 + g_y.len() + ciphertext_2.len());
    cbor::head(&mut out, 2, (g_y.len() + ciphertext_2.len()) as u64);
    out.extend_from_slice(g_y);
    out.extend_from_slice(ciphertext_2);
    out
}

/// A message made of one byte string and nothing else (message_2, message_3, message_4).
pub fn parse_bstr_message(m: &[u8]) -> Result<&[u8], Refusal> {
    check_len(m)?;
    let mut r = Reader::new(m);
    let b = r.bytes()?;
    if !r.is_empty() {
        return Err("bytes after the message's byte string");
    }
    Ok(b)
}

/// Split message_2 into G_Y (32 bytes) and CIPHERTEXT_2.
pub fn parse_message_2(m: &[u8]) -> Result<(&[u8; 32], &[u8]), Refusal> {
    let b = parse_bstr_message(m)?;
    if b.len() <= 32 {
        return Err("too short to hold G_Y and CIPHERTEXT_2");
    }
    let (g_y, ct) = b.split_at(32);
    Ok((g_y.try_into().map_err(|_| "G_Y")?, ct))
}

/// PLAINTEXT_2 = ( C_R, ID_CRED_R / bstr / -24..23, Signature_or_MAC_2 ) (no EAD_2 sent).
pub fn plaintext_2(c_r: &[u8], id_cred_r: &[u8], sig_or_mac_2: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(c_r.len() + id_cred_r.len() + sig_or_mac_2.len() + 6);
    put_id(&mut out, c_r);
    put_id_cred(&mut out, id_cred_r);
    cbor::bstr(&mut out, sig_or_mac_2);
    out
}

/// A parsed PLAINTEXT_2 or PLAINTEXT_3.
#[derive(Debug, PartialEq, Eq)]
pub struct Plaintext<'a> {
    /// C_R (PLAINTEXT_2 only; empty in PLAINTEXT_3).
    pub c_r: Vec<u8>,
    /// ID_CRED_x in its full form (the map).
    pub id_cred: Vec<u8>,
    /// Signature_or_MAC_x.
    pub sig_or_mac: &'a [u8],
    /// The EAD items' encoding (context_x and the signed data include it).
    pub ead: &'a [u8],
}

fn parse_plaintext(p: &[u8], with_c_r: bool) -> Result<Plaintext<'_>, Refusal> {
    let mut r = Reader::new(p);
    let c_r = if with_c_r { read_id(&mut r)? } else { Vec::new() };
    let id_cred = read_id_cred(&mut r)?;
    let sig_or_mac = r.bytes().map_err(|_| "Signature_or_MAC is not a byte string")?;
    let from = r.position();
    skip_ead(&mut r)?;
    Ok(Plaintext { c_r, id_cred, sig_or_mac, ead: r.since(from) })
}

/// Parse PLAINTEXT_2.
pub fn parse_plaintext_2(p: &[u8]) -> Result<Plaintext<'_>, Refusal> {
    parse_plaintext(p, true)
}

/// PLAINTEXT_3 = ( ID_CRED_I / bstr / -24..23, Signature_or_MAC_3 ) (no EAD_3 sent).
pub fn plaintext_3(id_cred_i: &[u8], sig_or_mac_3: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(id_cred_i.len() + sig_or_mac_3.len() + 4);
    put_id_cred(&mut out, id_cred_i);
    cbor::bstr(&mut out, sig_or_mac_3);
    out
}

/// Parse PLAINTEXT_3.
pub fn parse_plaintext_3(p: &[u8]) -> Result<Plaintext<'_>, Refusal> {
    parse_plaintext(p, false)
}

/// A message made of one byte string: message_3 = bstr(CIPHERTEXT_3), message_4 =
/// bstr(CIPHERTEXT_4).
pub fn bstr_message(ciphertext: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ciphertext.len() + 3);
    cbor::bstr(&mut out, ciphertext);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_1_forms() {
        // RFC 9529 §3's second message_1: METHOD 3, SUITES_I [6, 2], G_X, C_I -24.
        let g_x = [7u8; 32];
        let m = message_1(3, &[6, 2], &g_x, &[0x37]);
        assert_eq!(&m[..4], [0x03, 0x82, 0x06, 0x02]);
        let p = parse_message_1(&m).unwrap();
        assert_eq!((p.method, p.suites.as_slice(), p.g_x, p.c_i.as_slice()), (3, &[6, 2][..], &g_x[..], &[0x37][..]));
        // A critical EAD_1 item (label -1) is refused; a non-critical one (label 1, value) is skipped.
        assert!(parse_message_1(&[&m[..], &[0x20]].concat()).is_err());
        assert!(parse_message_1(&[&m[..], &[0x01, 0x41, 0x00]].concat()).is_ok());
        assert!(parse_message_1(&[0x03, 0x9a, 0xff, 0xff, 0xff, 0xff]).is_err());
    }
}
