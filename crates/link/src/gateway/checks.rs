//! The gateway's check of one frame: structure, device, cipher, replay window, tag — in that
//! order, so a forged frame never moves a window and nothing refused reaches the store.
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use zeroize::Zeroizing;

use crate::gateway::replay::{ReplayWindow, Verdict};
use crate::wire::compact::{self, Carrier};
use crate::wire::frame::{Header, Proto, FLAG_UNAUTHENTICATED};
use crate::wire::keys::MasterKey;
use crate::wire::suite::{Keyed, OpenError, Suite, DRACO_BATCH_SUITE, POLY_TAG};

/// Why a frame was refused. Every refusal is counted under exactly one reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Refusal {
    /// Too short, unknown version, reserved flags, counter top bit, too long.
    Malformed,
    /// Device id not provisioned at this gateway.
    UnknownDevice,
    /// Frame type, cipher id or the unsafe flag differ from what the device is provisioned with.
    WrongCipher,
    /// Counter already accepted (inside the window).
    Replay,
    /// Counter older than the window.
    TooOld,
    /// Authentication failed.
    BadTag,
    /// The device's failed-tag budget is spent ([`Gateway::with_max_failed_tags`]): its frames
    /// are refused unopened.
    TagBudget,
}

impl Refusal {
    /// Every refusal, in the order of [`Tally::refused`].
    pub const ALL: [Refusal; 7] = [
        Refusal::Malformed,
        Refusal::UnknownDevice,
        Refusal::WrongCipher,
        Refusal::Replay,
        Refusal::TooOld,
        Refusal::BadTag,
        Refusal::TagBudget,
    ];
    /// The refusal's name in logs, CSV headers and run.json.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Malformed => "malformed",
            Refusal::UnknownDevice => "unknown_device",
            Refusal::WrongCipher => "wrong_cipher",
            Refusal::Replay => "replay",
            Refusal::TooOld => "too_old",
            Refusal::BadTag => "bad_tag",
            Refusal::TagBudget => "tag_budget",
        }
    }
}

/// Counters of what the gateway did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Frames accepted.
    pub accepted: u64,
    /// Frames refused, indexed by [`Refusal`] as `r as usize`.
    pub refused: [u64; 7],
    /// Devices whose failed-tag budget ran out (each counted once).
    pub alarms: u64,
    /// Frames whose counter was already accepted with other bytes, yet whose tag verified: the
    /// device sealed twice under one counter (a rolled-back or copied counter state). Each such
    /// frame counts once; it stays refused (`replay`).
    pub reuse_alarms: u64,
    /// Frames refused `too_old`: later than the window (`--window` counters) allows.
    pub late_alarms: u64,
}

impl Tally {
    /// Frames refused for any reason.
    pub fn refused_total(&self) -> u64 {
        self.refused.iter().sum()
    }
    /// Frames refused as `r`.
    pub fn count(&self, r: Refusal) -> u64 {
        self.refused[r as usize]
    }
}

/// A frame for the batch: its header, the device key and the frame's nonce.
type Candidate = (Header, Zeroizing<[u8; 16]>, [u8; 12]);

struct DeviceState {
    keyed: Keyed,
    window: ReplayWindow,
    /// Frames of this device whose tag failed.
    failed_tags: u64,
    /// Counters at or below this were accepted by an earlier run under this key (its accepted
    /// mark, `gateway::accepted`): refused whatever the window and the store say.
    floor: Option<u64>,
    /// The last [`REUSE_SLOTS`] counters the window accepted, each with the first 8 bytes of its
    /// frame's tag: a later frame under one of them with another tag is a reuse, not a replay.
    recent: VecDeque<(u64, [u8; 8])>,
}

/// Accepted counters per device whose tags are kept for the reuse alarm: 32 × 16 B = 512 B per
/// device that has sent (allocated on its first frame); a counter reused further back than
/// this is refused as a plain replay, without the alarm.
pub const REUSE_SLOTS: usize = 32;

/// One log line per [`Throttle::EVERY`] at most; what it held back is counted in the next.
#[derive(Default)]
struct Throttle {
    last: Option<Instant>,
    held: u64,
}

impl Throttle {
    const EVERY: Duration = Duration::from_secs(1);
    /// `Some(held back since the last line)` when a line may be written now.
    fn pass(&mut self) -> Option<u64> {
        if self.last.is_some_and(|t| t.elapsed() < Self::EVERY) {
            self.held += 1;
            return None;
        }
        self.last = Some(Instant::now());
        Some(std::mem::take(&mut self.held))
    }
}

fn more(held: u64) -> String {
    if held > 0 {
        format!(" (and {held} more since the last line)")
    } else {
        String::new()
    }
}

