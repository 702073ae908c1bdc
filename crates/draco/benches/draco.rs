//! DRACO throughput and init time: reference, fast single-stream, bit-sliced per backend at
//! several stream counts. Throughput is reported in elements/s where one element is one
//! keystream bit (criterion's "elem/s" = bit/s; ns/bit = time / elements).
//!
//! Run: `cargo bench -p lwcbench-draco --bench draco -- --warm-up-time 1 --measurement-time 3`
//! (`-- draco-gateway` for the gateway batch opener only).
// A developer's timing tool over fixed keys and messages: a cipher call that fails is a
// bug in the cipher, and the panic reports it.
#![allow(clippy::unwrap_used)]
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lwcbench_core::StreamCipher;
use lwcbench_draco::bitsliced::{Backend, MultiDraco};
use lwcbench_draco::{DracoFast, DracoRef};
use std::hint::black_box;

const KEY: [u8; 16] = *b"lwcbench-draco-k";
const IV: [u8; 12] = *b"draco-iv-012";

fn keys(n: usize) -> (Vec<[u8; 16]>, Vec<[u8; 12]>) {
    let k = (0..n)
        .map(|i| {
            let mut k = KEY;
            k[0] = i as u8;
            k[1] = (i >> 8) as u8;
            k
        })
        .collect();
    let v = (0..n)
        .map(|i| {
            let mut v = IV;
            v[0] = i as u8;
            v
        })
        .collect();
    (k, v)
}

fn keystream(c: &mut Criterion) {
    let mut g = c.benchmark_group("draco-keystream");
    let nbits = 8192usize;
    g.throughput(Throughput::Elements(nbits as u64));
    let mut r = DracoRef::with_key_iv(&KEY, &IV);
    let mut buf = vec![0u8; nbits / 8];
    g.bench_function("rust-ref/8192bit", |b| b.iter(|| r.keystream(black_box(&mut buf)).unwrap()));
    let nbits = 65536usize;
    g.throughput(Throughput::Elements(nbits as u64));
    let mut f = DracoFast::with_key_iv(&KEY, &IV);
    let mut buf = vec![0u8; nbits / 8];
    g.bench_function("rust-fast/65536bit", |b| b.iter(|| f.keystream(black_box(&mut buf)).unwrap()));
    g.finish();

    // bit-sliced: aggregate throughput vs number of streams, 4096 bits per stream per call
    let mut g = c.benchmark_group("draco-bitsliced");
    let per_stream = 512usize; // bytes
    for be in Backend::ALL.into_iter().filter(|b| b.available()) {
        for streams in [1usize, 16, 64, 256, 512] {
            if streams > be.lanes() {
                continue;
            }
            let (k, v) = keys(streams);
            let mut m = MultiDraco::with_backend(be, &k, &v).unwrap();
            let mut out = vec![0u8; streams * per_stream];
            g.throughput(Throughput::Elements((streams * per_stream * 8) as u64));
            g.bench_with_input(BenchmarkId::new(format!("{}/bytes", be.name()), streams), &streams, |b, _| {
                b.iter(|| m.keystream(black_box(&mut out), per_stream).unwrap())
            });
        }
        // raw bit-sliced words (no transpose), full width
        let (k, v) = keys(be.lanes());
        let mut m = MultiDraco::with_backend(be, &k, &v).unwrap();
        let clocks = 4096usize;
        g.throughput(Throughput::Elements((clocks * be.lanes()) as u64));
        g.bench_with_input(BenchmarkId::new(format!("{}/raw-lanes", be.name()), be.lanes()), &clocks, |b, &clocks| {
            b.iter(|| {
                let mut acc = 0u64;
                m.keystream_lanes(clocks, &mut |_, w| acc ^= w[0]);
                black_box(acc)
            })
        });
    }
    g.finish();
}

fn init(c: &mut Criterion) {
    let mut g = c.benchmark_group("draco-init");
    let mut r = DracoRef::new();
    g.bench_function("rust-ref", |b| b.iter(|| r.init(black_box(&KEY), black_box(&IV)).unwrap()));
    let mut f = DracoFast::new();
    g.bench_function("rust-fast", |b| b.iter(|| f.init(black_box(&KEY), black_box(&IV)).unwrap()));
    for be in Backend::ALL.into_iter().filter(|b| b.available()) {
        let (k, v) = keys(be.lanes());
        g.throughput(Throughput::Elements(be.lanes() as u64)); // elements = streams initialised
        g.bench_with_input(BenchmarkId::new(format!("bitsliced-{}", be.name()), be.lanes()), &(), |b, _| {
            b.iter(|| black_box(MultiDraco::with_backend(be, black_box(&k), black_box(&v)).unwrap()))
        });
    }
    g.finish();
}

/// Gateway opening of 32-byte messages with a 15-byte AD and tag: single-stream vs batch
/// (elements = messages). See also `examples/draco_gateway.rs` (interleaved rounds, ratios).
fn gateway(c: &mut Criterion) {
    use lwcbench_draco::batch::{self, Mode, TaggedItem};
    use lwcbench_draco::composition;
    let mut g = c.benchmark_group("draco-gateway");
    for n in [256usize, 512] {
        let (k, v) = keys(n);
        let ad = [0x5au8; 15];
        let mut cts = Vec::new();
        let mut tags = Vec::new();
        for i in 0..n {
            let mut ct = vec![i as u8; 32];
            tags.push(composition::seal_in_place(&k[i], &v[i], &ad, &mut ct));
            cts.push(ct);
        }
        let items: Vec<TaggedItem> =
            (0..n).map(|i| TaggedItem { key: &k[i], iv: &v[i], ad: &ad, ct: &cts[i], tag: &tags[i] }).collect();
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("single-stream-open", n), &n, |b, _| {
            b.iter(|| black_box(batch::open_batch_verified_using(Mode::SingleStream, &items).unwrap()))
        });
        g.bench_with_input(BenchmarkId::new("batch-open-auto", n), &n, |b, _| {
            b.iter(|| black_box(batch::open_batch_verified(&items)))
        });
    }
    g.finish();
}

criterion_group!(benches, keystream, init, gateway);
criterion_main!(benches);
