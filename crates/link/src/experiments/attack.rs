//! The attack suite: forged, replayed and reordered frames thrown at the gateway's check and
//! store path. Every forged or replayed class must be refused (and counted), nothing of it
//! stored; legitimate reordering inside the window must be accepted exactly once.
use crate::gateway::checks::{Gateway, Refusal};
use crate::store::{Row, Store};
use crate::wire::frame::Proto;
use crate::wire::frame::HEADER_LEN;
use crate::wire::keys::MasterKey;
use crate::wire::suite::{Keyed, Suite};

/// One class of the tally.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ClassTally {
    /// The cipher's name.
    pub cipher: String,
    /// The attack class.
    pub class: String,
    /// "refuse" for forged/replayed frames, "accept" for legitimate ones.
    pub expect: String,
    /// Frames sent.
    pub frames: u64,
    /// Frames the gateway accepted.
    pub accepted: u64,
    /// Frames it refused.
    pub refused: u64,
    /// Refusal reasons seen, "reason:count" joined by spaces.
    pub reasons: String,
    /// Rows of this class found in the store afterwards.
    pub stored: u64,
    /// Whether the class met its expectation, the store included.
    pub pass: bool,
}

const A: u32 = 1;
const B: u32 = 2;
const W: u64 = 64;

struct Harness<'a> {
    gw: Gateway,
    store: &'a mut dyn Store,
    cipher: String,
    out: Vec<ClassTally>,
    /// (device, counter, payload) of every frame accepted, to check the store against.
    accepted: Vec<Row>,
}

impl Harness<'_> {
    /// Deliver `frames` as class `class`; `legit` frames are expected accepted once.
    fn class(&mut self, class: &str, legit: bool, frames: &[Vec<u8>]) -> Result<(), String> {
        let mut reasons = std::collections::BTreeMap::<&'static str, u64>::new();
        let (mut acc, mut refd) = (0, 0);
        let mut rows = Vec::new();
        for f in frames {
            match self.gw.open(f) {
                Ok(o) => {
                    acc += 1;
                    rows.push(Row { device: o.device, counter: o.counter, cipher: o.cipher, payload: o.reading });
                }
                Err(r) => {
                    refd += 1;
                    *reasons.entry(Refusal::as_str(r)).or_default() += 1;
                }
            }
        }
        let stored = if rows.is_empty() { 0 } else { self.store.insert(&rows)? };
        self.accepted.extend(rows);
        let n = frames.len() as u64;
        let pass = if legit { acc == n && stored == n } else { acc == 0 && refd == n && stored == 0 };
        self.out.push(ClassTally {
            cipher: self.cipher.clone(),
            class: class.into(),
            expect: if legit { "accept" } else { "refuse" }.into(),
            frames: n,
            accepted: acc,
            refused: refd,
            reasons: reasons.iter().map(|(k, v)| format!("{k}:{v}")).collect::<Vec<_>>().join(" "),
            stored,
            pass,
        });
        Ok(())
    }
}

fn seal(k: &mut Keyed, dev: u32, c: u64, payload: &[u8]) -> Result<Vec<u8>, String> {
    let mut f = Vec::new();
    k.seal(dev, c, payload, &mut f)?;
    Ok(f)
}

fn reading(dev: u32, c: u64) -> Vec<u8> {
    let mut r = Vec::with_capacity(16);
    r.extend_from_slice(&dev.to_be_bytes());
    r.extend_from_slice(&c.to_be_bytes());
    r.extend_from_slice(&[0x5a; 4]);
    r
}

