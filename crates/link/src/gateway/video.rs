//! The server side of video on the link: check, open and reassemble a camera's frame parts
//! (wire::video) with bounded memory.
//!
//! Per part, in this order (each refusal counted under one reason, as for sensor frames):
//! structure (version 2, lengths that match the header) → device → cipher and unsafe flag →
//! replay floor and window on the part's counter → tag. Only an authentic part moves the window
//! and only an authentic part may open a frame's reassembly buffer, so forged, replayed or
//! unknown-device parts never allocate anything. At most `max_in_flight` frames are in reassembly at a time
//! (each at most `wire::video::MAX_VIDEO_FRAME` bytes); a new frame beyond that makes the oldest
//! one lost, and a frame not complete `deadline_ns` after its first part arrived is lost. A
//! second window, over frame numbers, remembers which frames are finished (delivered or lost),
//! so a late part of a finished frame never opens it again.
//!
//! Across sessions the window alone is not enough (a later session's window starts empty, inside
//! the counters an earlier session accepted): a floor, the highest counter earlier sessions
//! accepted ([`ReplayState`], `KEY.video-replay`), refuses every part at or below it as `replay`.
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::device::counter::write_durable;
use crate::gateway::checks::{Refusal, Tally};
use crate::gateway::replay::{ReplayWindow, Verdict};
use crate::wire::frame::{FLAG_UNAUTHENTICATED, MAX_COUNTER};
use crate::wire::keys::MasterKey;
use crate::wire::suite::{Keyed, OpenError};
use crate::wire::video::{open_part, part_range, PartHeader};

/// Why a frame was given up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LostWhy {
    /// Its deadline passed with parts missing.
    Deadline,
    /// A newer frame needed its place (the in-flight bound).
    Evicted,
    /// Still incomplete when the run ended.
    AtEnd,
}

/// What one received message did.
#[derive(Debug, PartialEq, Eq)]
pub enum PartEvent {
    /// Refused (counted in the tally).
    Refused(Refusal),
    /// Authentic, but its frame (the number) is already finished (delivered or lost) or its
    /// header disagrees with the frame's earlier parts; dropped.
    Ignored(u32),
    /// Stored in its frame (the number), which is still incomplete.
    Stored(u32),
    /// The last missing part: the frame is whole.
    Complete(Frame),
}

/// A frame reassembled from authentic parts.
#[derive(Debug, PartialEq, Eq)]
pub struct Frame {
    /// The frame number.
    pub number: u32,
    /// Parts it came in.
    pub parts: u16,
    /// The frame's bytes.
    pub data: Vec<u8>,
    /// When its first part arrived (ns, `crate::clock::now_ns`).
    pub first_ns: u64,
}

struct Partial {
    first_ns: u64,
    count: u16,
    have: Vec<bool>,
    missing: u16,
    data: Vec<u8>,
}

/// Reassembly for one camera (device id) under one key.
pub struct Reassembler {
    device: u32,
    keyed: Keyed,
    unauthenticated: bool,
    parts_window: ReplayWindow,
    /// Parts at or below this counter were accepted by an earlier session (or may have been).
    floor: Option<u64>,
    /// The highest counter accepted in this session.
    top: Option<u64>,
    frames_done: ReplayWindow,
    in_flight: BTreeMap<u32, Partial>,
    max_in_flight: usize,
    deadline_ns: u64,
    /// Its verdicts on parts.
    pub tally: Tally,
    /// Authentic parts dropped: their frame was finished or their header disagreed.
    pub ignored: u64,
}

impl Reassembler {
    /// Reassembly for `device` opening with `keyed`: a replay window of `window` part counters,
    /// at most `max_in_flight` frames at a time, a frame given up `deadline_ns` after its first part.
    pub fn new(
        device: u32,
        keyed: Keyed,
        unauthenticated: bool,
        window: u64,
        max_in_flight: usize,
        deadline_ns: u64,
    ) -> Result<Reassembler, String> {
        Ok(Reassembler {
            device,
            keyed,
            unauthenticated,
            parts_window: ReplayWindow::new(window)?,
            floor: None,
            top: None,
            frames_done: ReplayWindow::new(window)?,
            in_flight: BTreeMap::new(),
            max_in_flight: max_in_flight.max(1),
            deadline_ns,
            tally: Tally::default(),
            ignored: 0,
        })
    }

    /// Refuse every part whose counter is at or below `floor` as `replay` (an earlier session's).
    pub fn set_floor(&mut self, floor: Option<u64>) {
        self.floor = floor;
    }

