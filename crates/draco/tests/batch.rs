//! Gateway batch opener (`lwcbench_draco::batch`) against the single-stream path.
//!
//! Expected values come from the independent single-stream implementation (`DracoFast`
//! keystream XORed here, not through the batch module or the composition helpers), and for a
//! few messages from the bit-serial reference `DracoRef`; tags are made by the single-stream
//! `composition::seal_in_place`.
// Integration tests, helpers included: a panic is the failure report, as .clippy.toml
// allows in #[test] functions.
#![allow(clippy::unwrap_used)]
use lwcbench_core::StreamCipher;
use lwcbench_draco::batch::{self, BatchItem, Mode, TaggedItem};
use lwcbench_draco::bitsliced::Backend;
use lwcbench_draco::composition::{self, TagError};
use lwcbench_draco::{DracoFast, DracoRef};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn fill(&mut self, b: &mut [u8]) {
        for x in b {
            *x = self.next() as u8;
        }
    }
}

struct Msg {
    key: [u8; 16],
    iv: [u8; 12],
    ct: Vec<u8>,
}

/// `n` messages, lengths mostly 0 … 400 bytes, some up to 1300 (several keystream chunks).
fn messages(rng: &mut Rng, n: usize) -> Vec<Msg> {
    (0..n)
        .map(|_| {
            let mut key = [0u8; 16];
            let mut iv = [0u8; 12];
            rng.fill(&mut key);
            rng.fill(&mut iv);
            let len = if rng.below(16) == 0 { rng.below(1300) } else { rng.below(401) };
            let mut ct = vec![0u8; len];
            rng.fill(&mut ct);
            Msg { key, iv, ct }
        })
        .collect()
}

/// (one-time key, plaintext) from DracoFast's raw keystream: bytes 0..32 and ct ^ bytes 64..
fn expected_fast(m: &Msg) -> ([u8; 32], Vec<u8>) {
    let mut c = DracoFast::with_key_iv(&m.key, &m.iv);
    let mut ks = vec![0u8; 64 + m.ct.len()];
    c.keystream(&mut ks).unwrap();
    (ks[..32].try_into().unwrap(), m.ct.iter().zip(&ks[64..]).map(|(a, b)| a ^ b).collect())
}

fn items(ms: &[Msg]) -> Vec<BatchItem<'_>> {
    ms.iter().map(|m| BatchItem { key: &m.key, iv: &m.iv, ct: &m.ct }).collect()
}

fn modes() -> Vec<Mode> {
    let mut v = vec![Mode::Auto, Mode::SingleStream];
    v.extend(Backend::ALL.into_iter().filter(|b| b.available()).map(Mode::Bitsliced));
    v
}

#[test]
fn every_mode_equals_single_stream_for_random_batches() {
    let mut rng = Rng(0x0bad_cafe_1234_5678);
    // sizes around every lane width, including not-multiples and more than one group
    for n in [0usize, 1, 2, 7, 63, 64, 65, 200, 255, 256, 257, 511, 512, 513, 700] {
        let ms = messages(&mut rng, n);
        let want: Vec<_> = ms.iter().map(expected_fast).collect();
        for mode in modes() {
            let got = batch::open_batch_using(mode, &items(&ms)).unwrap();
            assert_eq!(got.len(), n);
            for (i, (g, (otk, pt))) in got.iter().zip(&want).enumerate() {
                assert_eq!(&g.otk, otk, "{mode:?} n={n} msg {i} (len {}) one-time key", ms[i].ct.len());
                assert_eq!(&g.plaintext, pt, "{mode:?} n={n} msg {i} (len {}) plaintext", ms[i].ct.len());
            }
        }
    }
}

