use super::ops::*;
use super::*;
use crate::plan::{expand, Kiv, Selection};
use crate::video::Clip;
use lwcbench_catalog::Entry;
#[allow(unused_imports)]
use lwcbench_catalog::Make;
#[allow(unused_imports)]
use lwcbench_core::{Aead, BlockCipher, CipherMode, StreamCipher};
use lwcbench_core::{BitOrder, CipherInfo, Family, Language, Origin};
use std::sync::Arc;

/// Three 16×8 mono frames with distinct contents (hand-built y4m).
fn clip() -> Arc<Clip> {
    let mut y = b"YUV4MPEG2 W16 H8 F25:1 Cmono\n".to_vec();
    for f in 0..3u8 {
        y.extend(b"FRAME\n");
        y.extend((0..128u8).map(|i| i.wrapping_mul(3).wrapping_add(f * 50)));
    }
    Arc::new(Clip::parse(&y, "t.y4m", "t", None).unwrap())
}

fn frame_groups(cipher: &str) -> Vec<Group> {
    let sel = Selection {
        ciphers: vec![cipher.into()],
        scenarios: vec![Scenario::Frame],
        video: Some(clip()),
        ..Default::default()
    };
    expand(&sel).unwrap()
}

#[test]
fn plan_gives_one_frame_per_op_and_counter_ivs() {
    let g = frame_groups("ChaCha20");
    // static IV variants only (s,s and r,s): the IV is the frame counter
    assert_eq!(g.iter().map(|g| g.kiv.label()).collect::<Vec<_>>(), vec!["s,s", "r,s"]);
    assert!(g.iter().all(|g| g.size_bits == 128 * 8 && g.payload.label == "video:t"));
    assert_eq!(g[0].label(), "ChaCha20/rustcrypto frame <s,s | 1024> video:t");
    // AEADs too, block ciphers not; frame never runs unless named
    assert_eq!(frame_groups("ChaCha20-Poly1305/rustcrypto").len(), 2);
    let every = expand(&Selection { ciphers: vec!["ChaCha20".into()], ..Default::default() }).unwrap();
    assert!(every.iter().all(|g| g.scenario != Scenario::Frame));
    assert_eq!(Scenario::parse("FRAME"), Some(Scenario::Frame));
}

/// The measured ciphertext, decrypted with a fresh instance of the catalogue's (KAT-verified)
/// implementation under the op's counter IV, is the frame; the keystream it was XORed with
/// is that instance's keystream.
#[test]
fn measured_ciphertext_decrypts_to_the_frame() {
    for cipher in ["ChaCha20", "Trivium", "Grain-128a", "ChaCha20-Poly1305"] {
        let g = &frame_groups(cipher)[0];
        let c = clip();
        let key: Vec<u8> = (0..g.entry.info.key_bytes() as u8).map(|i| i ^ 0x5a).collect();
        let mut op = FrameOp::new(g, g.entry.make.unwrap());
        op.prepare(&key, &[]).unwrap();
        for round in 0..5 {
            op.run().unwrap();
            let i = op.last;
            assert_eq!(i, round % 3, "{cipher}: frames are taken in turn, cycling");
            assert_ne!(op.buf, c.frame(i));
            let mut dec = op.buf.clone();
            match g.entry.make.unwrap() {
                Make::Stream(mk) => {
                    let mut d = mk();
                    d.init(&key, &op.c.iv).unwrap();
                    let mut ks = vec![0u8; dec.len()];
                    d.keystream(&mut ks).unwrap();
                    dec.iter_mut().zip(&ks).for_each(|(b, k)| *b ^= k);
                }
                Make::Aead(mk) => {
                    let mut d = mk();
                    d.set_key(&key).unwrap();
                    d.decrypt(&op.c.iv, &[], &mut dec, &op.c.tag).unwrap();
                }
                Make::Block(_) | Make::Mode(_) => unreachable!(),
            }
            assert_eq!(dec, c.frame(i), "{cipher} frame {i}");
        }
        op.verify(&key).unwrap();
    }
}

#[test]
fn counter_ivs_never_repeat_within_a_group() {
    let g = &frame_groups("Trivium")[0];
    let mut op = FrameOp::new(g, g.entry.make.unwrap());
    let mut seen = std::collections::HashSet::new();
    let key = vec![7u8; 10];
    // the order measure_group uses: prepare, verify, calibration batches, samples (each
    // sample re-prepares with a possibly new key; prepare must not reset the counter)
    op.prepare(&key, &[]).unwrap();
    op.verify(&key).unwrap();
    let mut count = 3; // verify encrypted the three frames
    for batch in [1, 2, 4, 8, 3, 3, 3] {
        op.prepare(&key, &[]).unwrap();
        for _ in 0..batch {
            op.run().unwrap();
            count += 1;
            assert!(seen.insert(op.c.iv.clone()), "IV {:02x?} used twice", op.c.iv);
        }
    }
    assert_eq!(op.c.counter, count);
    // Trivium's 80-bit IV: the counter sits big-endian in the last 8 bytes
    assert_eq!(op.c.iv, [0, 0, 0, 0, 0, 0, 0, 0, 0, count as u8]);
}