/// The default failed-tag budget per device: 2^20 for tags of at least 128 bits, 2^16 for
/// shorter (64-bit) ones. With about q/2^t as the chance that one of q forgeries passes a
/// t-bit tag, it keeps that chance under 2^-44 (t = 64) per device key; docs/security.md
/// "Forgery bound and the failed-tag budget".
pub fn default_max_failed_tags(tag_bytes: usize) -> u64 {
    if tag_bytes >= 16 {
        1 << 20
    } else {
        1 << 16
    }
}

/// One opened frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The sending device.
    pub device: u32,
    /// The frame's counter.
    pub counter: u64,
    /// The cipher id.
    pub cipher: u8,
    /// The plaintext.
    pub reading: Vec<u8>,
}

/// The receiving checks of a gateway: structure, device, cipher and frame type, replay
/// window, failed-tag budget and tag, per device.
pub struct Gateway {
    devices: HashMap<u32, DeviceState>,
    suite: Suite,
    /// The frame type it opens (another protocol's frames are refused as `wrong_cipher`).
    proto: Proto,
    unauthenticated: bool,
    /// A counter older than the window is not refused here but opened and left to the store,
    /// whose unique key decides (the gateway workers: another member may never have stored it).
    old_to_store: bool,
    /// Failed tags a device may have before its frames are refused unopened.
    max_failed_tags: u64,
    reuse_log: Throttle,
    late_log: Throttle,
    /// The carrier whose envelope and compact header its frames come in (None: the link's own).
    carrier: Option<Carrier>,
    /// Its verdicts so far.
    pub tally: Tally,
}

impl Gateway {
    /// Provision sensor `devices` with keys derived from `master` for `suite`.
    pub fn new(
        suite: &Suite,
        master: &MasterKey,
        devices: impl IntoIterator<Item = u32>,
        window: u64,
        unauthenticated: bool,
    ) -> Result<Gateway, String> {
        let devices: Vec<u32> = devices.into_iter().collect();
        crate::gateway::replay::check_window_memory(devices.len() as u64, window, 1)?;
        let keyed = devices
            .into_iter()
            .map(|d| Ok((d, Keyed::derived(suite, master, Proto::Sensor, d, unauthenticated)?)))
            .collect::<Result<Vec<_>, String>>()?;
        Gateway::with_keyed(suite, Proto::Sensor, keyed, window, unauthenticated)
    }

    /// A gateway for frames of type `proto` whose devices' instances are given (a Modbus
    /// proxy's receiving direction, under its pair key).
    pub fn with_keyed(
        suite: &Suite,
        proto: Proto,
        keyed: Vec<(u32, Keyed)>,
        window: u64,
        unauthenticated: bool,
    ) -> Result<Gateway, String> {
        crate::gateway::replay::check_window_memory(keyed.len() as u64, window, 1)?;
        let mut map = HashMap::new();
        for (d, k) in keyed {
            if k.proto != proto {
                return Err(format!("device {d}: a {} key for a {} gateway", k.proto.label(), proto.label()));
            }
            map.insert(
                d,
                DeviceState {
                    keyed: k,
                    window: ReplayWindow::new(window)?,
                    failed_tags: 0,
                    floor: None,
                    recent: VecDeque::new(),
                },
            );
        }
        Ok(Gateway {
            devices: map,
            suite: suite.clone(),
            proto,
            unauthenticated,
            old_to_store: false,
            max_failed_tags: default_max_failed_tags(suite.tag_len(unauthenticated)),
            reuse_log: Throttle::default(),
            late_log: Throttle::default(),
            carrier: None,
            tally: Tally::default(),
        })
    }

    /// [`Gateway::new`] for frames on `carrier` (compact header, `crate::wire::compact`): each
    /// device (its DevAddr) under its carrier key of the carrier's join epoch.
    pub fn carried(
        suite: &Suite,
        master: &MasterKey,
        devices: impl IntoIterator<Item = u32>,
        window: u64,
        carrier: Carrier,
    ) -> Result<Gateway, String> {
        let devices: Vec<u32> = devices.into_iter().collect();
        crate::gateway::replay::check_window_memory(devices.len() as u64, window, 1)?;
        let keyed = devices
            .into_iter()
            .map(|d| Ok((d, carrier.keyed(suite, master, d)?)))
            .collect::<Result<Vec<_>, String>>()?;
        let mut g = Gateway::with_keyed(suite, Proto::Sensor, keyed, window, false)?;
        g.carrier = Some(carrier);
        Ok(g)
    }

    /// Open `frame` (its header parsed as `h`) with `keyed`: the link's own frame, or a compact
    /// FRMPayload in the carrier's envelope.
    fn open_keyed(
        carrier: Option<&Carrier>,
        keyed: &mut Keyed,
        h: &Header,
        frame: &[u8],
    ) -> Result<Vec<u8>, OpenError> {
        match carrier {
            None => keyed.open(h, frame),
            Some(c) => {
                let (_, payload) = compact::parse_envelope(c, frame).map_err(|_| OpenError::Malformed)?;
                compact::open(keyed, h, payload)
            }
        }
    }