#[test]
fn equal_lengths_and_all_empty() {
    // 32-byte readings (the gateway's typical case) and empty messages: only the one-time key
    let mut rng = Rng(77);
    for len in [0usize, 32] {
        let mut ms = messages(&mut rng, 300);
        for m in &mut ms {
            m.ct.resize(len, 0xA5);
        }
        for mode in modes() {
            let got = batch::open_batch_using(mode, &items(&ms)).unwrap();
            for (i, (g, m)) in got.iter().zip(&ms).enumerate() {
                let (otk, pt) = expected_fast(m);
                assert_eq!((g.otk, &g.plaintext), (otk, &pt), "{mode:?} len {len} msg {i}");
            }
        }
    }
}

#[test]
fn a_few_messages_equal_the_reference() {
    let mut rng = Rng(4242);
    let ms = messages(&mut rng, 70); // two portable groups
    for mode in modes() {
        let got = batch::open_batch_using(mode, &items(&ms)).unwrap();
        for i in [0usize, 1, 33, 64, 69] {
            let m = &ms[i];
            let mut r = DracoRef::with_key_iv(&m.key, &m.iv);
            let mut ks = vec![0u8; 64 + m.ct.len()];
            r.keystream(&mut ks).unwrap();
            assert_eq!(got[i].otk[..], ks[..32], "{mode:?} msg {i}");
            let pt: Vec<u8> = m.ct.iter().zip(&ks[64..]).map(|(a, b)| a ^ b).collect();
            assert_eq!(got[i].plaintext, pt, "{mode:?} msg {i}");
        }
    }
}

#[test]
fn verified_batch_accepts_sealed_and_refuses_every_change() {
    let mut rng = Rng(0xfeed);
    let n = 600;
    let mut keys = vec![[0u8; 16]; n];
    let mut ivs = vec![[0u8; 12]; n];
    let mut ads = Vec::new();
    let mut pts = Vec::new();
    let mut cts = Vec::new();
    let mut tags = Vec::new();
    for i in 0..n {
        rng.fill(&mut keys[i]);
        rng.fill(&mut ivs[i]);
        let mut ad = vec![0u8; rng.below(20)];
        rng.fill(&mut ad);
        let mut pt = vec![0u8; rng.below(120)];
        rng.fill(&mut pt);
        let mut ct = pt.clone();
        tags.push(composition::seal_in_place(&keys[i], &ivs[i], &ad, &mut ct));
        ads.push(ad);
        pts.push(pt);
        cts.push(ct);
    }
    // forgeries: every 5th message changed in one way; the others must still open
    let other_key = [0x11u8; 16];
    let mut forged = vec![false; n];
    for i in (0..n).step_by(5) {
        forged[i] = true;
        match (i / 5) % 4 {
            0 if !cts[i].is_empty() => {
                let at = rng.below(cts[i].len());
                cts[i][at] ^= 1 << rng.below(8)
            }
            1 => tags[i][rng.below(16)] ^= 1 << rng.below(8),
            2 => ads[i].push(0),
            3 => keys[i] = other_key,
            _ => tags[i][0] ^= 0x80, // empty ciphertext: change the tag instead
        }
    }
    let items: Vec<TaggedItem> =
        (0..n).map(|i| TaggedItem { key: &keys[i], iv: &ivs[i], ad: &ads[i], ct: &cts[i], tag: &tags[i] }).collect();
    for mode in modes() {
        let got = batch::open_batch_verified_using(mode, &items).unwrap();
        for i in 0..n {
            if forged[i] {
                assert_eq!(got[i], Err(TagError), "{mode:?} forged msg {i} accepted");
            } else {
                assert_eq!(got[i].as_ref(), Ok(&pts[i]), "{mode:?} msg {i}");
            }
        }
    }
    // the single-stream opener agrees message by message
    for i in 0..n {
        let mut buf = cts[i].clone();
        let r = composition::open_in_place(&keys[i], &ivs[i], &ads[i], &mut buf, &tags[i]);
        assert_eq!(r.is_err(), forged[i], "single-stream msg {i}");
    }
}
