//! IEC 61850-8-1 GOOSE frames: this project's BER encoder, the frame layout, and the sizes of
//! the ICS study (160 B and 1522 B).
//!
//! ```text
//! offset size field
//! 0      6    destination  01-0C-CD-01-00-xx (IEC 61850-8-1 Annex B multicast range for GOOSE)
//! 6      6    source       a locally administered address (02-…)
//! 12     4    802.1Q tag   TPID 0x8100, priority 4 (IEC 61850-8-1 default for GOOSE), VID 0
//! 16     2    EtherType    0x88B8 (GOOSE)
//! 18     2    APPID        0x0000–0x3FFF for GOOSE
//! 20     2    Length       8 + goosePdu bytes (APPID through the end of the APDU)
//! 22     2    Reserved1    0 (the simulation bit 15 unset)
//! 24     2    Reserved2    0
//! 26     n    goosePdu     BER: [APPLICATION 1] IMPLICIT SEQUENCE (tag 0x61)
//! ```
//! goosePdu members, in order (context tags, IEC 61850-8-1 Annex A): gocbRef [0] VisibleString,
//! timeAllowedtoLive [1] INTEGER, datSet [2] VisibleString, goID [3] VisibleString, t [4]
//! UtcTime (8 octets), stNum [5], sqNum [6], simulation [7] BOOLEAN, confRev [8], ndsCom [9]
//! BOOLEAN, numDatSetEntries [10], allData [11] SEQUENCE OF Data (constructed, tag 0xAB).
//! Data entries used: boolean [3] (0x83), bit-string [4] (0x84, the 13-bit quality), and one
//! octet-string [9] (0x89) filler whose length makes the frame exactly the asked size, whatever
//! byte count stNum and sqNum take.

/// GOOSE EtherType.
pub const ETHERTYPE_GOOSE: u16 = 0x88B8;
/// 802.1Q tag protocol identifier.
pub const TPID: u16 = 0x8100;
/// User priority of the tag (IEC 61850-8-1 default for GOOSE).
pub const PRIORITY: u16 = 4;
/// Ethernet (14) + 802.1Q tag (4): bytes before the GOOSE APPID.
pub const ETH_HEADER: usize = 18;
/// APPID, Length, Reserved1, Reserved2.
pub const GOOSE_HEADER: usize = 8;
/// The frame sizes of the ICS study (docs/ics.md): a typical trip frame and the largest tagged frame.
pub const SIZES: [usize; 2] = [160, 1522];

/// Boolean + quality pairs of the dataset, by frame size: 1 (the trip and its quality) for the
/// 160-B frame, 160 for the 1522-B frame; the octet-string filler makes up the rest.
pub fn pairs_for(size: usize) -> usize {
    if size >= 1000 {
        160
    } else {
        1
    }
}

/// Append a BER length (X.690 §8.1.3: short form below 128, else 0x81 / 0x82 + big-endian).
pub fn ber_len(out: &mut Vec<u8>, len: usize) {
    assert!(len <= 0xFFFF, "GOOSE lengths fit two bytes");
    if len < 0x80 {
        out.push(len as u8);
    } else if len <= 0xFF {
        out.extend_from_slice(&[0x81, len as u8]);
    } else {
        out.extend_from_slice(&[0x82, (len >> 8) as u8, len as u8]);
    }
}

/// Append tag, length, value.
pub fn ber_tlv(out: &mut Vec<u8>, tag: u8, value: &[u8]) {
    out.push(tag);
    ber_len(out, value.len());
    out.extend_from_slice(value);
}

/// The minimal two's-complement content octets of a non-negative integer (X.690 §8.3.2: no
/// leading 0x00 unless the next octet's top bit is set).
pub fn ber_uint(v: u64) -> Vec<u8> {
    let b = v.to_be_bytes();
    let first = b.iter().position(|&x| x != 0).unwrap_or(7);
    let mut out = Vec::with_capacity(9);
    if b[first] & 0x80 != 0 {
        out.push(0);
    }
    out.extend_from_slice(&b[first..]);
    out
}

/// The fields of one GOOSE message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Goose {
    /// Last byte of the multicast destination (01-0C-CD-01-00-xx).
    pub dst_last: u8,
    /// Source MAC address.
    pub src: [u8; 6],
    /// APPID.
    pub appid: u16,
    /// gocbRef: the GOOSE control block's reference.
    pub gocb_ref: String,
    /// timeAllowedtoLive (ms).
    pub time_allowed_to_live_ms: u32,
    /// datSet: the data set's reference.
    pub dat_set: String,
    /// goID.
    pub go_id: String,
    /// UtcTime: seconds, 24-bit binary fraction, time quality (IEC 61850-8-1 §8.1.3.7).
    pub t: [u8; 8],
    /// stNum: the state number (raised at every change).
    pub st_num: u32,
    /// sqNum: the retransmission number within a state.
    pub sq_num: u32,
    /// simulation (test) flag.
    pub simulation: bool,
    /// confRev: the configuration revision.
    pub conf_rev: u32,
    /// ndsCom: needs commissioning.
    pub nds_com: bool,
    /// Boolean + quality pairs in allData (each pair: 3 + 5 bytes).
    pub pairs: usize,
}