    /// Refuse, per device, every counter at or below its mark (the highest counter accepted
    /// under this key by an earlier run, `gateway::accepted`): within the window below it as
    /// `replay`, further below as `too_old`. Devices not provisioned here are passed over.
    pub fn set_floors(&mut self, floors: &BTreeMap<u32, u64>) {
        for (d, &f) in floors {
            if let Some(st) = self.devices.get_mut(d) {
                st.floor = Some(f);
            }
        }
    }

    /// After `n` failed tags of one device an alarm is raised (counted in the tally, logged
    /// once) and the device's further frames are refused unopened ([`Refusal::TagBudget`]):
    /// each forgery attempt is a chance to pass a short tag, so the attempts per key are capped.
    pub fn with_max_failed_tags(mut self, n: u64) -> Result<Gateway, String> {
        self.set_max_failed_tags(n)?;
        Ok(self)
    }

    /// [`Gateway::with_max_failed_tags`] in place.
    pub fn set_max_failed_tags(&mut self, n: u64) -> Result<(), String> {
        if n == 0 {
            return Err("--max-failed-tags: must be at least 1".into());
        }
        self.max_failed_tags = n;
        Ok(())
    }

    /// A failed tag of `device`: counted; the budget's last one raises the alarm.
    fn bad_tag(&mut self, device: u32) -> Result<Opened, Refusal> {
        let max = self.max_failed_tags;
        let st = self.devices.get_mut(&device).expect("prechecked");
        st.failed_tags += 1;
        if st.failed_tags == max {
            self.tally.alarms += 1;
            eprintln!(
                "alarm: device {device}: {max} frames with a failed tag ({}); its further frames are refused \
                 (--max-failed-tags, docs/security.md)",
                self.suite.name()
            );
        }
        self.refuse(Refusal::BadTag)
    }

    fn budget_spent(&self, device: u32) -> bool {
        self.devices.get(&device).is_some_and(|st| st.failed_tags >= self.max_failed_tags)
    }

    /// This gateway as a member of a group whose store decides replays: a counter older than
    /// its window is opened (tag checked) and handed on instead of refused `too_old`; the window
    /// stays a fast path for the counters inside it and does not move for older ones.
    pub fn old_frames_to_store(mut self) -> Gateway {
        self.old_to_store = true;
        self
    }

    /// The floor's and the window's word on counter `c` of a device: `Ok(true)` fresh (accept
    /// moves the window), `Ok(false)` older than the window and left to the store, `Err` refused.
    fn window_check(old_to_store: bool, st: &DeviceState, c: u64) -> Result<bool, Refusal> {
        let w = &st.window;
        if let Some(f) = st.floor.filter(|&f| c <= f) {
            return Err(if f - c < w.size() { Refusal::Replay } else { Refusal::TooOld });
        }
        match w.check(c) {
            Verdict::Fresh => Ok(true),
            Verdict::Replay => Err(Refusal::Replay),
            Verdict::TooOld if old_to_store => Ok(false),
            Verdict::TooOld => Err(Refusal::TooOld),
        }
    }

    fn refuse(&mut self, r: Refusal) -> Result<Opened, Refusal> {
        self.tally.refused[r as usize] += 1;
        Err(r)
    }

    /// A refusal before the tag: a too-old frame is also a lateness alarm, and a replay is
    /// looked at further ([`Gateway::replay_or_reuse`]). `verified`: the frame's tag verdict
    /// if it is known already (the batch path).
    fn refuse_early(
        &mut self,
        r: Refusal,
        h: &Header,
        frame: &[u8],
        verified: Option<bool>,
    ) -> Result<Opened, Refusal> {
        match r {
            Refusal::Replay => self.replay_or_reuse(h, frame, verified),
            Refusal::TooOld => {
                self.tally.late_alarms += 1;
                if let Some(held) = self.late_log.pass() {
                    eprintln!(
                        "alarm: device {}: counter {} arrived later than the window allows (--window is the most \
                         lateness, in counters); refused too_old{}",
                        h.device,
                        h.counter,
                        more(held)
                    );
                }
                self.refuse(r)
            }
            r => self.refuse(r),
        }
    }

    /// A counter already accepted: the same frame again (its tag matches the one kept) is a
    /// replay; a frame with another tag that verifies means the device sealed twice under one
    /// counter (a reuse alarm; refused as a replay all the same); one that does not verify is
    /// a forgery (`bad_tag`, spending the budget).
    fn replay_or_reuse(&mut self, h: &Header, frame: &[u8], verified: Option<bool>) -> Result<Opened, Refusal> {
        let tag_len = self.suite.tag_len(self.unauthenticated);
        let st = self.devices.get_mut(&h.device).expect("prechecked");
        let kept = st.recent.iter().find(|(c, _)| *c == h.counter).map(|(_, t)| *t);
        let (Some(kept), false) = (kept, self.unauthenticated || tag_len == 0) else {
            return self.refuse(Refusal::Replay);
        };
        if tag_prefix(frame, tag_len) == kept {
            return self.refuse(Refusal::Replay);
        }
        let carrier = self.carrier.as_ref();
        let ok = verified.unwrap_or_else(|| Self::open_keyed(carrier, &mut st.keyed, h, frame).is_ok());
        if !ok {
            return self.bad_tag(h.device);
        }
        self.tally.reuse_alarms += 1;
        if let Some(held) = self.reuse_log.pass() {
            eprintln!(
                "alarm: device {}: counter {} arrived again with other bytes and a valid tag: the device sealed twice \
                 under one counter (nonce reuse; a rolled-back or copied counter state?); refused{}",
                h.device,
                h.counter,
                more(held)
            );
        }
        self.refuse(Refusal::Replay)
    }

