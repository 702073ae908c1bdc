//! The proof of a fault run: from the devices' captures (what was sent) and the store's rows
//! (what was stored), every captured reading stored exactly once, nothing stored that no device
//! sent, no (key, counter) pair used for two frames, every stored payload the sent plaintext.
use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::store::Row;
use crate::wire::frame::Header;

/// Forged frames use counters from here on (no device reaches them in a run): one stored would
/// show as a row that no device captured.
pub const FORGED_COUNTER_BASE: u64 = 1 << 40;

/// The proof.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Verdict {
    /// Readings the devices captured as sent.
    pub captured: u64,
    /// Rows in the store for the session.
    pub stored_rows: u64,
    /// Captured readings not in the store.
    pub lost: u64,
    /// Captured readings stored more than once.
    pub duplicates_stored: u64,
    /// (device, counter) pairs captured with two different frames: a nonce reuse.
    pub counter_reuse: u64,
    /// Stored rows no device captured (forged frames among them).
    pub not_captured_but_stored: u64,
    /// Forged frames the forger published.
    pub forged_sent: u64,
    /// Forged frames found in the store.
    pub forged_stored: u64,
    /// Stored payload differs from the captured frame's plaintext.
    pub mismatched: u64,
    /// The store's own integrity check ("ok" or what it found).
    pub integrity_check: String,
    /// Copies the gateways' stores ignored (their last reports).
    pub gateway_duplicates_ignored: u64,
    /// Frames the gateways refused (their last reports).
    pub gateway_refused: u64,
    /// Gateway restarts.
    pub gateway_restarts: u32,
    /// Broker restarts.
    pub broker_restarts: u32,
    /// Device process restarts.
    pub device_restarts: u32,
    /// Gateway-then-broker faults.
    pub double_kills: u32,
    /// Frames the devices re-sent from their rings after reconnects.
    pub device_ring_resent: u64,
    /// Frames the devices re-sent when they started.
    pub device_resent_on_start: u64,
    /// PUBACK timeouts at the devices.
    pub device_ack_timeouts: u64,
    /// Run time (s).
    pub elapsed_s: f64,
    /// What did not go as planned (a process that did not stop, a fault that did not recover).
    pub notes: Vec<String>,
}

impl Verdict {
    /// Everything the fault test asserts.
    pub fn failures(&self) -> Vec<String> {
        let mut f = Vec::new();
        let mut chk = |ok: bool, what: String| {
            if !ok {
                f.push(what)
            }
        };
        chk(self.lost == 0, format!("{} captured readings not stored", self.lost));
        chk(self.duplicates_stored == 0, format!("{} readings stored twice", self.duplicates_stored));
        chk(self.counter_reuse == 0, format!("{} (key, counter) pairs used for two frames", self.counter_reuse));
        chk(self.not_captured_but_stored == 0, format!("{} stored rows no device sent", self.not_captured_but_stored));
        chk(self.forged_stored == 0, format!("{} forged frames stored", self.forged_stored));
        chk(self.mismatched == 0, format!("{} stored payloads differ from what was sent", self.mismatched));
        chk(self.integrity_check == "ok", format!("store integrity_check: {}", self.integrity_check));
        chk(self.captured > 0, "no reading was sent".into());
        f
    }
}

/// Opens a frame captured by device `d` to its plaintext.
pub type OpenFrame<'a> = dyn FnMut(u32, &Header, &[u8]) -> Result<Vec<u8>, String> + 'a;

/// One captured reading: how often it is missing from the store (0 or 1) and stored too often.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    /// The device.
    pub device: u32,
    /// The reading's counter.
    pub counter: u64,
    /// 1 when it is missing from the store.
    pub lost: u64,
    /// How many times it is stored beyond once.
    pub duplicates: u64,
}

