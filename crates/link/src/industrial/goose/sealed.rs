//! GOOSE sealed per frame (docs/link.md "GOOSE on the wire"): the Ethernet header and 802.1Q
//! tag of the plain frame stay; the EtherType becomes 0x88B5 (IEEE 802 Local Experimental
//! EtherType 1, so no GOOSE subscriber mistakes it for GOOSE) and the payload is one link frame
//! (version 1, docs/link.md "Frame format") whose device id is the APPID and whose plaintext is
//! the whole GOOSE APDU (APPID through the end of the goosePdu).
//!
//! ```text
//! dst 6 | src 6 | 802.1Q 4 | 0x88B5 2 | link header 15 (version, cipher, flags, APPID as device, counter) | APDU sealed | tag
//! ```
//! The subscriber accepts a frame when: the EtherType is 0x88B5, the link header parses, the
//! cipher id and the APPID are the ones it subscribed to, the counter is fresh in the APPID's
//! replay window, the tag verifies, and the opened APDU decodes as GOOSE with that APPID; only
//! then does the window move.
use crate::gateway::replay::{ReplayWindow, Verdict};
use crate::wire::frame::Header;
use crate::wire::suite::{Keyed, OpenError};

use super::frame::{decode_apdu, ethertype_payload, Decoded, ETH_HEADER};

/// EtherType of a sealed GOOSE frame.
pub const ETHERTYPE_SEALED: u16 = 0x88B5;

/// Seal the plain tagged `frame` under (APPID, counter) into `out`.
pub fn seal(k: &mut Keyed, counter: u64, frame: &[u8], out: &mut Vec<u8>, body: &mut Vec<u8>) -> Result<(), String> {
    if frame.len() < ETH_HEADER + 2 {
        return Err("GOOSE frame shorter than its headers".into());
    }
    let appid = u16::from_be_bytes([frame[ETH_HEADER], frame[ETH_HEADER + 1]]);
    k.seal(appid as u32, counter, &frame[ETH_HEADER..], body)?;
    out.clear();
    out.extend_from_slice(&frame[..ETH_HEADER - 2]);
    out.extend_from_slice(&ETHERTYPE_SEALED.to_be_bytes());
    out.extend_from_slice(body);
    Ok(())
}

/// Why a received frame was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Not a sealed GOOSE frame (another EtherType): not counted, other traffic of the link.
    Other,
    Malformed,
    WrongCipher,
    UnknownAppid,
    Replay,
    TooOld,
    BadTag,
    NotGoose,
}

/// The subscriber side: one cipher, one APPID, its replay window.
pub struct Subscriber {
    pub keyed: Keyed,
    pub appid: u16,
    pub window: ReplayWindow,
}

impl Subscriber {
    /// Check and open a received frame (tagged or not); returns the APDU and what it says.
    pub fn accept(&mut self, frame: &[u8]) -> Result<(Vec<u8>, Decoded), Refused> {
        let (et, payload) = ethertype_payload(frame).ok_or(Refused::Other)?;
        if et != ETHERTYPE_SEALED {
            return Err(Refused::Other);
        }
        let h = Header::parse(payload).map_err(|_| Refused::Malformed)?;
        if h.cipher != self.keyed.suite.id || h.flags != 0 {
            return Err(Refused::WrongCipher);
        }
        if h.device != self.appid as u32 {
            return Err(Refused::UnknownAppid);
        }
        match self.window.check(h.counter) {
            Verdict::Fresh => {}
            Verdict::Replay => return Err(Refused::Replay),
            Verdict::TooOld => return Err(Refused::TooOld),
        }
        let apdu = self.keyed.open(&h, payload).map_err(|e| match e {
            OpenError::BadTag => Refused::BadTag,
            OpenError::Malformed => Refused::Malformed,
        })?;
        let d = decode_apdu(&apdu).map_err(|_| Refused::NotGoose)?;
        if d.appid != self.appid {
            return Err(Refused::NotGoose);
        }
        self.window.accept(h.counter);
        Ok((apdu, d))
    }
}