    /// The highest part counter this session accepted.
    pub fn top(&self) -> Option<u64> {
        self.top
    }

    /// The camera (device id) this reassembles.
    pub fn device(&self) -> u32 {
        self.device
    }

    /// Frames in reassembly now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    fn refuse(&mut self, r: Refusal) -> PartEvent {
        self.tally.refused[r as usize] += 1;
        PartEvent::Refused(r)
    }

    /// Take one received message at time `now_ns`. Frames this makes lost (the in-flight bound)
    /// are appended to `lost`.
    pub fn push(&mut self, msg: &[u8], now_ns: u64, lost: &mut Vec<(u32, LostWhy)>) -> PartEvent {
        let Ok(h) = PartHeader::parse(msg, self.keyed.nonce_and_tag_len()) else {
            return self.refuse(Refusal::Malformed);
        };
        if h.device != self.device {
            return self.refuse(Refusal::UnknownDevice);
        }
        let want_flags = if self.unauthenticated { FLAG_UNAUTHENTICATED } else { 0 };
        if h.cipher != self.keyed.suite.id || h.flags != want_flags {
            return self.refuse(Refusal::WrongCipher);
        }
        if self.floor.is_some_and(|f| h.counter <= f) {
            return self.refuse(Refusal::Replay);
        }
        match self.parts_window.check(h.counter) {
            Verdict::Fresh => {}
            Verdict::Replay => return self.refuse(Refusal::Replay),
            Verdict::TooOld => return self.refuse(Refusal::TooOld),
        }
        let plain = match open_part(&mut self.keyed, &h, msg) {
            Ok(p) => p,
            Err(OpenError::BadTag) => return self.refuse(Refusal::BadTag),
            Err(OpenError::Malformed) => return self.refuse(Refusal::Malformed),
        };
        self.parts_window.accept(h.counter);
        self.top = self.top.max(Some(h.counter));
        self.tally.accepted += 1;
        if self.frames_done.check(h.frame.into()) != Verdict::Fresh {
            self.ignored += 1;
            return PartEvent::Ignored(h.frame);
        }
        if !self.in_flight.contains_key(&h.frame) {
            while self.in_flight.len() >= self.max_in_flight {
                let oldest = self.oldest().expect("in flight is not empty");
                self.finish(oldest);
                lost.push((oldest, LostWhy::Evicted));
            }
            // The frame bytes are authenticated and at most MAX_VIDEO_FRAME.
            self.in_flight.insert(
                h.frame,
                Partial {
                    first_ns: now_ns,
                    count: h.count,
                    have: vec![false; h.count as usize],
                    missing: h.count,
                    data: vec![0u8; h.frame_bytes as usize],
                },
            );
        }
        let p = self.in_flight.get_mut(&h.frame).expect("inserted above");
        if p.count != h.count || p.data.len() != h.frame_bytes as usize || p.have[h.index as usize] {
            self.ignored += 1;
            return PartEvent::Ignored(h.frame);
        }
        let at = part_range(p.data.len(), p.count as usize, h.index as usize);
        p.data[at].copy_from_slice(&plain);
        p.have[h.index as usize] = true;
        p.missing -= 1;
        if p.missing > 0 {
            return PartEvent::Stored(h.frame);
        }
        let p = self.in_flight.remove(&h.frame).expect("present");
        self.frames_done.accept(h.frame.into());
        PartEvent::Complete(Frame { number: h.frame, parts: p.count, data: p.data, first_ns: p.first_ns })
    }

    /// The frame in flight whose first part arrived first.
    fn oldest(&self) -> Option<u32> {
        self.in_flight.iter().min_by_key(|(n, p)| (p.first_ns, **n)).map(|(n, _)| *n)
    }

    fn finish(&mut self, n: u32) {
        self.in_flight.remove(&n);
        self.frames_done.accept(n.into());
    }

    /// Give up the frames whose deadline passed by `now_ns`; returns their numbers.
    pub fn expire(&mut self, now_ns: u64) -> Vec<u32> {
        let late: Vec<u32> = self
            .in_flight
            .iter()
            .filter(|(_, p)| now_ns.saturating_sub(p.first_ns) > self.deadline_ns)
            .map(|(n, _)| *n)
            .collect();
        for n in &late {
            self.finish(*n);
        }
        late
    }

    /// Give up every frame still in reassembly (the run ends); returns their numbers.
    pub fn end(&mut self) -> Vec<u32> {
        let all: Vec<u32> = self.in_flight.keys().copied().collect();
        for n in &all {
            self.finish(*n);
        }
        all
    }
}