/// Run every class against a fresh gateway (window 64) for `suite`, storing into `store`.
/// Afterwards the store must hold exactly the legitimate readings (checked here too: the last
/// row of the tally, class "store holds exactly the accepted readings").
pub fn run(suite: &Suite, master: &MasterKey, store: &mut dyn Store) -> Result<Vec<ClassTally>, String> {
    let gw = Gateway::new(suite, master, [A, B], W, false)?;
    let ka = master.cipher_key(Proto::Sensor, A, suite.id, suite.key_len());
    let kb = master.cipher_key(Proto::Sensor, B, suite.id, suite.key_len());
    let mut a = Keyed::new(suite, &ka, Proto::Sensor, false)?;
    let mut b = Keyed::new(suite, &kb, Proto::Sensor, false)?;
    let mut h = Harness { gw, store, cipher: suite.name(), out: Vec::new(), accepted: Vec::new() };

    // Legitimate traffic first: A sends 0..200 in order, B sends 0..10.
    let legit_a: Vec<Vec<u8>> = (0..200).map(|c| seal(&mut a, A, c, &reading(A, c))).collect::<Result<_, _>>()?;
    let legit_b: Vec<Vec<u8>> = (0..10).map(|c| seal(&mut b, B, c, &reading(B, c))).collect::<Result<_, _>>()?;
    let mut legit = legit_a.clone();
    legit.extend(legit_b.iter().cloned());
    h.class("legitimate in order", true, &legit)?;
    // Reordered inside the window: 210..220 delivered newest first.
    let reordered: Vec<Vec<u8>> =
        (210..220).rev().map(|c| seal(&mut a, A, c, &reading(A, c))).collect::<Result<_, _>>()?;
    h.class("legitimate reordered inside window", true, &reordered)?;
    h.class("reordered frames delivered again", false, &reordered)?;
    h.class("replayed (recent)", false, &[legit_a[199].clone(), legit_a[180].clone(), legit_b[9].clone()])?;
    h.class("replayed (older than window)", false, &[legit_a[5].clone(), legit_a[100].clone()])?;

    // Forgeries on fresh counters (300, 301) that the real device has not sent yet.
    let f300 = seal(&mut a, A, 300, &reading(A, 300))?;
    let mut flips = Vec::new();
    for i in [HEADER_LEN, HEADER_LEN + 7, f300.len() - 1, 14, 6] {
        for bit in [0x01u8, 0x80] {
            let mut g = f300.clone();
            g[i] ^= bit;
            flips.push(g);
        }
    }
    h.class("bit-flipped (payload, tag, counter, device)", false, &flips)?;
    let f301 = seal(&mut a, A, 301, &reading(A, 301))?;
    let truncs: Vec<Vec<u8>> =
        [0usize, 1, 10, HEADER_LEN, HEADER_LEN + 1, f301.len() - 1].iter().map(|&n| f301[..n].to_vec()).collect();
    h.class("truncated", false, &truncs)?;
    // Cross-device: B's genuine fresh frame relabelled as A, and A's fresh frame as B.
    let fb = seal(&mut b, B, 50, &reading(B, 50))?;
    let mut x1 = fb.clone();
    x1[crate::wire::frame::AT_DEVICE].copy_from_slice(&A.to_be_bytes());
    let mut x2 = f301.clone();
    x2[crate::wire::frame::AT_DEVICE].copy_from_slice(&B.to_be_bytes());
    h.class("cross-device (device id rewritten)", false, &[x1, x2])?;
    // A device that lost its counter state reuses counters with new readings (valid tags).
    let reuse =
        vec![seal(&mut a, A, 180, b"different reading")?, seal(&mut a, A, 219, b"other")?, seal(&mut a, A, 3, b"x")?];
    h.class("reused counter (new reading, valid tag)", false, &reuse)?;
    // A key the gateway does not hold, for a provisioned device and a fresh counter.
    let mut wrong = Keyed::new(suite, &vec![0xA5; suite.key_len()], Proto::Sensor, false)?;
    h.class("unknown key", false, &[seal(&mut wrong, A, 400, &reading(A, 400))?])?;
    h.class("unknown device", false, &[seal(&mut a, 999, 0, &reading(999, 0))?])?;
    // Another protocol's genuine frame of the same device id and a fresh counter (a GOOSE APPID
    // in the sensor id range, a video part): its own key and type byte; also with the type byte
    // rewritten to "sensor".
    let mut other = Vec::new();
    for p in [Proto::Goose, Proto::Video, Proto::ModbusToSlave] {
        let mut k = Keyed::derived(suite, master, p, A, false)?;
        let f = seal(&mut k, A, 500 + p as u64, &reading(A, 500))?;
        let mut relabelled = f.clone();
        relabelled[crate::wire::frame::AT_TYPE] = Proto::Sensor as u8;
        other.push(f);
        other.push(relabelled);
    }
    h.class("another protocol's frame (goose, video, modbus)", false, &other)?;
    // A frame of version 1 (before the key hierarchy): the old 15-byte header layout.
    let mut v1 = vec![1u8, suite.id, 0];
    v1.extend_from_slice(&A.to_be_bytes());
    v1.extend_from_slice(&600u64.to_be_bytes());
    v1.extend_from_slice(&f301[HEADER_LEN..]);
    h.class("frame version 1", false, &[v1])?;
    let mut cid = f301.clone();
    cid[crate::wire::frame::AT_CIPHER] ^= 0x7f;
    let mut unsafe_flag = f301.clone();
    unsafe_flag[crate::wire::frame::AT_FLAGS] = crate::wire::frame::FLAG_UNAUTHENTICATED;
    h.class("cipher id / unsafe flag changed", false, &[cid, unsafe_flag])?;
    // After all that the real frames 300 and 301 still open: forgeries never moved the window.
    h.class("legitimate after forgeries (window not poisoned)", true, &[f300, f301, fb])?;

    // The store holds exactly the accepted legitimate readings, bit for bit.
    let mut want = h.accepted.clone();
    want.sort_by_key(|r| (r.device, r.counter));
    let got = h.store.all()?;
    let ok = got == want;
    let cipher = h.cipher.clone();
    h.out.push(ClassTally {
        cipher,
        class: "store holds exactly the accepted readings".into(),
        expect: "accept".into(),
        frames: want.len() as u64,
        accepted: got.len() as u64,
        refused: 0,
        reasons: String::new(),
        stored: got.len() as u64,
        pass: ok,
    });
    Ok(h.out)
}

