//! Keystream throughput (64 KiB messages, XOR in place) and key/IV setup time of the own
//! eSTREAM implementations. Short measurement times; run with
//! `cargo bench -p lwcbench-estream`.
// A developer's timing tool over fixed keys and messages: a cipher call that fails is a
// bug in the cipher, and the panic reports it.
#![allow(clippy::unwrap_used)]
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lwcbench_core::StreamCipher;

fn ciphers() -> Vec<Box<dyn StreamCipher>> {
    vec![
        Box::new(lwcbench_estream::Trivium::default()),
        Box::new(lwcbench_estream::GrainV1::default()),
        Box::new(lwcbench_estream::Grain128a::default()),
        Box::new(lwcbench_estream::Hc128::default()),
        Box::new(lwcbench_estream::MickeyV2::default()),
        Box::new(lwcbench_estream::Mickey128v2::default()),
        Box::new(lwcbench_estream::Sosemanuk::default()),
    ]
}

fn bench(c: &mut Criterion) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut g = c.benchmark_group("keystream-64KiB");
    g.throughput(Throughput::Bytes(buf.len() as u64));
    for mut ci in ciphers() {
        let info = ci.info();
        let (key, iv) = (vec![0x5au8; info.key_bytes()], vec![0x21u8; info.iv_bytes()]);
        ci.init(&key, &iv).unwrap();
        g.bench_function(info.name, |b| b.iter(|| ci.apply(black_box(&mut buf)).unwrap()));
    }
    g.finish();
    let mut g = c.benchmark_group("init");
    for mut ci in ciphers() {
        let info = ci.info();
        let (key, iv) = (vec![0x5au8; info.key_bytes()], vec![0x21u8; info.iv_bytes()]);
        g.bench_function(info.name, |b| b.iter(|| ci.init(black_box(&key), black_box(&iv)).unwrap()));
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    targets = bench
}
criterion_main!(benches);