#[cfg(test)]
mod tests {
    use super::super::frame::Goose;
    use super::*;
    use crate::wire::frame::Proto;
    use crate::wire::suite;

    fn pair(cipher: &str) -> (Keyed, Subscriber) {
        let s = suite::find(cipher).unwrap();
        let key = vec![7u8; s.key_len()];
        let sub = Subscriber {
            keyed: Keyed::new(&s, &key, Proto::Goose, false).unwrap(),
            appid: 0x0101,
            window: ReplayWindow::new(64).unwrap(),
        };
        (Keyed::new(&s, &key, Proto::Goose, false).unwrap(), sub)
    }

    /// GOOSE sealed under the misuse-resistant suites: XChaCha20-Poly1305's random nonce sits
    /// between the link header and the sealed APDU (160 + 16 + 24 + 16 bytes), GCM-SIV adds
    /// only its tag; every byte after the EtherType flipped is refused, a replay too.
    #[test]
    fn misuse_resistant_suites_seal_goose() {
        for (cipher, nonce) in [("XChaCha20-Poly1305", 24), ("AES-128-GCM-SIV", 0), ("AES-256-GCM-SIV", 0)] {
            let (mut k, mut sub) = pair(cipher);
            let plain = Goose::trip(0x0101, 5, 0, 1).frame(160).unwrap();
            let (mut out, mut body) = (Vec::new(), Vec::new());
            seal(&mut k, 10, &plain, &mut out, &mut body).unwrap();
            assert_eq!(out.len(), 160 + 16 + nonce + 16, "{cipher}");
            for i in 18..out.len() {
                let mut t = out.clone();
                t[i] ^= 0x01;
                assert!(sub.accept(&t).is_err(), "{cipher}: byte {i} flipped was accepted");
            }
            let (apdu, d) = sub.accept(&out).unwrap();
            assert_eq!(apdu, plain[18..]);
            assert_eq!(d.appid, 0x0101);
            assert_eq!(sub.accept(&out), Err(Refused::Replay));
        }
    }

    #[test]
    fn sealed_round_trip_then_tamper_and_replay_refused() {
        for cipher in ["Ascon-AEAD128", "ChaCha20-Poly1305", "AES-128-GCM"] {
            let (mut k, mut sub) = pair(cipher);
            let plain = Goose::trip(0x0101, 5, 0, 1).frame(160).unwrap();
            let (mut out, mut body) = (Vec::new(), Vec::new());
            seal(&mut k, 10, &plain, &mut out, &mut body).unwrap();
            assert_eq!(out.len(), 160 + 16 + k.tag_len());
            assert_eq!(&out[..16], &plain[..16], "Ethernet header and tag kept");
            assert_eq!(&out[16..18], &[0x88, 0xB5]);
            assert_ne!(&out[18 + 16..18 + 16 + 20], &plain[18..38], "APDU not in clear");
            // every byte after the EtherType flipped once: refused
            for i in 18..out.len() {
                let mut t = out.clone();
                t[i] ^= 0x01;
                assert!(sub.accept(&t).is_err(), "{cipher}: byte {i} flipped was accepted");
            }
            let (apdu, d) = sub.accept(&out).unwrap();
            assert_eq!(apdu, plain[18..]);
            assert_eq!((d.appid, d.st_num), (0x0101, 5));
            assert_eq!(sub.accept(&out), Err(Refused::Replay));
            // the plain frame is not accepted by the sealed subscriber
            assert_eq!(sub.accept(&plain), Err(Refused::Other));
            // another APPID's frame (its own valid seal) is refused
            let other = Goose::trip(0x0102, 1, 0, 1).frame(160).unwrap();
            seal(&mut k, 11, &other, &mut out, &mut body).unwrap();
            assert_eq!(sub.accept(&out), Err(Refused::UnknownAppid));
        }
    }
}
