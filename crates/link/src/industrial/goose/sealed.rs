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
    /// The header does not parse, or the frame is cut short.
    Malformed,
    /// Another cipher, or flags this subscriber does not take.
    WrongCipher,
    /// Another APPID (the header's device field).
    UnknownAppid,
    /// A counter already accepted, or at most a window below the floor.
    Replay,
    /// A counter below the window, or further below the floor.
    TooOld,
    /// The tag does not verify.
    BadTag,
    /// Authentic, but not a GOOSE APDU of this APPID.
    NotGoose,
}

/// The subscriber side: one cipher, one APPID, its replay window.
pub struct Subscriber {
    /// The cipher and key it opens with.
    pub keyed: Keyed,
    /// The APPID it takes.
    pub appid: u16,
    /// Its replay window.
    pub window: ReplayWindow,
    /// The APPID's accepted mark from earlier runs under this key (`gateway::accepted`, protocol
    /// `goose`): a counter at or below it is refused, so a restarted subscriber never takes an
    /// earlier capture.
    pub floor: Option<u64>,
    /// The highest counter this subscriber accepted (for the mark).
    pub top: Option<u64>,
}

impl Subscriber {
    /// A subscriber that accepts nothing at or below `floor`.
    pub fn new(keyed: Keyed, appid: u16, window: ReplayWindow, floor: Option<u64>) -> Subscriber {
        Subscriber { keyed, appid, window, floor, top: None }
    }

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
        if let Some(f) = self.floor.filter(|&f| h.counter <= f) {
            return Err(if f - h.counter < self.window.size() { Refused::Replay } else { Refused::TooOld });
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
        self.top = Some(self.top.map_or(h.counter, |t| t.max(h.counter)));
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
        let sub = Subscriber::new(
            Keyed::new(&s, &key, Proto::Goose, false).unwrap(),
            0x0101,
            ReplayWindow::new(64).unwrap(),
            None,
        );
        (Keyed::new(&s, &key, Proto::Goose, false).unwrap(), sub)
    }

    /// A restarted subscriber (a new window) takes an earlier capture unless it loads the
    /// APPID's accepted mark: counters 1..=5 accepted and their mark written; a new subscriber
    /// with the mark refuses all five again (window 64: within 64 of the mark, `replay`), and
    /// takes counter 6.
    #[test]
    fn a_restarted_subscriber_refuses_an_earlier_capture() {
        use crate::gateway::accepted::{self, Keeper};
        let (mut k, mut sub) = pair("Ascon-AEAD128");
        let capture: Vec<Vec<u8>> = (1..=6u64)
            .map(|c| {
                let plain = Goose::trip(0x0101, c as u32, 0, super::super::frame::pairs_for(160)).frame(160).unwrap();
                let (mut out, mut body) = (Vec::new(), Vec::new());
                seal(&mut k, c, &plain, &mut out, &mut body).unwrap();
                out
            })
            .collect();
        for f in &capture[..5] {
            sub.accept(f).unwrap();
        }
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k.accepted");
        let mut keeper = Keeper::new(&p, "fp");
        keeper.note(Proto::Goose, 0x0101, sub.top.unwrap());
        keeper.flush().unwrap();
        let floor = accepted::read(&p, Some("fp")).unwrap().unwrap().get(&(Proto::Goose, 0x0101)).copied();
        assert_eq!(floor, Some(5));
        let (_, mut restarted) = pair("Ascon-AEAD128");
        restarted.floor = floor;
        for f in &capture[..5] {
            assert_eq!(restarted.accept(f).err(), Some(Refused::Replay));
        }
        assert!(restarted.accept(&capture[5]).is_ok());
        // without the mark (the old behaviour) the capture is taken again
        let (_, mut bare) = pair("Ascon-AEAD128");
        assert!(bare.accept(&capture[0]).is_ok());
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
