//! Best-of-N timing of every DRACO variant (robust on a shared, loaded machine where
//! criterion's means are inflated by other processes).
//! Run: `cargo run --release -p lwcbench-draco --example draco_speed`
// A developer's timing tool over fixed keys and messages: a cipher call that fails is a
// bug in the cipher, and the panic reports it.
#![allow(clippy::unwrap_used)]
use lwcbench_core::StreamCipher;
use lwcbench_draco::bitsliced::{Backend, MultiDraco};
use lwcbench_draco::{DracoFast, DracoRef};
use std::time::Instant;

/// Minimum over `reps` runs of `f`, in ns.
fn best_ns(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos() as f64
        })
        .fold(f64::MAX, f64::min)
}

fn main() {
    let (key, iv) = ([0x42u8; 16], [0x24u8; 12]);
    let mut r = DracoRef::with_key_iv(&key, &iv);
    let mut f = DracoFast::with_key_iv(&key, &iv);
    let mut buf = vec![0u8; 4096];
    let ref_ns = best_ns(300, || r.keystream(&mut buf[..256]).unwrap()) / 2048.0;
    let fast_ns = best_ns(3000, || f.keystream(&mut buf).unwrap()) / 32768.0;
    let ref_init = best_ns(300, || r.init(&key, &iv).unwrap());
    let fast_init = best_ns(3000, || f.init(&key, &iv).unwrap());
    println!("rust-ref : {ref_ns:7.2} ns/bit {:8.1} Mbit/s  init {:6.2} us", 1e3 / ref_ns, ref_init / 1e3);
    println!(
        "rust-fast: {fast_ns:7.3} ns/bit {:8.1} Mbit/s  init {:6.2} us  ({:.1}x ref)",
        1e3 / fast_ns,
        fast_init / 1e3,
        ref_ns / fast_ns
    );
    for be in Backend::ALL.into_iter().filter(|b| b.available()) {
        for streams in [1usize, 64, 256, 512].into_iter().filter(|&s| s <= be.lanes()) {
            let keys: Vec<[u8; 16]> = (0..streams).map(|i| [i as u8; 16]).collect();
            let ivs: Vec<[u8; 12]> = (0..streams).map(|i| [(i >> 3) as u8; 12]).collect();
            let mut m = MultiDraco::with_backend(be, &keys, &ivs).unwrap();
            let mut out = vec![0u8; streams * 512];
            let t = best_ns(200, || m.keystream(&mut out, 512).unwrap());
            let gbps = (streams * 4096) as f64 / t;
            let mut line = format!(
                "bitsliced {:12} {streams:3} streams: {gbps:6.2} Gbit/s aggregate ({:5.1}x fast)",
                be.name(),
                gbps * fast_ns
            );
            if streams == be.lanes() {
                let mut acc = 0u64;
                let raw = best_ns(200, || m.keystream_lanes(4096, &mut |_, w| acc ^= w[0]));
                let init = best_ns(100, || m = MultiDraco::with_backend(be, &keys, &ivs).unwrap());
                line += &format!(
                    ", raw lanes {:6.2} Gbit/s, init {:6.1} us/group ({:.2} us/stream)",
                    (streams * 4096) as f64 / raw,
                    init / 1e3,
                    init / 1e3 / streams as f64
                );
                std::hint::black_box(acc);
            }
            println!("{line}");
        }
    }
}
