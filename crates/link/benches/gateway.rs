//! The gateway's frame opening: one by one (`Gateway::open`) against the batch
//! (`Gateway::open_many`, bit-sliced multi-stream DRACO for DRACO/rust-fast), 256 frames from
//! 256 devices with 4-byte readings — the shape of one gateway batch at high rate.
//! `cargo bench -p lwcbench-link --bench gateway`.
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use lwcbench_link::gateway::checks::Gateway;
use lwcbench_link::wire::frame::Proto;
use lwcbench_link::wire::keys::MasterKey;
use lwcbench_link::wire::suite::{self, Keyed};

const N: u32 = 256;

fn frames(s: &suite::Suite, m: &MasterKey) -> Vec<Vec<u8>> {
    (1..=N)
        .map(|d| {
            let mut k = Keyed::derived(s, m, Proto::Sensor, d, false).expect("a link suite keys every device");
            let mut f = Vec::new();
            k.seal(d, 1, &d.to_be_bytes(), &mut f).expect("a 4-byte reading seals");
            f
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let m = MasterKey::from_bytes([3u8; 32]);
    for name in ["DRACO/rust-fast", "Ascon-AEAD128/rustcrypto"] {
        let s = suite::find(name).expect("a link suite of the catalogue");
        let fr = frames(&s, &m);
        let refs: Vec<&[u8]> = fr.iter().map(|f| f.as_slice()).collect();
        let fresh = || Gateway::new(&s, &m, 1..=N, 64, false).expect("a gateway of 256 devices");
        let mut g = c.benchmark_group(format!("gateway-open/{name}"));
        g.throughput(Throughput::Elements(N as u64));
        g.bench_function("one-by-one", |b| {
            b.iter_batched_ref(
                fresh,
                |gw| {
                    for f in &refs {
                        assert!(gw.open(f).is_ok());
                    }
                },
                BatchSize::LargeInput,
            )
        });
        g.bench_function("open_many", |b| {
            b.iter_batched_ref(
                fresh,
                |gw| assert!(gw.open_many(&refs).iter().all(|r| r.is_ok())),
                BatchSize::LargeInput,
            )
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