    /// Record that the window accepted `c` from the frame `frame` (its tag, for the reuse alarm).
    fn remember(st: &mut DeviceState, c: u64, frame: &[u8], tag_len: usize) {
        if st.recent.len() == REUSE_SLOTS {
            st.recent.pop_front();
        } else if st.recent.capacity() == 0 {
            st.recent.reserve_exact(REUSE_SLOTS);
        }
        st.recent.push_back((c, tag_prefix(frame, tag_len)));
    }

    /// The checks before the window: structure, device, cipher and flags.
    fn precheck(&self, frame: &[u8]) -> Result<Header, Refusal> {
        let h = match &self.carrier {
            None => Header::parse(frame),
            Some(c) => compact::parse_envelope(c, frame).map(|(h, _)| h),
        }
        .map_err(|_| Refusal::Malformed)?;
        let want_flags = if self.unauthenticated { FLAG_UNAUTHENTICATED } else { 0 };
        if !self.devices.contains_key(&h.device) {
            return Err(Refusal::UnknownDevice);
        }
        if h.proto != self.proto || h.cipher != self.suite.id || h.flags != want_flags {
            return Err(Refusal::WrongCipher);
        }
        Ok(h)
    }

    /// Check and open one frame; on success the device's window has moved and the reading is
    /// returned for storing.
    pub fn open(&mut self, frame: &[u8]) -> Result<Opened, Refusal> {
        let h = match self.precheck(frame) {
            Ok(h) => h,
            Err(r) => return self.refuse(r),
        };
        let st = self.devices.get_mut(&h.device).expect("checked above");
        if st.failed_tags >= self.max_failed_tags {
            return self.refuse(Refusal::TagBudget);
        }
        let fresh = match Self::window_check(self.old_to_store, st, h.counter) {
            Ok(f) => f,
            Err(r) => return self.refuse_early(r, &h, frame, None),
        };
        let tag_len = self.suite.tag_len(self.unauthenticated);
        match Self::open_keyed(self.carrier.as_ref(), &mut st.keyed, &h, frame) {
            Ok(reading) => {
                if fresh {
                    st.window.accept(h.counter);
                    Self::remember(st, h.counter, frame, tag_len);
                }
                self.tally.accepted += 1;
                Ok(Opened { device: h.device, counter: h.counter, cipher: h.cipher, reading })
            }
            Err(OpenError::BadTag) => self.bad_tag(h.device),
            Err(OpenError::Malformed) => self.refuse(Refusal::Malformed),
        }
    }

    /// Does [`Gateway::open_many`] open this suite's frames together (bit-sliced DRACO)?
    pub fn opens_in_batches(&self) -> bool {
        !self.unauthenticated && self.suite.id == DRACO_BATCH_SUITE && self.carrier.is_none()
    }