/// UtcTime octets for a duration since the Unix epoch; time quality 0x0A (10 bits of accuracy).
pub fn utc_time(since_epoch: std::time::Duration) -> [u8; 8] {
    let s = since_epoch.as_secs() as u32;
    let frac = ((since_epoch.subsec_nanos() as u64) << 24) / 1_000_000_000;
    let mut t = [0u8; 8];
    t[..4].copy_from_slice(&s.to_be_bytes());
    t[4..7].copy_from_slice(&(frac as u32).to_be_bytes()[1..]);
    t[7] = 0x0A;
    t
}

impl Goose {
    /// The trip message this tool publishes (references of ~25 characters, as docs/ics.md assumes).
    pub fn trip(appid: u16, st_num: u32, sq_num: u32, pairs: usize) -> Goose {
        Goose {
            dst_last: 0x01,
            src: [0x02, 0x00, 0x00, 0x61, 0x85, 0x01],
            appid,
            gocb_ref: "IED1PROT/LLN0$GO$gcbTrip01".into(),
            time_allowed_to_live_ms: 2000,
            dat_set: "IED1PROT/LLN0$dsTripGOOSE".into(),
            go_id: "IED1PROT_TripGOOSE_01".into(),
            t: utc_time(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default()),
            st_num,
            sq_num,
            simulation: false,
            conf_rev: 1,
            nds_com: false,
            pairs,
        }
    }

    /// allData entries: the pairs, plus the filler when there is one.
    pub fn entries(&self, filler: Option<usize>) -> usize {
        2 * self.pairs + usize::from(filler.is_some())
    }

    /// The goosePdu (tag 0x61 …) with an octet-string filler of `filler` bytes (None: no filler).
    pub fn pdu(&self, filler: Option<usize>) -> Vec<u8> {
        let mut all = Vec::with_capacity(8 * self.pairs + filler.unwrap_or(0) + 4);
        for i in 0..self.pairs {
            ber_tlv(&mut all, 0x83, &[u8::from(i % 2 == 0)]);
            // quality: 13 bits, 3 unused bits, all good
            ber_tlv(&mut all, 0x84, &[0x03, 0x00, 0x00]);
        }
        if let Some(n) = filler {
            ber_tlv(&mut all, 0x89, &vec![0u8; n]);
        }
        let mut c = Vec::with_capacity(all.len() + 160);
        ber_tlv(&mut c, 0x80, self.gocb_ref.as_bytes());
        ber_tlv(&mut c, 0x81, &ber_uint(self.time_allowed_to_live_ms.into()));
        ber_tlv(&mut c, 0x82, self.dat_set.as_bytes());
        ber_tlv(&mut c, 0x83, self.go_id.as_bytes());
        ber_tlv(&mut c, 0x84, &self.t);
        ber_tlv(&mut c, 0x85, &ber_uint(self.st_num.into()));
        ber_tlv(&mut c, 0x86, &ber_uint(self.sq_num.into()));
        ber_tlv(&mut c, 0x87, &[if self.simulation { 0xFF } else { 0 }]);
        ber_tlv(&mut c, 0x88, &ber_uint(self.conf_rev.into()));
        ber_tlv(&mut c, 0x89, &[if self.nds_com { 0xFF } else { 0 }]);
        ber_tlv(&mut c, 0x8A, &ber_uint(self.entries(filler) as u64));
        ber_tlv(&mut c, 0xAB, &all);
        let mut pdu = Vec::with_capacity(c.len() + 4);
        ber_tlv(&mut pdu, 0x61, &c);
        pdu
    }

    /// The whole frame (Ethernet + tag + GOOSE header + goosePdu) with the given filler.
    pub fn frame_with(&self, filler: Option<usize>) -> Vec<u8> {
        let pdu = self.pdu(filler);
        let mut f = Vec::with_capacity(ETH_HEADER + GOOSE_HEADER + pdu.len());
        f.extend_from_slice(&[0x01, 0x0C, 0xCD, 0x01, 0x00, self.dst_last]);
        f.extend_from_slice(&self.src);
        f.extend_from_slice(&TPID.to_be_bytes());
        f.extend_from_slice(&(PRIORITY << 13).to_be_bytes());
        f.extend_from_slice(&ETHERTYPE_GOOSE.to_be_bytes());
        f.extend_from_slice(&self.appid.to_be_bytes());
        f.extend_from_slice(&((GOOSE_HEADER + pdu.len()) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0, 0, 0]);
        f.extend_from_slice(&pdu);
        f
    }