// A deliberately broken stream cipher: `init` forgets to reset the keystream position,
// so the second frame's keystream differs from a fresh instance's.
struct NoReset {
    pos: u8,
}
const BROKEN: CipherInfo = CipherInfo {
    name: "NoReset",
    implementation: "test",
    family: Family::Stream,
    key_bits: 8,
    iv_bits: 64,
    block_bits: 0,
    tag_bits: 0,
    state_bytes: 1,
    origin: Origin::Own,
    language: Language::Rust,
    bit_order: BitOrder::MsbFirst,
    bit_granular: false,
    note: "",
};
impl StreamCipher for NoReset {
    fn info(&self) -> CipherInfo {
        BROKEN
    }
    fn init(&mut self, _key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
        Ok(())
    }
    fn keystream_bits(&mut self, out: &mut [u8], _n: usize) -> Result<(), CipherError> {
        out.iter_mut().for_each(|b| {
            self.pos = self.pos.wrapping_add(1);
            *b = self.pos | 1;
        });
        Ok(())
    }
    fn apply_bits(&mut self, data: &mut [u8], _n: usize) -> Result<(), CipherError> {
        data.iter_mut().for_each(|b| {
            self.pos = self.pos.wrapping_add(1);
            *b ^= self.pos | 1;
        });
        Ok(())
    }
}
// A cipher that encrypts nothing.
struct Identity;
impl StreamCipher for Identity {
    fn info(&self) -> CipherInfo {
        CipherInfo { name: "Identity", ..BROKEN }
    }
    fn init(&mut self, _key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
        Ok(())
    }
    fn keystream_bits(&mut self, out: &mut [u8], _n: usize) -> Result<(), CipherError> {
        out.fill(0);
        Ok(())
    }
    fn apply_bits(&mut self, _data: &mut [u8], _n: usize) -> Result<(), CipherError> {
        Ok(())
    }
}

fn fake_group(make: fn() -> Box<dyn StreamCipher + Send>) -> Group {
    let c = clip();
    Group {
        entry: Entry::from_parts(make().info(), Make::Stream(make), |_, _| Vec::new()),
        scenario: Scenario::Frame,
        kiv: Kiv { random_key: false, random_iv: false },
        size_bits: c.frame_bytes * 8,
        payload: crate::plan::Payload::video(&c),
    }
}

#[test]
fn broken_ciphers_are_caught_before_timing() {
    let g = fake_group(|| Box::new(NoReset { pos: 0 }));
    let mut op = FrameOp::new(&g, g.entry.make.unwrap());
    op.prepare(&[0], &[]).unwrap();
    assert_eq!(
        op.verify(&[0]).unwrap_err(),
        "round trip failed: NoReset/test frame 1 of video:t: the decrypted frame differs from the original at byte 0 of 128"
    );
    let g = fake_group(|| Box::new(Identity));
    let e = measure_group(&g, &Config { reps: 2, warmup: 0, min_sample_ns: 1.0, ..Default::default() }, || {})
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "Identity/test frame <s,s | 1024> video:t: round trip failed: Identity/test frame 0 of video:t: the ciphertext equals the frame (nothing was encrypted)"
    );
    // A tampered ciphertext is caught by the same comparison.
    let g = &frame_groups("ChaCha20")[0];
    let key = vec![1u8; 32];
    let mut op = FrameOp::new(g, g.entry.make.unwrap());
    op.prepare(&key, &[]).unwrap();
    op.run().unwrap();
    op.buf[77] ^= 0x10;
    assert!(op.check_last(&key).unwrap_err().ends_with("differs from the original at byte 77 of 128"));
}

/// IVs a cipher was initialised with (for the drawn-IV rule test).
static SEEN_IVS: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());
struct RecordIv;
impl StreamCipher for RecordIv {
    fn info(&self) -> CipherInfo {
        CipherInfo { name: "RecordIv", iv_bits: 96, ..BROKEN }
    }
    fn init(&mut self, _key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        SEEN_IVS.lock().unwrap().push(iv.to_vec());
        Ok(())
    }
    fn keystream_bits(&mut self, out: &mut [u8], _n: usize) -> Result<(), CipherError> {
        out.fill(0x5a);
        Ok(())
    }
    fn apply_bits(&mut self, data: &mut [u8], _n: usize) -> Result<(), CipherError> {
        data.iter_mut().for_each(|b| *b ^= 0x5a);
        Ok(())
    }
}