    /// Open a batch of frames with exactly the verdicts and window moves of calling
    /// [`Gateway::open`] on each in order. For DRACO/rust-fast the frames that pass the
    /// structure, device, cipher and window checks are decrypted and tag-checked together on
    /// the bit-sliced multi-stream DRACO (`lwcbench_draco::batch`, one message per lane;
    /// docs/draco.md "gateway"), ~14× the single-stream path for 256 messages; other suites
    /// open one by one.
    ///
    /// Why the verdicts are the same: a window only ever moves forward, so a frame the window
    /// refuses before the batch is refused after it too (it goes through `open` in its turn,
    /// for the reason of that moment); the tag does not depend on the window; and each
    /// candidate's window is checked again, in order, when it is accepted (before its tag
    /// verdict, as in `open`), so two copies of one frame in a batch give one reading and one
    /// replay.
    pub fn open_many(&mut self, frames: &[&[u8]]) -> Vec<Result<Opened, Refusal>> {
        if !self.opens_in_batches() || frames.len() < 2 {
            return frames.iter().map(|f| self.open(f)).collect();
        }
        // Pass 1: the frames that pass every check before the cipher against the window as it
        // is now — the candidates for the batch.
        let mut parts: Vec<Option<Candidate>> = Vec::with_capacity(frames.len());
        let old_to_store = self.old_to_store;
        for f in frames {
            let p = self.precheck(f).ok().filter(|h| !self.budget_spent(h.device)).and_then(|h| {
                let st = self.devices.get_mut(&h.device).expect("prechecked");
                if Self::window_check(old_to_store, st, h.counter).is_err()
                    || f.len() < crate::wire::frame::HEADER_LEN + POLY_TAG
                {
                    return None;
                }
                let (key, iv) = st.keyed.draco_batch_parts(&h)?;
                Some((h, key, iv))
            });
            parts.push(p);
        }
        // Pass 2: decrypt and check the tags of the candidates at once.
        let items: Vec<lwcbench_draco::batch::TaggedItem> = frames
            .iter()
            .zip(&parts)
            .filter_map(|(f, p)| {
                let (_, key, iv) = p.as_ref()?;
                let (head, rest) = f.split_at(crate::wire::frame::HEADER_LEN);
                let (ct, tag) = rest.split_at(rest.len() - POLY_TAG);
                Some(lwcbench_draco::batch::TaggedItem { key, iv, ad: head, ct, tag: tag.try_into().ok()? })
            })
            .collect();
        let mut opened = lwcbench_draco::batch::open_batch_verified(&items).into_iter();
        drop(items);
        // Pass 3: verdicts in input order. A frame that was no candidate goes through `open`
        // (it is refused before the cipher, with the reason the window gives *now*: a replay
        // can have become too old); a candidate's window is checked again before its tag.
        let mut out = Vec::with_capacity(frames.len());
        for (f, p) in frames.iter().zip(parts) {
            let Some((h, _key, _iv)) = p else {
                out.push(self.open(f));
                continue;
            };
            let plain = opened.next().expect("one result per candidate");
            // the budget can have run out earlier in this batch
            if self.budget_spent(h.device) {
                out.push(self.refuse(Refusal::TagBudget));
                continue;
            }
            let st = self.devices.get_mut(&h.device).expect("prechecked");
            let fresh = match Self::window_check(old_to_store, st, h.counter) {
                Ok(f) => f,
                Err(r) => {
                    out.push(self.refuse_early(r, &h, f, Some(plain.is_ok())));
                    continue;
                }
            };
            let tag_len = self.suite.tag_len(self.unauthenticated);
            match plain {
                Ok(reading) => {
                    if fresh {
                        st.window.accept(h.counter);
                        Self::remember(st, h.counter, f, tag_len);
                    }
                    self.tally.accepted += 1;
                    out.push(Ok(Opened { device: h.device, counter: h.counter, cipher: h.cipher, reading }));
                }
                Err(_) => out.push(self.bad_tag(h.device)),
            }
        }
        out
    }
}

