//! Host cost of OSCORE per reading: protecting a 24-byte reading POST (client) and verifying it
//! (server: parse, replay check, AEAD, merge), per algorithm. The context is derived once; the
//! AEAD's key schedule runs per message (the crate builds a cipher per call).
//! `cargo bench -p lwcbench-oscore --bench protect`.
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use lwcbench_oscore::alg::ALL;
use lwcbench_oscore::coap::{mtype, opt, Message};
use lwcbench_oscore::{
    protect_request, unprotect_request, MemorySequence, ReplayWindow, SecurityContext, SecurityParams,
};

fn ctx(alg: lwcbench_oscore::Algorithm, s: &[u8], r: &[u8]) -> SecurityContext {
    let p = SecurityParams {
        alg,
        master_secret: &[7; 16],
        master_salt: b"",
        id_context: None,
        sender_id: s,
        recipient_id: r,
    };
    SecurityContext::derive(&p).expect("valid parameters")
}

fn bench(c: &mut Criterion) {
    let mut reading = Message::new(mtype::NON, 0x02, 1, &[1, 2]);
    reading.add_option(opt::URI_PATH, b"r");
    reading.payload = vec![0x42; 24];
    for alg in ALL {
        let (client, server) = (ctx(alg, b"\x01", b"\x02"), ctx(alg, b"\x02", b"\x01"));
        let mut seq = MemorySequence::new(0);
        let mut g = c.benchmark_group(format!("oscore/{}", alg.name()));
        g.bench_function("protect request", |b| {
            b.iter(|| protect_request(&client, &mut seq, &reading).expect("protects"))
        });
        let (m, _) = protect_request(&client, &mut MemorySequence::new(5), &reading).expect("protects");
        let bytes = m.encode().expect("encodes");
        g.bench_function("verify request", |b| {
            b.iter_batched(
                ReplayWindow::default,
                |mut w| unprotect_request(&server, &mut w, &bytes).expect("verifies"),
                BatchSize::SmallInput,
            )
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