    /// The frame of exactly `size` bytes: the filler length is searched near the size's
    /// difference (the BER length forms make the size jump by 1–2 bytes at 128 and 256).
    pub fn frame(&self, size: usize) -> Result<Vec<u8>, String> {
        let bare = self.frame_with(None).len();
        if bare == size {
            return Ok(self.frame_with(None));
        }
        let guess = size.saturating_sub(bare + 2);
        for n in guess.saturating_sub(6)..=guess + 2 {
            let f = self.frame_with(Some(n));
            if f.len() == size {
                return Ok(f);
            }
        }
        Err(format!(
            "a GOOSE frame of {size} B cannot be built with {} data pairs (the smallest is {bare} B)",
            self.pairs
        ))
    }
}

/// What the subscriber reads from a received GOOSE APDU (APPID through the end of the goosePdu).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// APPID.
    pub appid: u16,
    /// gocbRef.
    pub gocb_ref: String,
    /// stNum.
    pub st_num: u64,
    /// sqNum.
    pub sq_num: u64,
    /// numDatSetEntries.
    pub entries: u64,
}

/// Read one TLV at `at`: (tag, value range, next offset). Bounded by `b`; lengths over two
/// bytes or indefinite are refused.
fn tlv(b: &[u8], at: usize) -> Result<(u8, std::ops::Range<usize>), &'static str> {
    let tag = *b.get(at).ok_or("truncated tag")?;
    let l0 = *b.get(at + 1).ok_or("truncated length")? as usize;
    let (len, start) = match l0 {
        0..=0x7F => (l0, at + 2),
        0x81 => (*b.get(at + 2).ok_or("truncated length")? as usize, at + 3),
        0x82 => {
            let hi = *b.get(at + 2).ok_or("truncated length")? as usize;
            let lo = *b.get(at + 3).ok_or("truncated length")? as usize;
            (hi << 8 | lo, at + 4)
        }
        _ => return Err("unsupported length form"),
    };
    let end = start.checked_add(len).filter(|&e| e <= b.len()).ok_or("length beyond the frame")?;
    Ok((tag, start..end))
}

fn uint(v: &[u8]) -> Result<u64, &'static str> {
    if v.is_empty() || v.len() > 9 || (v.len() == 9 && v[0] != 0) || v[0] & 0x80 != 0 {
        return Err("integer out of range");
    }
    Ok(v.iter().fold(0u64, |a, &x| a << 8 | x as u64))
}

/// Decode a GOOSE APDU (from APPID on): the header's Length must match, the goosePdu must be
/// one 0x61 TLV filling it, and gocbRef, stNum, sqNum and numDatSetEntries must be present.
pub fn decode_apdu(apdu: &[u8]) -> Result<Decoded, &'static str> {
    if apdu.len() < GOOSE_HEADER {
        return Err("shorter than the GOOSE header");
    }
    let appid = u16::from_be_bytes([apdu[0], apdu[1]]);
    let len = u16::from_be_bytes([apdu[2], apdu[3]]) as usize;
    if len != apdu.len() {
        return Err("Length field does not match the APDU");
    }
    let (tag, body) = tlv(apdu, GOOSE_HEADER)?;
    if tag != 0x61 || body.end != apdu.len() {
        return Err("not one goosePdu");
    }
    let (mut gocb, mut st, mut sq, mut n) = (None, None, None, None);
    let mut at = body.start;
    while at < body.end {
        let (t, v) = tlv(&apdu[..body.end], at)?;
        let val = &apdu[v.clone()];
        match t {
            0x80 => gocb = Some(String::from_utf8_lossy(val).into_owned()),
            0x85 => st = Some(uint(val)?),
            0x86 => sq = Some(uint(val)?),
            0x8A => n = Some(uint(val)?),
            _ => {}
        }
        at = v.end;
    }
    Ok(Decoded {
        appid,
        gocb_ref: gocb.ok_or("no gocbRef")?,
        st_num: st.ok_or("no stNum")?,
        sq_num: sq.ok_or("no sqNum")?,
        entries: n.ok_or("no numDatSetEntries")?,
    })
}

