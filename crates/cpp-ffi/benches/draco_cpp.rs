//! DRACO (shared/specs/draco.md): C++ reference and fast variants next to the Rust ones, so the
//! C++/Rust ratios come from one run on one machine. Short runs; the engine does the careful
//! measurements.
//!
//! `cargo bench -p lwcbench-cpp --bench draco_cpp` — keystream throughput is reported per bit
//! (criterion "elements" = keystream bits), init as time per call.
// A developer's timing tool over fixed keys and messages: a cipher call that fails is a
// bug in the cipher, and the panic reports it.
#![allow(clippy::unwrap_used)]
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lwcbench_core::StreamCipher;
use lwcbench_cpp::draco::{DracoCppFast, DracoCppRef};
use lwcbench_draco::{DracoFast, DracoRef};

const KEY: [u8; 16] = *b"lwcbench-draco-k";
const IV: [u8; 12] = *b"bench-iv-96b";

/// A named constructor of one variant.
type Maker = (&'static str, fn() -> Box<dyn StreamCipher>);

fn variants() -> Vec<Maker> {
    vec![
        ("cpp-ref", || Box::new(DracoCppRef::new())),
        ("rust-ref", || Box::new(DracoRef::new())),
        ("cpp-fast", || Box::new(DracoCppFast::new())),
        ("rust-fast", || Box::new(DracoFast::new())),
    ]
}

fn keystream(c: &mut Criterion) {
    let mut g = c.benchmark_group("draco-keystream");
    g.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2)).sample_size(20);
    for nbits in [8192usize, 1001] {
        g.throughput(Throughput::Elements(nbits as u64));
        for (name, mk) in variants() {
            let mut cipher = mk();
            cipher.init(&KEY, &IV).unwrap();
            let mut out = vec![0u8; nbits.div_ceil(8)];
            g.bench_with_input(BenchmarkId::new(name, nbits), &nbits, |b, &n| {
                b.iter(|| cipher.keystream_bits(black_box(&mut out), n).unwrap())
            });
        }
    }
    g.finish();
}

fn init(c: &mut Criterion) {
    let mut g = c.benchmark_group("draco-init");
    g.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2)).sample_size(20);
    for (name, mk) in variants() {
        let mut cipher = mk();
        g.bench_function(name, |b| b.iter(|| cipher.init(black_box(&KEY), black_box(&IV)).unwrap()));
    }
    g.finish();
}

/// C++/Rust ratios that survive a loaded machine: the four variants timed round-robin, many
/// short rounds, minimum per variant (the least disturbed run). Printed, not stored.
fn ratios(_: &mut Criterion) {
    const NBITS: usize = 8192;
    const ROUNDS: usize = 300;
    let vs = variants();
    let mut ciphers: Vec<_> = vs.iter().map(|(_, mk)| mk()).collect();
    let mut out = vec![0u8; NBITS / 8];
    let mut ks_best = vec![f64::MAX; vs.len()];
    let mut init_best = vec![f64::MAX; vs.len()];
    for c in ciphers.iter_mut() {
        c.init(&KEY, &IV).unwrap();
    }
    for _ in 0..ROUNDS {
        for (i, c) in ciphers.iter_mut().enumerate() {
            let t = Instant::now();
            c.keystream_bits(black_box(&mut out), NBITS).unwrap();
            ks_best[i] = ks_best[i].min(t.elapsed().as_secs_f64() * 1e9 / NBITS as f64);
            let t = Instant::now();
            for _ in 0..4 {
                c.init(black_box(&KEY), black_box(&IV)).unwrap();
            }
            init_best[i] = init_best[i].min(t.elapsed().as_secs_f64() * 1e9 / 4.0);
        }
    }
    println!("\nDRACO round-robin minimum of {ROUNDS} rounds ({NBITS}-bit keystream calls):");
    for (i, (name, _)) in vs.iter().enumerate() {
        println!("  {name:<9} keystream {:>7.3} ns/bit   init {:>8.0} ns", ks_best[i], init_best[i]);
    }
    // variants() lists (cpp-ref, rust-ref, cpp-fast, rust-fast)
    println!(
        "  C++/Rust time ratio: ref keystream {:.2}, ref init {:.2}, fast keystream {:.2}, fast init {:.2}",
        ks_best[0] / ks_best[1],
        init_best[0] / init_best[1],
        ks_best[2] / ks_best[3],
        init_best[2] / init_best[3]
    );
}

criterion_group!(benches, keystream, init, ratios);
criterion_main!(benches);