#[test]
fn drawn_ivs_follow_the_entry_rule() {
    let make: fn() -> Box<dyn StreamCipher + Send> = || Box::new(RecordIv);
    let entry =
        Entry::from_parts(make().info(), Make::Stream(make), |_, _| Vec::new()).with_iv_rule(|iv| iv[0] &= 0x7f);
    let g = Group {
        entry,
        scenario: Scenario::Keystream,
        kiv: Kiv { random_key: false, random_iv: true },
        size_bits: 64,
        payload: crate::plan::Payload::random(),
    };
    SEEN_IVS.lock().unwrap().clear();
    measure_group(&g, &Config { reps: 40, warmup: 0, min_sample_ns: 1.0, ..Default::default() }, || {}).unwrap();
    let seen = SEEN_IVS.lock().unwrap();
    // after the static IV of calibration, one random draw per sample
    let drawn: Vec<&Vec<u8>> = seen.iter().filter(|iv| **iv != default_static(12)).collect();
    assert!(drawn.len() >= 40, "{} random IVs", drawn.len());
    assert!(drawn.iter().all(|iv| iv[0] & 0x80 == 0), "an IV with the mode bit set was drawn");
    // the rule clears one bit only: the other bits still vary (2^-39 chance of a false alarm)
    assert!(drawn.iter().any(|iv| iv[0] & 0x40 != 0) && drawn.iter().any(|iv| iv[0] & 0x40 == 0));
    assert!(drawn.windows(2).any(|w| w[0][1..] != w[1][1..]));
}

/// A cipher whose first keystream call on an instance costs 50 ms (a one-time cost such
/// as CPU feature detection); every later call does a fixed small amount of work.
struct SlowFirst {
    first: bool,
}
impl StreamCipher for SlowFirst {
    fn info(&self) -> CipherInfo {
        CipherInfo { name: "SlowFirst", ..BROKEN }
    }
    fn init(&mut self, _key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
        Ok(())
    }
    fn keystream_bits(&mut self, out: &mut [u8], _n: usize) -> Result<(), CipherError> {
        if std::mem::take(&mut self.first) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let mut x = 1u64;
        for i in 0..64u64 {
            x = black_box(x.wrapping_mul(0x9e37_79b9).wrapping_add(i));
        }
        out.fill(x as u8);
        Ok(())
    }
    fn apply_bits(&mut self, data: &mut [u8], n: usize) -> Result<(), CipherError> {
        self.keystream_bits(data, n)
    }
}

/// The slow first call must not shrink the batch. Before untimed warm-up and median
/// calibration, the first timed trial (batch 1) took the 50 ms and the batch was set to
/// ⌈200 µs / 50 ms⌉ = 1. Now it is ⌈200 µs / t_op⌉ with t_op a few tens of ns (the bound
/// below allows t_op up to 4 µs, 100× slack for a loaded machine), and the floor makes
/// every sample last ≥ the minimum sample time regardless of timing.
#[test]
fn slow_first_call_does_not_shrink_the_batch() {
    let make: fn() -> Box<dyn StreamCipher + Send> = || Box::new(SlowFirst { first: true });
    let g = Group {
        entry: Entry::from_parts(make().info(), Make::Stream(make), |_, _| Vec::new()),
        scenario: Scenario::Keystream,
        kiv: Kiv { random_key: false, random_iv: false },
        size_bits: 64,
        payload: crate::plan::Payload::random(),
    };
    let cfg = Config { reps: 20, warmup: 2, min_sample_ns: 200_000.0, ..Default::default() };
    let r = measure_group(&g, &cfg, || {}).unwrap();
    assert!(r.batch >= 50, "batch {} was taken from the slow first call", r.batch);
    // Warm-up samples may precede a raise of the batch (the re-check after warm-up), so
    // only the measured ones must reach the final batch; every sample reaches the floor.
    for s in r.samples.iter() {
        assert!(s.ops >= r.batch, "{s:?} below the batch {}", r.batch);
    }
    for s in r.samples.iter().chain(&r.warmup) {
        assert!(s.ns * s.ops as f64 >= cfg.min_sample_ns * (1.0 - 1e-9), "{s:?} below the floor");
    }
    let mut ns: Vec<f64> = r.samples.iter().map(|s| s.ns).collect();
    ns.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert!(ns[10] < 4_000.0, "median {} ns per op is dominated by the slow call", ns[10]);
}

#[test]
fn measure_group_runs_frames() {
    let g = &frame_groups("ChaCha20")[1];
    let r =
        measure_group(g, &Config { reps: 3, warmup: 1, min_sample_ns: 1000.0, ..Default::default() }, || {}).unwrap();
    assert_eq!(r.samples.len(), 3);
    assert!(r.samples.iter().all(|s| s.ns > 0.0));
}
