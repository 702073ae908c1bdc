//! Gateway opening rate: messages/s of the bit-sliced batch opener (`batch::open_batch*`) vs the
//! single-stream opener (`composition::open_in_place` on DracoFast) for 32-byte messages
//! (a sensor reading + header) with a 15-byte associated header, batches of 256 and 512.
//! DRACO is a provisional reconstruction; the tag is this project's composition.
//!
//! All variants are timed in rounds, interleaved, so each round's ratios come from the same
//! machine conditions; the table gives the median over rounds (and the spread of the ratio).
//! Run: `cargo run --release -p lwcbench-draco --example draco_gateway [-- ROUNDS [MSG_BYTES]]`
// A developer's timing tool over fixed keys and messages: a cipher call that fails is a
// bug in the cipher, and the panic reports it.
#![allow(clippy::unwrap_used)]
use lwcbench_draco::batch::{self, BatchItem, Mode, TaggedItem};
use lwcbench_draco::bitsliced::Backend;
use lwcbench_draco::composition;
use std::hint::black_box;
use std::time::Instant;

struct Msgs {
    keys: Vec<[u8; 16]>,
    ivs: Vec<[u8; 12]>,
    ad: Vec<u8>,
    cts: Vec<Vec<u8>>,
    tags: Vec<[u8; 16]>,
}

fn make(n: usize, len: usize) -> Msgs {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    };
    let keys: Vec<[u8; 16]> = (0..n).map(|_| std::array::from_fn(|_| next())).collect();
    let ivs: Vec<[u8; 12]> = (0..n).map(|_| std::array::from_fn(|_| next())).collect();
    let ad: Vec<u8> = (0..15).map(|_| next()).collect();
    let mut cts = Vec::new();
    let mut tags = Vec::new();
    for i in 0..n {
        let mut ct: Vec<u8> = (0..len).map(|_| next()).collect();
        tags.push(composition::seal_in_place(&keys[i], &ivs[i], &ad, &mut ct));
        cts.push(ct);
    }
    Msgs { keys, ivs, ad, cts, tags }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(31);
    let len: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(32);
    println!("DRACO (provisional reconstruction) gateway opening, {len}-byte messages, 15-byte AD, {rounds} rounds");
    for n in [256usize, 512] {
        let m = make(n, len);
        let plain: Vec<BatchItem> =
            (0..n).map(|i| BatchItem { key: &m.keys[i], iv: &m.ivs[i], ct: &m.cts[i] }).collect();
        let tagged: Vec<TaggedItem> = (0..n)
            .map(|i| TaggedItem { key: &m.keys[i], iv: &m.ivs[i], ad: &m.ad, ct: &m.cts[i], tag: &m.tags[i] })
            .collect();
        // variants: name, closure opening all n messages once
        let mut variants: Vec<(String, Box<dyn FnMut()>)> = vec![
            (
                "single-stream open (verify + decrypt)".into(),
                Box::new(|| {
                    for i in 0..n {
                        let mut buf = m.cts[i].clone();
                        composition::open_in_place(&m.keys[i], &m.ivs[i], &m.ad, &mut buf, &m.tags[i]).unwrap();
                        black_box(&buf);
                    }
                }),
            ),
            (
                "single-stream otk + decrypt (no tag)".into(),
                Box::new(|| {
                    for i in 0..n {
                        let mut buf = m.cts[i].clone();
                        black_box(composition::otk_and_decrypt(&m.keys[i], &m.ivs[i], &mut buf));
                        black_box(&buf);
                    }
                }),
            ),
            (
                "batch open_batch_verified (auto)".into(),
                Box::new(|| {
                    let r = batch::open_batch_verified(&tagged);
                    assert!(r.iter().all(|x| x.is_ok()));
                    black_box(r);
                }),
            ),
            ("batch open_batch (auto, no tag)".into(), Box::new(|| drop(black_box(batch::open_batch(&plain))))),
        ];
        for b in Backend::ALL.into_iter().filter(|b| b.available()) {
            let t = &tagged;
            variants.push((
                format!("batch verified, forced {}", b.name()),
                Box::new(move || {
                    let r = batch::open_batch_verified_using(Mode::Bitsliced(b), t).unwrap();
                    black_box(r);
                }),
            ));
        }
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
        for _ in 0..rounds {
            for (k, (_, f)) in variants.iter_mut().enumerate() {
                let t = Instant::now();
                f();
                times[k].push(t.elapsed().as_secs_f64());
            }
        }
        println!("\nbatch of {n} messages (median over {rounds} rounds; ratio = per-round ratio to the single-stream open, median [min, max]; best = fastest round and ratio of fastest rounds)");
        let base = times[0].clone();
        let base_min = base.iter().cloned().fold(f64::MAX, f64::min);
        for (k, (name, _)) in variants.iter().enumerate() {
            let mut ratios: Vec<f64> = base.iter().zip(&times[k]).map(|(b, t)| b / t).collect();
            let r = median(&mut ratios);
            let (lo, hi) = (ratios[0], ratios[ratios.len() - 1]);
            let med = median(&mut times[k].clone());
            let min = times[k].iter().cloned().fold(f64::MAX, f64::min);
            println!(
                "  {name:40} {:9.0} msg/s  {:7.3} us/msg  x{r:5.1} [{lo:.1}, {hi:.1}]  best {:7.3} us/msg x{:5.1}",
                n as f64 / med,
                med * 1e6 / n as f64,
                min * 1e6 / n as f64,
                base_min / min
            );
        }
    }
}
