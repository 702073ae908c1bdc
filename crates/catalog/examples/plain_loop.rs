//! Plain loops calling the Rust libraries directly (no catalogue entry, no trait object, no
//! runner), for `scripts/ci/host-parity.sh`; the C libraries' loops are `scripts/ci/parity/plain.c`.
//! Each loop makes the call the adapter makes per AEAD `encrypt` (in place, empty AD,
//! 16-byte tag) and times it as lwcbench's runner does (docs/measurement.md): batches lasting
//! ≥ MIN_US per sample, `Instant`, ns per operation; `rr` draws a new key and nonce before
//! every sample, outside the timed region.
//!
//! usage: plain_loop LIB CIPHER BYTES KIV SAMPLES MIN_US
//!   rustcrypto chacha20-poly1305 | rustcrypto aes-128-gcm | own xoodyak
//!
//! With `PARITY_COUNT=N` it times nothing: 4 untimed operations, then N in `counted_ops`, for
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*counted_ops*'` (as
//! `lwcbench run --counter instructions` counts: 16 operations after 4 untimed).
use std::hint::black_box;
use std::time::Instant;

use aes_gcm::aead::{AeadInOut, KeyInit};
use lwcbench_core::Aead as _;

// The AES-GCM key schedule stays inline, as in the adapter (one value, no extra indirection).
#[allow(clippy::large_enum_variant)]
enum Lib {
    ChaPoly(Option<chacha20poly1305::ChaCha20Poly1305>),
    Gcm(Option<aes_gcm::Aes128Gcm>),
    Xoodyak(Box<lwcbench_lightweight::xoodyak::Xoodyak>),
}

struct Loop {
    lib: Lib,
    key: Vec<u8>,
    nonce: Vec<u8>,
    buf: Vec<u8>,
    tag: [u8; 16],
}

impl Loop {
    fn set_key(&mut self) {
        match &mut self.lib {
            Lib::ChaPoly(c) => *c = Some(KeyInit::new_from_slice(&self.key).expect("32-byte key")),
            Lib::Gcm(c) => *c = Some(KeyInit::new_from_slice(&self.key).expect("16-byte key")),
            Lib::Xoodyak(c) => c.set_key(&self.key).expect("16-byte key"),
        }
    }
    #[inline(always)]
    fn op(&mut self) {
        match &mut self.lib {
            Lib::ChaPoly(c) => seal(c.as_ref().expect("keyed"), &self.nonce, &mut self.buf, &mut self.tag),
            Lib::Gcm(c) => seal(c.as_ref().expect("keyed"), &self.nonce, &mut self.buf, &mut self.tag),
            Lib::Xoodyak(c) => c.encrypt(&self.nonce, &[], &mut self.buf, &mut self.tag).expect("encrypt"),
        }
        black_box(&mut self.buf);
    }
    #[inline(never)]
    fn counted_ops(&mut self, n: u64) {
        for _ in 0..n {
            self.op();
        }
    }
    fn batch_ns(&mut self, batch: u64) -> f64 {
        let t = Instant::now();
        for _ in 0..batch {
            self.op();
        }
        t.elapsed().as_nanos() as f64
    }
}

/// The RustCrypto call the adapters make: in place, empty AD, detached tag.
#[inline(always)]
fn seal<A: AeadInOut>(c: &A, nonce: &[u8], buf: &mut [u8], tag: &mut [u8; 16]) {
    let n = aes_gcm::aead::Nonce::<A>::try_from(nonce).expect("nonce length");
    let t = c.encrypt_inout_detached(&n, &[], buf.into()).expect("encrypt");
    tag.copy_from_slice(&t);
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2)
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() != 6 {
        fail("usage: plain_loop LIB CIPHER BYTES KIV SAMPLES MIN_US");
    }
    let n: usize =
        a[2].parse().ok().filter(|&n| n > 0 && n <= 1 << 30).unwrap_or_else(|| fail("BYTES must be 1..2^30"));
    let random = match a[3].as_str() {
        "ss" => false,
        "rr" => true,
        _ => fail("KIV must be ss or rr"),
    };
    let samples: usize =
        a[4].parse().ok().filter(|&s| s > 0 && s <= 1_000_000).unwrap_or_else(|| fail("SAMPLES must be 1..1000000"));
    let min_ns: f64 = a[5].parse::<f64>().ok().filter(|&m| m > 0.0).unwrap_or_else(|| fail("MIN_US must be > 0")) * 1e3;
    let (lib, key_len, nonce_len) = match (a[0].as_str(), a[1].as_str()) {
        ("rustcrypto", "chacha20-poly1305") => (Lib::ChaPoly(None), 32, 12),
        ("rustcrypto", "aes-128-gcm") => (Lib::Gcm(None), 16, 12),
        ("own", "xoodyak") => (Lib::Xoodyak(Box::default()), 16, 16),
        _ => fail("LIB/CIPHER: rustcrypto chacha20-poly1305|aes-128-gcm, own xoodyak"),
    };
    // lwcbench's static pattern 00 01 02 …; random parts from a splitmix64 stream (untimed)
    let pattern = |len: usize| (0..len).map(|i| i as u8).collect::<Vec<u8>>();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut fill = move |v: &mut [u8]| {
        for b in v {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *b = (z ^ (z >> 31)) as u8;
        }
    };
    let mut buf = vec![0u8; n];
    fill(&mut buf);
    let mut l = Loop { lib, key: pattern(key_len), nonce: pattern(nonce_len), buf, tag: [0; 16] };
    l.set_key();
    if let Ok(n) = std::env::var("PARITY_COUNT") {
        let n: u64 =
            n.parse().ok().filter(|&n| n > 0).unwrap_or_else(|| fail("PARITY_COUNT must be a positive integer"));
        for _ in 0..4 {
            l.op();
        }
        l.counted_ops(n);
        return;
    }
    let t = Instant::now();
    let mut warm = 0u64;
    while warm < 8 || (t.elapsed().as_nanos() as f64) < 2.0 * min_ns {
        l.op();
        warm += 1;
    }
    let mut batch = 1u64;
    while l.batch_ns(batch) < min_ns / 4.0 && batch < 1 << 26 {
        batch *= 2;
    }
    let best = (0..5).map(|_| l.batch_ns(batch) / batch as f64).fold(f64::INFINITY, f64::min);
    let batch = (min_ns / best) as u64 + 1;
    let mut out = String::new();
    for _ in 0..samples {
        if random {
            fill(&mut l.key);
            fill(&mut l.nonce);
            l.set_key();
        }
        let (mut ns, mut ops) = (l.batch_ns(batch), batch);
        while ns < min_ns {
            ns += l.batch_ns(batch);
            ops += batch;
        }
        out.push_str(&format!("{:.3}\n", ns / ops as f64));
    }
    print!("{out}");
}