/// The video replay state of the key in `key_file`: `KEY_FILE.video-replay`, beside the key (and
/// its counter state), so every session under one key continues one state.
pub fn replay_state_beside_key(key_file: &Path) -> PathBuf {
    let mut s = key_file.as_os_str().to_os_string();
    s.push(".video-replay");
    PathBuf::from(s)
}

/// First line of a video replay state file.
pub const REPLAY_MAGIC: &str = "lwcbench-video-replay v1";
/// Larger than any real file (one short line per device); bounds what is read.
const MAX_REPLAY_STATE_BYTES: u64 = 1 << 20;

/// The highest part counter the video server accepted, per device, under one key, across
/// sessions (docs/link.md "Video frames (version 2)"):
/// ```text
/// lwcbench-video-replay v1
/// key <the master key's fingerprint, 32 hex digits>
/// device D accepted N      (one line per device)
/// ```
/// Written durably (temp file, fsync, rename). One process uses it at a time: a session holds
/// the key's counter state lock while it runs.
#[derive(Debug)]
pub struct ReplayState {
    path: PathBuf,
    fingerprint: String,
    accepted: BTreeMap<u32, u64>,
    existed: bool,
}

impl ReplayState {
    /// Read the file at `path` for the key `master` (missing: nothing recorded yet).
    pub fn open(path: &Path, master: &MasterKey) -> Result<ReplayState, String> {
        let p = path.display();
        let fingerprint = master.fingerprint();
        let (accepted, existed) = match std::fs::File::open(path) {
            Ok(f) => {
                let mut text = String::new();
                f.take(MAX_REPLAY_STATE_BYTES + 1)
                    .read_to_string(&mut text)
                    .map_err(|e| format!("video replay state {p}: cannot read it as text: {e}"))?;
                if text.len() as u64 > MAX_REPLAY_STATE_BYTES {
                    return Err(format!("video replay state {p}: larger than 1 MiB"));
                }
                (parse_replay(&text, &fingerprint).map_err(|e| format!("video replay state {p}: {e}"))?, true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (BTreeMap::new(), false),
            Err(e) => return Err(format!("video replay state {p}: {e}")),
        };
        Ok(ReplayState { path: path.to_path_buf(), fingerprint, accepted, existed })
    }

    /// Whether the file existed when it was opened.
    pub fn existed(&self) -> bool {
        self.existed
    }

    /// The highest counter recorded as accepted from `device`.
    pub fn accepted(&self, device: u32) -> Option<u64> {
        self.accepted.get(&device).copied()
    }

    /// Record `top` for `device` durably, unless it is recorded already (never lowered).
    pub fn save(&mut self, device: u32, top: u64) -> Result<(), String> {
        if self.accepted(device).is_some_and(|a| a >= top) {
            return Ok(());
        }
        let before = self.accepted.insert(device, top);
        let mut text = format!("{REPLAY_MAGIC}\nkey {}\n", self.fingerprint);
        for (d, n) in &self.accepted {
            text.push_str(&format!("device {d} accepted {n}\n"));
        }
        write_durable(&self.path, text.as_bytes()).map_err(|e| {
            match before {
                Some(b) => self.accepted.insert(device, b),
                None => self.accepted.remove(&device),
            };
            format!("video replay state {}: cannot write: {e}", self.path.display())
        })
    }
}

/// Parse a replay state file's text for the key with fingerprint `fp`; errors name the line.
fn parse_replay(text: &str, fp: &str) -> Result<BTreeMap<u32, u64>, String> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
    if lines.next().map(|(_, l)| l) != Some(REPLAY_MAGIC) {
        return Err(format!("line 1: expected '{REPLAY_MAGIC}'"));
    }
    match lines.next().and_then(|(_, l)| l.strip_prefix("key ")) {
        Some(k) if k == fp => {}
        Some(_) => {
            return Err(format!(
                "line 2: written for another key (this key's fingerprint is {fp}); a replay state serves one key"
            ))
        }
        None => return Err("line 2: expected 'key FINGERPRINT'".into()),
    }
    let mut accepted = BTreeMap::new();
    for (n, line) in lines {
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let [word, d, acc, c] = f[..] else { return Err(format!("line {n}: expected 'device D accepted N'")) };
        if (word, acc) != ("device", "accepted") {
            return Err(format!("line {n}: expected 'device D accepted N'"));
        }
        let d: u32 = d.parse().map_err(|_| format!("line {n}: device is not a number in 0..=4294967295"))?;
        let c = c.parse::<u64>().ok().filter(|&c| c <= MAX_COUNTER);
        let Some(c) = c else { return Err(format!("line {n}: accepted counter is not a number in 0..2^63")) };
        if accepted.insert(d, c).is_some() {
            return Err(format!("line {n}: device {d} again; which counter holds is unknown"));
        }
    }
    Ok(accepted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::frame::Proto;
    use crate::wire::suite;
    use crate::wire::video::seal_frame;

    const KEY: [u8; 16] = [3u8; 16];

    fn keyed() -> Keyed {
        Keyed::new(&suite::find("Ascon-AEAD128").unwrap(), &KEY, Proto::Video, false).unwrap()
    }

    /// Frame `n` of 3,000 bytes in parts of at most 1,472 B: ⌈3000 / 1429⌉ = 3 parts.
    fn parts(n: u32, first_counter: u64) -> (Vec<u8>, Vec<Vec<u8>>) {
        let data: Vec<u8> = (0..3000u32).map(|i| (i ^ n) as u8).collect();
        let mut c = first_counter;
        let p = seal_frame(&mut keyed(), 4, n, &data, 1472, false, || {
            c += 1;
            Ok(c - 1)
        })
        .unwrap();
        assert_eq!(p.len(), 3);
        (data, p)
    }

    fn reasm(max_in_flight: usize) -> Reassembler {
        Reassembler::new(4, keyed(), false, 1024, max_in_flight, 1_000).unwrap()
    }

    #[test]
    fn out_of_order_parts_reassemble() {
        let (data, p) = parts(7, 0);
        let mut r = reasm(4);
        let mut lost = Vec::new();
        assert_eq!(r.push(&p[2], 10, &mut lost), PartEvent::Stored(7));
        assert_eq!(r.push(&p[0], 11, &mut lost), PartEvent::Stored(7));
        let PartEvent::Complete(f) = r.push(&p[1], 12, &mut lost) else { panic!("not complete") };
        assert_eq!((f.number, f.parts, f.first_ns), (7, 3, 10));
        assert_eq!(f.data, data);
        assert!(lost.is_empty());
        assert_eq!(r.in_flight(), 0);
    }

    #[test]
    fn tampered_part_rejects_the_frame() {
        let (_, p) = parts(1, 0);
        let mut r = reasm(4);
        let mut lost = Vec::new();
        r.push(&p[0], 0, &mut lost);
        let mut bad = p[1].clone();
        bad[100] ^= 0x80;
        assert_eq!(r.push(&bad, 1, &mut lost), PartEvent::Refused(Refusal::BadTag));
        assert_eq!(r.push(&p[2], 2, &mut lost), PartEvent::Stored(1));
        // the frame never completes: its deadline (1,000 ns) makes it lost
        assert_eq!(r.expire(500), Vec::<u32>::new());
        assert_eq!(r.expire(1_001), vec![1]);
        // the genuine part arriving after the deadline does not reopen it
        assert_eq!(r.push(&p[1], 1_002, &mut lost), PartEvent::Ignored(1));
        assert_eq!(r.in_flight(), 0);
        assert_eq!(r.tally.count(Refusal::BadTag), 1);
    }

    #[test]
    fn forged_parts_allocate_nothing() {
        let (_, p) = parts(2, 0);
        let mut r = reasm(1);
        let mut lost = Vec::new();
        for n in 0..100u8 {
            let mut f = p[0].clone();
            f[15] = n + 1; // another frame number: the tag no longer matches
            assert_eq!(r.push(&f, 0, &mut lost), PartEvent::Refused(Refusal::BadTag));
        }
        assert_eq!(r.in_flight(), 0);
        assert!(lost.is_empty());
        let mut other = p[0].clone();
        other[6] = 5; // device 5 is not this camera
        assert_eq!(r.push(&other, 0, &mut lost), PartEvent::Refused(Refusal::UnknownDevice));
        assert_eq!(r.push(&p[0][..30], 0, &mut lost), PartEvent::Refused(Refusal::Malformed));
    }

    #[test]
    fn replayed_part_is_not_reassembled_twice() {
        let (_, p) = parts(3, 0);
        let mut r = reasm(4);
        let mut lost = Vec::new();
        for part in &p[..2] {
            r.push(part, 0, &mut lost);
        }
        assert!(matches!(r.push(&p[2], 0, &mut lost), PartEvent::Complete(_)));
        for part in &p {
            assert_eq!(r.push(part, 1, &mut lost), PartEvent::Refused(Refusal::Replay));
        }
        assert_eq!(r.in_flight(), 0);
        assert_eq!(r.tally.accepted, 3);
    }

    #[test]
    fn in_flight_bound_makes_the_oldest_lost() {
        let mut r = reasm(2);
        let mut lost = Vec::new();
        let frames: Vec<_> = (0..3u32).map(|n| parts(n, 10 * n as u64)).collect();
        r.push(&frames[0].1[0], 1, &mut lost);
        r.push(&frames[1].1[0], 2, &mut lost);
        assert_eq!(r.in_flight(), 2);
        r.push(&frames[2].1[0], 3, &mut lost);
        assert_eq!(lost, vec![(0, LostWhy::Evicted)]);
        assert_eq!(r.in_flight(), 2);
        assert_eq!(r.push(&frames[0].1[1], 4, &mut lost), PartEvent::Ignored(0));
        assert_eq!(r.end(), vec![1, 2]);
    }

    /// Issue 36 item 5: parts at or below the floor (an earlier session's counters) are
    /// refused as replays before their tag is checked; the first counter above it is accepted.
    #[test]
    fn floor_refuses_an_earlier_sessions_parts() {
        let (_, old) = parts(1, 0); // counters 0, 1, 2
        let (data, new) = parts(1, 3); // counters 3, 4, 5
        let mut r = reasm(4);
        r.set_floor(Some(2));
        let mut lost = Vec::new();
        for p in &old {
            assert_eq!(r.push(p, 0, &mut lost), PartEvent::Refused(Refusal::Replay));
        }
        assert_eq!(r.in_flight(), 0);
        assert_eq!(r.top(), None);
        r.push(&new[0], 1, &mut lost);
        r.push(&new[1], 1, &mut lost);
        let PartEvent::Complete(f) = r.push(&new[2], 1, &mut lost) else { panic!("not complete") };
        assert_eq!(f.data, data);
        assert_eq!((r.top(), r.tally.accepted, r.tally.count(Refusal::Replay)), (Some(5), 3, 3));
    }

    #[test]
    fn replay_state_roundtrip_and_refusals() {
        let d = tempfile::tempdir().unwrap();
        let key = d.path().join("master.key");
        let p = replay_state_beside_key(&key);
        assert_eq!(p, d.path().join("master.key.video-replay"));
        let m = MasterKey::from_bytes([7; 32]);
        let mut st = ReplayState::open(&p, &m).unwrap();
        assert!(!st.existed());
        assert_eq!(st.accepted(0), None);
        st.save(0, 161).unwrap();
        st.save(0, 100).unwrap(); // never lowered
        st.save(9, 5).unwrap();
        // Key [7; 32]'s fingerprint as in device/counter.rs's tests (computed with Python's hmac).
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!(
                "{REPLAY_MAGIC}\nkey 32f4fc68107ab4dd67b987d1614f906b\ndevice 0 accepted 161\ndevice 9 accepted 5\n"
            )
        );
        let st = ReplayState::open(&p, &m).unwrap();
        assert!(st.existed());
        assert_eq!((st.accepted(0), st.accepted(9), st.accepted(1)), (Some(161), Some(5), None));
        let e = ReplayState::open(&p, &MasterKey::from_bytes([8; 32])).unwrap_err();
        assert!(e.contains("master.key.video-replay: line 2: written for another key"), "{e}");
        let head = format!("{REPLAY_MAGIC}\nkey 32f4fc68107ab4dd67b987d1614f906b\n");
        for (body, want) in [
            ("nope\n".to_string(), "line 1: expected"),
            (format!("{head}device 0 accepted 1\ndevice 0 accepted 2\n"), "line 4: device 0 again"),
            (format!("{head}device 0 accepted 9223372036854775808\n"), "line 3: accepted counter is not a number"),
            (format!("{head}device x accepted 1\n"), "line 3: device is not a number"),
            (format!("{head}device 0 took 1\n"), "line 3: expected 'device D accepted N'"),
        ] {
            std::fs::write(&p, body).unwrap();
            let e = ReplayState::open(&p, &m).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
        std::fs::write(&p, vec![b'#'; (MAX_REPLAY_STATE_BYTES + 1) as usize]).unwrap();
        assert!(ReplayState::open(&p, &m).unwrap_err().contains("larger than 1 MiB"));
    }
}