/// The EtherType and the payload after it of a received frame, with or without its 802.1Q tag
/// (the kernel may hand AF_PACKET the frame with the tag moved out of the data).
pub fn ethertype_payload(frame: &[u8]) -> Option<(u16, &[u8])> {
    let et = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
    if et == TPID {
        let inner = u16::from_be_bytes([*frame.get(16)?, *frame.get(17)?]);
        Some((inner, &frame[18..]))
    } else {
        Some((et, &frame[14..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed BER (X.690 §8.1.3 length forms, §8.3 integers).
    #[test]
    fn ber_bytes_by_hand() {
        let mut v = Vec::new();
        ber_len(&mut v, 0x7F);
        ber_len(&mut v, 0x80);
        ber_len(&mut v, 0xFF);
        ber_len(&mut v, 0x100);
        ber_len(&mut v, 1496);
        assert_eq!(v, [0x7F, 0x81, 0x80, 0x81, 0xFF, 0x82, 0x01, 0x00, 0x82, 0x05, 0xD8]);
        assert_eq!(ber_uint(0), [0x00]);
        assert_eq!(ber_uint(127), [0x7F]);
        assert_eq!(ber_uint(128), [0x00, 0x80]);
        assert_eq!(ber_uint(2000), [0x07, 0xD0]);
        assert_eq!(ber_uint(40000), [0x00, 0x9C, 0x40]);
        assert_eq!(ber_uint(u64::MAX), [0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
        let mut t = Vec::new();
        ber_tlv(&mut t, 0x89, &[0u8; 200]);
        assert_eq!(&t[..3], [0x89, 0x81, 200]);
        assert_eq!(t.len(), 203);
    }

    /// A small frame written out by hand from the layout: no data pairs, no filler.
    #[test]
    fn frame_bytes_by_hand() {
        let g = Goose {
            dst_last: 0x01,
            src: [2, 0, 0, 0, 0, 1],
            appid: 0x0001,
            gocb_ref: "G".into(),
            time_allowed_to_live_ms: 2000,
            dat_set: "D".into(),
            go_id: "I".into(),
            t: [0x5F, 0, 0, 0, 0x80, 0, 0, 0x0A],
            st_num: 1,
            sq_num: 128,
            simulation: false,
            conf_rev: 1,
            nds_com: false,
            pairs: 0,
        };
        #[rustfmt::skip]
        let pdu: Vec<u8> = vec![
            0x61, 44,
            0x80, 1, b'G',
            0x81, 2, 0x07, 0xD0,
            0x82, 1, b'D',
            0x83, 1, b'I',
            0x84, 8, 0x5F, 0, 0, 0, 0x80, 0, 0, 0x0A,
            0x85, 1, 1,
            0x86, 2, 0x00, 0x80,
            0x87, 1, 0,
            0x88, 1, 1,
            0x89, 1, 0,
            0x8A, 1, 0,
            0xAB, 0,
        ];
        assert_eq!(pdu.len(), 46);
        let mut want = vec![0x01, 0x0C, 0xCD, 0x01, 0x00, 0x01, 2, 0, 0, 0, 0, 1, 0x81, 0x00, 0x80, 0x00, 0x88, 0xB8];
        want.extend_from_slice(&[0x00, 0x01, 0x00, 54, 0, 0, 0, 0]);
        want.extend_from_slice(&pdu);
        assert_eq!(g.frame_with(None), want);
        let d = decode_apdu(&want[ETH_HEADER..]).unwrap();
        assert_eq!(d, Decoded { appid: 1, gocb_ref: "G".into(), st_num: 1, sq_num: 128, entries: 0 });
    }

    #[test]
    fn study_sizes_are_exact_for_every_counter_width() {
        for size in SIZES {
            for (st, sq) in [(1, 0), (127, 128), (40_000, 70_000), (u32::MAX, u32::MAX)] {
                let g = Goose::trip(0x0101, st, sq, pairs_for(size));
                let f = g.frame(size).unwrap();
                assert_eq!(f.len(), size, "st {st} sq {sq}");
                let d = decode_apdu(&f[ETH_HEADER..]).unwrap();
                assert_eq!((d.st_num, d.sq_num, d.entries), (st as u64, sq as u64, 2 * pairs_for(size) as u64 + 1));
            }
        }
    }

    #[test]
    fn decoder_refuses_bad_structure() {
        let f = Goose::trip(1, 1, 1, 2).frame(160).unwrap();
        let a = &f[ETH_HEADER..];
        assert!(decode_apdu(&a[..a.len() - 1]).is_err(), "Length mismatch");
        let mut bad = a.to_vec();
        bad[GOOSE_HEADER] = 0x62;
        assert!(decode_apdu(&bad).is_err());
        let mut long = a.to_vec();
        long[GOOSE_HEADER + 1] = 0x83; // three-byte length form
        assert!(decode_apdu(&long).is_err());
        assert!(decode_apdu(&[0; 7]).is_err());
        assert_eq!(ethertype_payload(&f).unwrap().0, ETHERTYPE_GOOSE);
        let mut untagged = f[..12].to_vec();
        untagged.extend_from_slice(&f[16..]);
        assert_eq!(ethertype_payload(&untagged).unwrap(), (ETHERTYPE_GOOSE, &f[18..]));
    }
}