/// Fill the proof's counts of `v` from `captures` (per device process, its frames in capture
/// order) and the run's stored `rows`; `open(d, header, frame)` opens a frame captured by device
/// `d` to its plaintext. Returns every distinct captured reading in (device, counter) order.
/// A frame that does not open is an error: the capture is the record of what was sent.
pub fn prove(
    v: &mut Verdict,
    captures: &[Vec<Vec<u8>>],
    open: &mut OpenFrame,
    rows: &[Row],
    devices: u32,
) -> Result<Vec<Reading>, String> {
    let mut sent: BTreeMap<(u32, u64), (Vec<u8>, Vec<u8>)> = BTreeMap::new();
    for (d, frames) in captures.iter().enumerate() {
        for f in frames {
            let h = Header::parse(f).map_err(|e| e.to_string())?;
            if let Some((prev, _)) = sent.get(&(h.device, h.counter)) {
                if prev != f {
                    v.counter_reuse += 1;
                }
                continue;
            }
            if h.device != d as u32 {
                v.counter_reuse += 1;
            }
            let pt = open(d as u32, &h, f)?;
            sent.insert((h.device, h.counter), (f.clone(), pt));
        }
    }
    v.captured = sent.len() as u64;
    v.stored_rows = rows.len() as u64;
    let mut stored: HashMap<(u32, u64), u64> = HashMap::new();
    for r in rows {
        *stored.entry((r.device, r.counter)).or_default() += 1;
        match sent.get(&(r.device, r.counter)) {
            Some((_, pt)) if *pt == r.payload => {}
            Some(_) => v.mismatched += 1,
            None => {
                v.not_captured_but_stored += 1;
                if r.counter >= FORGED_COUNTER_BASE || r.device >= devices {
                    v.forged_stored += 1;
                }
            }
        }
    }
    let mut out = Vec::with_capacity(sent.len());
    for &(device, counter) in sent.keys() {
        let n = stored.get(&(device, counter)).copied().unwrap_or(0);
        let (lost, duplicates) = ((n == 0) as u64, n.saturating_sub(1));
        v.lost += lost;
        v.duplicates_stored += duplicates;
        out.push(Reading { device, counter, lost, duplicates });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::frame::Proto;
    use crate::wire::keys::MasterKey;
    use crate::wire::suite::{find, Keyed};

    /// Frames sealed by device `d` for the given counters, plaintext "r<counter>".
    fn sealed(d: u32, counters: &[u64]) -> Vec<Vec<u8>> {
        let s = find("Ascon-AEAD128").unwrap();
        let k = MasterKey::from_bytes([7; 32]).cipher_key(Proto::Sensor, d, s.id, s.key_len());
        let mut keyed = Keyed::new(&s, &k, Proto::Sensor, false).unwrap();
        counters
            .iter()
            .map(|&c| {
                let mut f = Vec::new();
                keyed.seal(d, c, format!("r{c}").as_bytes(), &mut f).unwrap();
                f
            })
            .collect()
    }

    fn row(device: u32, counter: u64, payload: &str) -> Row {
        Row { device, counter, cipher: 1, payload: payload.as_bytes().to_vec() }
    }

    /// Opens by reading the counter from the header: the test's frames carry "r<counter>".
    fn open(_: u32, h: &Header, _: &[u8]) -> Result<Vec<u8>, String> {
        Ok(format!("r{}", h.counter).into_bytes())
    }

    fn run(captures: &[Vec<Vec<u8>>], rows: &[Row]) -> (Verdict, Vec<Reading>) {
        let mut v = Verdict { integrity_check: "ok".into(), ..Default::default() };
        let r = prove(&mut v, captures, &mut open, rows, 2).unwrap();
        (v, r)
    }

    #[test]
    fn every_reading_stored_once_passes() {
        // Device 0 captured 0, 1 and 1 again (a re-send: the same bytes), device 1 captured 5.
        let mut c0 = sealed(0, &[0, 1]);
        c0.push(c0[1].clone());
        let caps = vec![c0, sealed(1, &[5])];
        let (v, r) = run(&caps, &[row(0, 0, "r0"), row(0, 1, "r1"), row(1, 5, "r5")]);
        assert_eq!((v.captured, v.stored_rows, v.lost, v.duplicates_stored, v.counter_reuse), (3, 3, 0, 0, 0));
        assert_eq!(v.failures(), Vec::<String>::new());
        let keys: Vec<(u32, u64)> = r.iter().map(|x| (x.device, x.counter)).collect();
        assert_eq!(keys, vec![(0, 0), (0, 1), (1, 5)]);
    }

    #[test]
    fn lost_twice_stored_forged_and_altered_rows_are_counted() {
        let caps = vec![sealed(0, &[0, 1, 2]), sealed(1, &[0])];
        let rows = [
            row(0, 0, "r0"),
            row(0, 0, "r0"),                      // stored twice
            row(0, 2, "changed"),                 // payload differs from what was sent
            row(1, FORGED_COUNTER_BASE + 3, "x"), // a forged counter no device reaches
            row(7, 0, "x"),                       // a device outside the run
            row(1, 9, "x"),                       // not captured, not a forgery marker
        ];
        // Hand count: captured (0,0) (0,1) (0,2) (1,0) = 4; (0,1) and (1,0) not stored = 2 lost;
        // (0,0) stored 2 times = 1 duplicate; 3 rows nobody captured, 2 of them forged.
        let (v, r) = run(&caps, &rows);
        assert_eq!(v.captured, 4);
        assert_eq!(v.stored_rows, 6);
        assert_eq!(v.lost, 2);
        assert_eq!(v.duplicates_stored, 1);
        assert_eq!(v.mismatched, 1);
        assert_eq!(v.not_captured_but_stored, 3);
        assert_eq!(v.forged_stored, 2);
        assert_eq!(
            r,
            vec![
                Reading { device: 0, counter: 0, lost: 0, duplicates: 1 },
                Reading { device: 0, counter: 1, lost: 1, duplicates: 0 },
                Reading { device: 0, counter: 2, lost: 0, duplicates: 0 },
                Reading { device: 1, counter: 0, lost: 1, duplicates: 0 },
            ]
        );
        assert_eq!(v.failures().len(), 5, "{:?}", v.failures());
    }

    #[test]
    fn one_counter_with_two_frames_is_a_nonce_reuse() {
        // Device 0 sealed counter 3 twice with different plaintexts: the same (key, nonce), two frames.
        let s = find("Ascon-AEAD128").unwrap();
        let k = MasterKey::from_bytes([7; 32]).cipher_key(Proto::Sensor, 0, s.id, s.key_len());
        let mut keyed = Keyed::new(&s, &k, Proto::Sensor, false).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        keyed.seal(0, 3, b"r3", &mut a).unwrap();
        keyed.seal(0, 3, b"other", &mut b).unwrap();
        // A frame for device 0 in device 1's capture is a reuse as well (another process's counter).
        let caps = vec![vec![a, b], sealed(0, &[4])];
        let (v, _) = run(&caps, &[row(0, 3, "r3"), row(0, 4, "r4")]);
        assert_eq!(v.counter_reuse, 2);
        assert_eq!(v.failures(), vec!["2 (key, counter) pairs used for two frames".to_string()]);
    }

    #[test]
    fn nothing_sent_fails_and_an_unopenable_capture_is_an_error() {
        let (v, _) = run(&[vec![], vec![]], &[]);
        assert_eq!(v.failures(), vec!["no reading was sent".to_string()]);
        let mut v = Verdict::default();
        let mut refuse = |d: u32, _: &Header, _: &[u8]| -> Result<Vec<u8>, String> { Err(format!("device {d}: no")) };
        let e = prove(&mut v, &[sealed(0, &[0])], &mut refuse, &[], 1).unwrap_err();
        assert_eq!(e, "device 0: no");
    }
}