/// The attack tallies as a section of summary.md.
pub fn markdown(rows: &[ClassTally]) -> String {
    let mut md = String::from("\n## Link attack suite\n\n| cipher | class | expect | frames | accepted | refused (reasons) | stored | verdict |\n|---|---|---|---:|---:|---|---:|---|\n");
    for r in rows {
        md += &format!(
            "| {} | {} | {} | {} | {} | {} ({}) | {} | {} |\n",
            r.cipher,
            r.class,
            r.expect,
            r.frames,
            r.accepted,
            r.refused,
            r.reasons,
            r.stored,
            if r.pass { "pass" } else { "**FAIL**" }
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tally for every cipher the link offers: every forged/replayed class refused with
    /// nothing stored, legitimate reordering accepted once, the store exactly the legitimate rows.
    #[test]
    fn every_cipher_refuses_every_forgery() {
        let master = MasterKey::from_bytes([3; 32]);
        for s in crate::wire::suite::offered() {
            let d = tempfile::tempdir().unwrap();
            let mut st = crate::store::Sqlite::open(&d.path().join("a.db"), "attack", &master.fingerprint()).unwrap();
            let rows = run(&s, &master, &mut st).unwrap();
            assert_eq!(rows.len(), 16, "{}", s.name());
            for r in &rows {
                assert!(r.pass, "{}: {:?}", s.name(), r);
            }
            let reorder = rows.iter().find(|r| r.class == "legitimate reordered inside window").unwrap();
            assert_eq!((reorder.accepted, reorder.stored), (10, 10));
            let old = rows.iter().find(|r| r.class == "replayed (older than window)").unwrap();
            assert_eq!(old.reasons, "too_old:2", "{}", s.name());
            let reuse = rows.iter().find(|r| r.class.starts_with("reused counter")).unwrap();
            assert_eq!(reuse.reasons, "replay:2 too_old:1", "{}", s.name());
            let dev = rows.iter().find(|r| r.class == "unknown device").unwrap();
            assert_eq!(dev.reasons, "unknown_device:1");
        }
    }
}