/// The first 8 bytes of a frame's tag (its last `tag_len` bytes), zero-padded.
fn tag_prefix(frame: &[u8], tag_len: usize) -> [u8; 8] {
    let tag = &frame[frame.len().saturating_sub(tag_len)..];
    let mut out = [0u8; 8];
    let n = tag.len().min(8);
    out[..n].copy_from_slice(&tag[..n]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn master() -> MasterKey {
        MasterKey::from_bytes([7u8; 32])
    }

    /// Frames of devices 1..=3 (counters 1..), sealed by the devices' single-stream path.
    fn sealed(suite: &Suite, n: u64) -> Vec<Vec<u8>> {
        let m = master();
        let mut out = Vec::new();
        for c in 1..=n {
            for d in 1..=3u32 {
                let mut k = Keyed::derived(suite, &m, Proto::Sensor, d, false).unwrap();
                let mut f = Vec::new();
                k.seal(d, c, &[d as u8, c as u8, 0xAB, 0xCD], &mut f).unwrap();
                out.push(f);
            }
        }
        out
    }

    fn gateway(suite: &Suite) -> Gateway {
        Gateway::new(suite, &master(), 1..=3, 8, false).unwrap()
    }

    /// On the LoRaWAN carrier a repeated FCnt (a replayed uplink, or a stack reset without a
    /// re-join that seals new bytes under an old FCnt) is refused; an FCnt, DevAddr or epoch
    /// changed in transit fails the tag; a frame with the link's own header is malformed here.
    #[test]
    fn carrier_fcnt_repeated_or_reset_is_refused() {
        let s = crate::wire::suite::find("Ascon-AEAD128").unwrap();
        let dev = 0x2601_0000;
        let car = Carrier { dev_addr: dev, fcnt_from: None, epoch: 0 };
        let mut gw = Gateway::carried(&s, &master(), [dev], 64, car).unwrap();
        let seal = |c: &Carrier, fcnt: u32, r: &[u8]| {
            let mut k = c.keyed(&s, &master(), dev).unwrap();
            let mut p = Vec::new();
            compact::seal(&mut k, dev, c.counter(fcnt), r, &mut p).unwrap();
            compact::envelope(dev, fcnt, &p)
        };
        let f5 = seal(&car, 5, b"a");
        assert_eq!(f5.len(), 8 + 1 + 1 + 16, "envelope + compact byte + reading + tag");
        assert_eq!(gw.open(&f5).unwrap(), Opened { device: dev, counter: 5, cipher: s.id, reading: b"a".to_vec() });
        assert_eq!(gw.open(&f5), Err(Refusal::Replay), "replayed uplink");
        assert!(gw.open(&seal(&car, 6, b"b")).is_ok());
        assert_eq!(gw.open(&seal(&car, 5, b"c")), Err(Refusal::Replay), "FCnt reset: new bytes under FCnt 5");
        assert_eq!(gw.tally.reuse_alarms, 1);
        let mut moved = seal(&car, 7, b"d");
        moved[7] = 8; // FCnt 7 → 8 in the envelope
        assert_eq!(gw.open(&moved), Err(Refusal::BadTag));
        moved[7] = 7;
        moved[3] ^= 1; // another DevAddr
        assert_eq!(gw.open(&moved), Err(Refusal::UnknownDevice));
        let later = seal(&Carrier { epoch: 1, ..car }, 9, b"e");
        assert_eq!(gw.open(&later), Err(Refusal::BadTag), "epoch 1's key and counter at an epoch-0 gateway");
        let mut own = Vec::new();
        Keyed::derived(&s, &master(), Proto::Sensor, dev, false).unwrap().seal(dev, 10, b"f", &mut own).unwrap();
        assert_eq!(gw.open(&own), Err(Refusal::Malformed));
        assert_eq!(gw.tally.accepted, 2);
    }

    /// Frame `i` of `base`, altered: 0 as is, 1 a flipped tag bit, 2 a flipped ciphertext bit,
    /// 3 cut short (header + 3 bytes), 4 an unknown device, 5 another cipher id.
    fn variant(f: &[u8], how: u8) -> Vec<u8> {
        let mut v = f.to_vec();
        let n = v.len();
        match how {
            1 => v[n - 1] ^= 1,
            2 => v[crate::wire::frame::HEADER_LEN] ^= 0x80,
            3 => v.truncate(crate::wire::frame::HEADER_LEN + 3),
            4 => v[crate::wire::frame::AT_DEVICE].copy_from_slice(&99u32.to_be_bytes()),
            5 => v[crate::wire::frame::AT_CIPHER] = 35,
            _ => {}
        }
        v
    }

    /// Hand-built sequence: every refusal reason, two copies of one frame in a batch, a frame
    /// already accepted by an earlier batch, and one that the batch's own acceptances push
    /// out of the window.
    #[test]
    fn batch_opening_gives_the_verdicts_of_one_by_one() {
        let suite = crate::wire::suite::find("DRACO/rust-fast").unwrap();
        assert_eq!(suite.id, DRACO_BATCH_SUITE);
        let fr = sealed(&suite, 20); // index = 3·(counter−1) + (device−1)
        let at = |d: u32, c: u64| fr[(3 * (c - 1) + (d as u64 - 1)) as usize].clone();
        let batches: Vec<Vec<Vec<u8>>> = vec![
            vec![at(1, 1), at(2, 1), at(1, 1), at(3, 1)],
            vec![
                at(1, 1), // replay of batch 1
                at(1, 2),
                variant(&at(2, 2), 1), // bad tag
                variant(&at(3, 2), 2), // bad ciphertext → bad tag
                variant(&at(1, 3), 3), // short
                variant(&at(1, 4), 4), // unknown device
                variant(&at(1, 5), 5), // wrong cipher
                at(2, 2),              // the real one after its forgery
                at(3, 3),
                at(3, 20), // moves device 3's window to 20…
                at(3, 4),  // …so 4 is too old now (window 8)
                at(3, 2),
            ],
        ];
        let (mut one, mut many) = (gateway(&suite), gateway(&suite));
        for b in &batches {
            let want: Vec<_> = b.iter().map(|f| one.open(f)).collect();
            let refs: Vec<&[u8]> = b.iter().map(|f| f.as_slice()).collect();
            let got = many.open_many(&refs);
            assert_eq!(got, want);
        }
        assert_eq!(many.tally, one.tally);
        // and the sequence exercised what it claims
        for r in Refusal::ALL.into_iter().filter(|&r| r != Refusal::TagBudget) {
            assert!(one.tally.count(r) > 0, "no {r:?} in the hand-built sequence");
        }
        assert_eq!(one.tally.accepted, 7); // 3 in batch 1; (1,2), (2,2), (3,3), (3,20) in batch 2
    }

    /// TinyJAMBU-128 (64-bit tag), budget 3: three forgeries of device 1 are bad tags and the
    /// third raises one alarm; then device 1's genuine frame and a fourth forgery are refused
    /// unopened, device 2 is untouched. Defaults: 2^16 for 8-byte tags, 2^20 for 16-byte ones.
    /// The sensor gateway opens the misuse-resistant suites' frames (each device under its
    /// own derived key), refuses a replay, a flipped byte anywhere and another device's id.
    #[test]
    fn gateway_opens_the_misuse_resistant_suites() {
        for name in ["AES-128-GCM-SIV", "AES-256-GCM-SIV", "XChaCha20-Poly1305"] {
            let suite = crate::wire::suite::find(name).unwrap();
            let mut g = gateway(&suite);
            let frames = sealed(&suite, 2);
            for f in &frames {
                for i in 0..f.len() {
                    let mut t = f.clone();
                    t[i] ^= 0x01;
                    assert!(g.open(&t).is_err(), "{name}: byte {i} flipped was accepted");
                }
                let o = g.open(f).unwrap();
                assert_eq!(o.reading, [o.device as u8, o.counter as u8, 0xAB, 0xCD], "{name}");
                assert_eq!(g.open(f), Err(Refusal::Replay), "{name}");
            }
            assert_eq!(g.open(&variant(&frames[0], 4)), Err(Refusal::UnknownDevice), "{name}");
        }
    }

    #[test]
    fn failed_tag_budget_raises_one_alarm_and_refuses_the_device() {
        assert_eq!((default_max_failed_tags(8), default_max_failed_tags(16)), (65_536, 1_048_576));
        let suite = crate::wire::suite::find("TinyJAMBU-128").unwrap();
        assert_eq!(suite.tag_len(false), 8);
        let fr = sealed(&suite, 6); // index = 3·(counter−1) + (device−1)
        let at = |d: u32, c: u64| fr[(3 * (c - 1) + (d as u64 - 1)) as usize].clone();
        let mut g = gateway(&suite).with_max_failed_tags(3).unwrap();
        for c in 1..=3 {
            assert_eq!(g.open(&variant(&at(1, c), 1)), Err(Refusal::BadTag));
            assert_eq!(g.tally.alarms, u64::from(c == 3));
        }
        assert_eq!(g.open(&at(1, 4)), Err(Refusal::TagBudget));
        assert_eq!(g.open(&variant(&at(1, 5), 1)), Err(Refusal::TagBudget));
        assert!(g.open(&at(2, 1)).is_ok());
        assert_eq!((g.tally.alarms, g.tally.count(Refusal::BadTag), g.tally.count(Refusal::TagBudget)), (1, 3, 2));
        assert!(gateway(&suite).with_max_failed_tags(0).is_err());
    }

    /// The batch path spends the budget as one-by-one does, also when it runs out mid-batch.
    #[test]
    fn batch_opening_spends_the_budget_as_one_by_one() {
        let suite = crate::wire::suite::find("DRACO/rust-fast").unwrap();
        let fr = sealed(&suite, 6);
        let at = |d: u32, c: u64| fr[(3 * (c - 1) + (d as u64 - 1)) as usize].clone();
        let b: Vec<Vec<u8>> = vec![
            variant(&at(2, 1), 1),
            at(1, 1),
            variant(&at(2, 2), 2),
            at(2, 3), // refused: the budget (2) ran out two frames ago
            at(3, 1),
            variant(&at(2, 4), 1),
        ];
        let mut one = gateway(&suite).with_max_failed_tags(2).unwrap();
        let mut many = gateway(&suite).with_max_failed_tags(2).unwrap();
        let want: Vec<_> = b.iter().map(|f| one.open(f)).collect();
        let refs: Vec<&[u8]> = b.iter().map(|f| f.as_slice()).collect();
        assert_eq!(many.open_many(&refs), want);
        assert_eq!(many.tally, one.tally);
        assert_eq!(want[3], Err(Refusal::TagBudget));
        assert_eq!((one.tally.alarms, one.tally.accepted), (1, 2));
    }

    /// Device 1 of `suite` sealing `reading` under counter `c`.
    fn one(suite: &Suite, d: u32, c: u64, reading: &[u8]) -> Vec<u8> {
        let mut k = Keyed::derived(suite, &master(), Proto::Sensor, d, false).unwrap();
        let mut f = Vec::new();
        k.seal(d, c, reading, &mut f).unwrap();
        f
    }

    /// An earlier run's mark (device 1 accepted up to 10) in a fresh gateway, window 4: 10 and
    /// 7 are replays (within 4 of the mark), 6 and 1 too old (and lateness alarms), whatever
    /// the window says; 11 is fresh; device 2 has no mark. The same in a store-decides member
    /// (`old_frames_to_store`): below the mark nothing is left to the store.
    #[test]
    fn the_accepted_mark_refuses_an_earlier_runs_counters() {
        let suite = crate::wire::suite::find("Ascon-AEAD128").unwrap();
        for member in [false, true] {
            let mut g = Gateway::new(&suite, &master(), 1..=2, 4, false).unwrap();
            if member {
                g = g.old_frames_to_store();
            }
            g.set_floors(&[(1, 10), (99, 3)].into_iter().collect());
            let v: Vec<_> =
                [10, 7, 6, 1, 11].iter().map(|&c| g.open(&one(&suite, 1, c, b"r")).map(|o| o.counter)).collect();
            use Refusal::*;
            assert_eq!(v, vec![Err(Replay), Err(Replay), Err(TooOld), Err(TooOld), Ok(11)], "member {member}");
            assert_eq!(g.open(&one(&suite, 2, 1, b"r")).map(|o| o.counter), Ok(1));
            assert_eq!((g.tally.late_alarms, g.tally.reuse_alarms, g.tally.accepted), (2, 0, 2));
        }
    }

    /// Counter 3 of device 1 accepted with reading A; the same frame again is a plain replay;
    /// reading B under counter 3 (a device sealing twice under one counter) verifies: a reuse
    /// alarm, refused; B with a flipped tag bit is a forgery (bad_tag). The bit-sliced batch
    /// path gives the same verdicts and tally, also for A and B in one batch.
    #[test]
    fn another_frame_under_an_accepted_counter_raises_the_reuse_alarm() {
        for name in ["Ascon-AEAD128", "DRACO/rust-fast"] {
            let suite = crate::wire::suite::find(name).unwrap();
            let (a, b) = (one(&suite, 1, 3, b"reading A"), one(&suite, 1, 3, b"reading B"));
            let forged = variant(&b, 1);
            let seq: Vec<Vec<u8>> = vec![a.clone(), a.clone(), b.clone(), forged, b.clone()];
            let mut g = gateway(&suite);
            let got: Vec<_> = seq.iter().map(|f| g.open(f).map(|o| o.reading)).collect();
            use Refusal::*;
            assert_eq!(
                got,
                vec![Ok(b"reading A".to_vec()), Err(Replay), Err(Replay), Err(BadTag), Err(Replay)],
                "{name}"
            );
            assert_eq!((g.tally.reuse_alarms, g.tally.count(Replay), g.tally.count(BadTag)), (2, 3, 1), "{name}");
            let mut many = gateway(&suite);
            let refs: Vec<&[u8]> = seq.iter().map(|f| f.as_slice()).collect();
            let got_many: Vec<_> = many.open_many(&refs).into_iter().map(|r| r.map(|o| o.reading)).collect();
            assert_eq!(got_many, got, "{name}");
            assert_eq!(many.tally, g.tally, "{name}");
        }
    }

    /// Only the last REUSE_SLOTS accepted counters keep their tags: a counter reused further
    /// back is a plain replay (the memory bound: 512 B per device).
    #[test]
    fn reuse_detection_keeps_a_bounded_number_of_tags() {
        let suite = crate::wire::suite::find("Ascon-AEAD128").unwrap();
        let mut g = Gateway::new(&suite, &master(), 1..=1, 1024, false).unwrap();
        for c in 1..=(REUSE_SLOTS as u64 + 1) {
            g.open(&one(&suite, 1, c, b"x")).unwrap();
        }
        assert_eq!(g.devices[&1].recent.len(), REUSE_SLOTS);
        assert_eq!(g.open(&one(&suite, 1, 1, b"y")), Err(Refusal::Replay)); // slid out: no alarm
        assert_eq!(g.tally.reuse_alarms, 0);
        assert_eq!(g.open(&one(&suite, 1, 2, b"y")), Err(Refusal::Replay)); // still kept: alarm
        assert_eq!(g.tally.reuse_alarms, 1);
    }

    /// 100,000 devices × a window of 2^20 would take 12.2 GiB of bitmaps: refused before any
    /// device is provisioned.
    #[test]
    fn devices_times_window_is_bounded() {
        let suite = crate::wire::suite::find("Ascon-AEAD128").unwrap();
        let e = Gateway::new(&suite, &master(), 0..100_000, 1 << 20, false).err().expect("refused");
        assert!(e.starts_with("--devices/--window: 100000 devices with a window of 1048576 need 12.2 GiB"), "{e}");
        assert!(Gateway::new(&suite, &master(), 0..1000, 1 << 20, false).is_ok());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Random batches of genuine, altered and repeated frames: same verdicts, same tally.
        #[test]
        fn random_batches_match_one_by_one(
            picks in proptest::collection::vec((0usize..30, 0u8..8), 1..60),
            cut in 1usize..8,
        ) {
            let suite = crate::wire::suite::find("DRACO/rust-fast").unwrap();
            let fr = sealed(&suite, 10);
            let seq: Vec<Vec<u8>> = picks.iter().map(|&(i, how)| variant(&fr[i], how)).collect();
            let (mut one, mut many) = (gateway(&suite), gateway(&suite));
            for b in seq.chunks(cut) {
                let want: Vec<_> = b.iter().map(|f| one.open(f)).collect();
                let refs: Vec<&[u8]> = b.iter().map(|f| f.as_slice()).collect();
                prop_assert_eq!(many.open_many(&refs), want);
            }
            prop_assert_eq!(&many.tally, &one.tally);
        }
    }
}
