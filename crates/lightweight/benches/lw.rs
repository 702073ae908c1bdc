//! Criterion benches for the lightweight block ciphers and AEADs, run through the catalogue's
//! registry (the same `Box<dyn …>` objects `lwcbench` measures): key schedule, one-block
//! encrypt/decrypt for block ciphers; encrypt/decrypt of 16-, 64- and 1024-byte messages
//! (empty AD, fresh nonce per call not needed for timing) for AEADs.
//!
//! Short by default (0.3 s warm-up, 1 s measurement); pass a filter, e.g.
//! `cargo bench -p lwcbench-lightweight --bench lw -- AES-128`.
// A developer's timing tool over fixed keys and messages: a cipher call that fails is a
// bug in the cipher, and the panic reports it.
#![allow(clippy::unwrap_used)]
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lwcbench_catalog::{registry, Make};

/// Algorithms this crate's owner is responsible for (own code and crate adapters).
const MINE: &[&str] = &[
    "AES-128",
    "LEA-128",
    "HIGHT",
    "XTEA",
    "SPECK-64-128",
    "SPECK-128-128",
    "Ascon-AEAD128",
    "Ascon-128",
    "TinyJAMBU-128",
    "Xoodyak",
    "SCHWAEMM256-128",
    "Grain-128AEADv2",
];

fn bench(c: &mut Criterion) {
    for e in registry().into_iter().filter(|e| MINE.contains(&e.info.name)) {
        let id = e.id();
        let info = e.info;
        let key: Vec<u8> = (0..info.key_bytes() as u8).collect();
        match e.make {
            Some(Make::Block(mk)) => {
                let mut g = c.benchmark_group(&id);
                let mut cipher = mk();
                g.bench_function("key_schedule", |b| b.iter(|| cipher.set_key(black_box(&key)).unwrap()));
                cipher.set_key(&key).unwrap();
                let mut blk = vec![0x5au8; info.block_bytes()];
                g.throughput(Throughput::Bytes(blk.len() as u64));
                g.bench_function("encrypt_block", |b| b.iter(|| cipher.encrypt_block(black_box(&mut blk))));
                g.bench_function("decrypt_block", |b| b.iter(|| cipher.decrypt_block(black_box(&mut blk))));
                g.finish();
            }
            Some(Make::Aead(mk)) => {
                let mut g = c.benchmark_group(&id);
                let mut cipher = mk();
                g.bench_function("set_key", |b| b.iter(|| cipher.set_key(black_box(&key)).unwrap()));
                cipher.set_key(&key).unwrap();
                let nonce = vec![7u8; info.iv_bytes()];
                let mut tag = vec![0u8; info.tag_bytes()];
                for len in [16usize, 64, 1024] {
                    let mut buf = vec![0x5au8; len];
                    g.throughput(Throughput::Bytes(len as u64));
                    g.bench_function(format!("encrypt/{len}"), |b| {
                        b.iter(|| cipher.encrypt(&nonce, &[], black_box(&mut buf), &mut tag).unwrap())
                    });
                    // decrypt needs a valid tag: encrypt once, then restore the ciphertext
                    // before every call (the copy is part of the timing; 1 memcpy)
                    let mut ct = vec![0x5au8; len];
                    cipher.encrypt(&nonce, &[], &mut ct, &mut tag).unwrap();
                    g.bench_function(format!("decrypt/{len}"), |b| {
                        b.iter(|| {
                            buf.copy_from_slice(&ct);
                            cipher.decrypt(&nonce, &[], black_box(&mut buf), &tag).unwrap()
                        })
                    });
                }
                g.finish();
            }
            _ => {}
        }
    }
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
