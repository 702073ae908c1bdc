//! Keystream rate of one own cipher through the `StreamCipher` trait (the path the tool
//! measures): `ksrate <cipher> <bytes> <reps> [xor]` prints best and median MB/s (`xor`: through
//! `apply_bits`). Used with
//! `valgrind --tool=callgrind` (reps = 1) for deterministic instruction counts per byte.
// A developer's timing tool over fixed keys and messages: a cipher call that fails is a
// bug in the cipher, and the panic reports it.
#![allow(clippy::unwrap_used)]
use std::hint::black_box;
use std::time::Instant;

use lwcbench_core::StreamCipher;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let name = a.get(1).map(String::as_str).unwrap_or("Trivium");
    let bytes: usize = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(65536);
    let reps: usize = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(200);
    let xor = a.get(4).is_some_and(|s| s == "xor");
    let mut c: Box<dyn StreamCipher> = match name {
        "Trivium" => Box::new(lwcbench_estream::Trivium::default()),
        "Grain-128a" => Box::new(lwcbench_estream::Grain128a::default()),
        "Grain-v1" => Box::new(lwcbench_estream::GrainV1::default()),
        "MICKEY-v2" => Box::new(lwcbench_estream::MickeyV2::default()),
        "HC-128" => Box::new(lwcbench_estream::Hc128::default()),
        "Sosemanuk" => Box::new(lwcbench_estream::Sosemanuk::default()),
        other => {
            eprintln!("error: unknown cipher {other} (Trivium, Grain-128a, Grain-v1, MICKEY-v2, HC-128, Sosemanuk)");
            std::process::exit(2);
        }
    };
    let info = c.info();
    let (key, iv): (Vec<u8>, Vec<u8>) = ((0..info.key_bytes() as u8).collect(), (0..info.iv_bytes() as u8).collect());
    let mut buf = vec![0u8; bytes];
    let mut t = Vec::with_capacity(reps);
    for _ in 0..reps {
        c.init(&key, &iv).unwrap();
        let s = Instant::now();
        if xor {
            c.apply_bits(black_box(&mut buf), bytes * 8).unwrap();
        } else {
            c.keystream_bits(black_box(&mut buf), bytes * 8).unwrap();
        }
        t.push(s.elapsed().as_secs_f64());
        black_box(&buf);
    }
    t.sort_by(f64::total_cmp);
    let mb = |s: f64| bytes as f64 / s / 1e6;
    println!("{name} {bytes} B x{reps}: median {:.0} MB/s, best {:.0} MB/s", mb(t[t.len() / 2]), mb(t[0]));
}
