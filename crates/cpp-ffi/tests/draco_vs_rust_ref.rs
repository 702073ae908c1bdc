//! The C++ DRACO variants (cpp/draco/draco.cpp) against the independent bit-serial Rust
//! reference `lwcbench_draco::reference::DracoRef` and its stored checksum constant
//! (shared/specs/draco.md, "Checking an implementation").
// Integration tests, helpers included: a panic is the failure report, as .clippy.toml
// allows in #[test] functions.
#![allow(clippy::unwrap_used)]
use lwcbench_core::{CipherError, StreamCipher};
use lwcbench_cpp::draco::{DracoCppFast, DracoCppRef};
use lwcbench_draco::checksum;
use lwcbench_draco::reference::DracoRef;

/// SplitMix64, so the test needs no RNG crate; the seed is fixed for reproducible failures.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn fill(&mut self, b: &mut [u8]) {
        for x in b {
            *x = self.next() as u8;
        }
    }
}

/// A named constructor of one variant under test.
type Maker = (&'static str, fn() -> Box<dyn StreamCipher>);

fn makers() -> [Maker; 2] {
    [("cpp-ref", || Box::new(DracoCppRef::new())), ("cpp-fast", || Box::new(DracoCppFast::new()))]
}

/// First `n` bits from the Rust reference, one call.
fn oracle(key: &[u8; 16], iv: &[u8; 12], n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n.div_ceil(8)];
    DracoRef::with_key_iv(key, iv).keystream_bits(&mut out, n).unwrap();
    out
}

fn bit(buf: &[u8], i: usize) -> u8 {
    (buf[i / 8] >> (7 - i % 8)) & 1
}

#[test]
fn one_call_equals_rust_reference() {
    let mut rng = Rng(1);
    for (name, mk) in makers() {
        for t in 0..150 {
            let (mut key, mut iv) = ([0u8; 16], [0u8; 12]);
            rng.fill(&mut key);
            rng.fill(&mut iv);
            // lengths around the C++ fast variant's 64-bit blocks and odd lengths
            let n = match t % 3 {
                0 => rng.below(80),
                1 => 64 * rng.below(6) + rng.below(3),
                _ => rng.below(1200),
            };
            let want = oracle(&key, &iv, n);
            let mut c = mk();
            c.init(&key, &iv).unwrap();
            let mut got = vec![0xA5u8; n.div_ceil(8)];
            c.keystream_bits(&mut got, n).unwrap();
            assert_eq!(got, want, "{name} key {key:02x?} iv {iv:02x?} n {n}");
        }
    }
}

#[test]
fn chunked_calls_continue_the_stream() {
    let mut rng = Rng(2);
    for (name, mk) in makers() {
        for _ in 0..60 {
            let (mut key, mut iv) = ([0u8; 16], [0u8; 12]);
            rng.fill(&mut key);
            rng.fill(&mut iv);
            let total = 2000;
            let want = oracle(&key, &iv, total);
            let mut c = mk();
            c.init(&key, &iv).unwrap();
            let mut pos = 0;
            while pos < total {
                // mix tiny, sub-block and multi-block chunks; alternate keystream and apply
                let n = match rng.below(4) {
                    0 => rng.below(9),
                    1 => rng.below(70),
                    2 => 64,
                    _ => rng.below(300),
                }
                .min(total - pos);
                let mut buf = vec![0u8; n.div_ceil(8)];
                if rng.below(2) == 0 {
                    c.keystream_bits(&mut buf, n).unwrap();
                } else {
                    c.apply_bits(&mut buf, n).unwrap();
                }
                for i in 0..n {
                    assert_eq!(bit(&buf, i), bit(&want, pos + i), "{name}: bit {} (chunk of {n})", pos + i);
                }
                // unused tail bits are zero (keystream) or untouched zeros (apply)
                if n % 8 != 0 {
                    assert_eq!(buf[n / 8] & (0xFF >> (n % 8)), 0, "{name}: tail of a {n}-bit chunk");
                }
                pos += n;
            }
        }
    }
}

#[test]
fn apply_leaves_bits_past_n() {
    let mut rng = Rng(3);
    for (name, mk) in makers() {
        for n in [1usize, 7, 9, 63, 65, 100, 131] {
            let (mut key, mut iv) = ([0u8; 16], [0u8; 12]);
            rng.fill(&mut key);
            rng.fill(&mut iv);
            let ks = oracle(&key, &iv, n);
            let mut data = vec![0u8; n.div_ceil(8) + 1];
            rng.fill(&mut data);
            let orig = data.clone();
            let mut c = mk();
            c.init(&key, &iv).unwrap();
            c.apply_bits(&mut data, n).unwrap();
            for i in 0..data.len() * 8 {
                let want = if i < n { bit(&orig, i) ^ bit(&ks, i) } else { bit(&orig, i) };
                assert_eq!(bit(&data, i), want, "{name}: bit {i} of apply_bits({n})");
            }
        }
    }
}

#[test]
fn long_stream_equals_rust_reference() {
    // Well past init; the fast variant's S pipeline wraps many times.
    let key = [0x0Fu8; 16];
    let iv = [0xF0u8; 12];
    let n = 100_003;
    let want = oracle(&key, &iv, n);
    for (name, mk) in makers() {
        let mut c = mk();
        c.init(&key, &iv).unwrap();
        let mut got = vec![0u8; n.div_ceil(8)];
        c.keystream_bits(&mut got, n).unwrap();
        assert!(got == want, "{name}: long stream differs");
    }
}

#[test]
fn all_zero_and_all_one_keys() {
    for (key, iv) in [([0u8; 16], [0u8; 12]), ([0xFF; 16], [0xFF; 12]), ([0; 16], [0xFF; 12])] {
        let want = oracle(&key, &iv, 777);
        for (name, mk) in makers() {
            let mut c = mk();
            c.init(&key, &iv).unwrap();
            let mut got = vec![0u8; 98];
            c.keystream_bits(&mut got, 777).unwrap();
            assert_eq!(got, want, "{name} key {key:02x?} iv {iv:02x?}");
        }
    }
}

#[test]
fn s_register_loaded_all_zero() {
    // Key bits 95..127 load S (P2); zero them so the all-zero term of f fires in the first
    // mixing clock, and for about half the keys again one clock later (lane 1 of the C++ fast
    // variant's two-clock mixing step).
    let mut rng = Rng(4);
    for _ in 0..64 {
        let (mut key, mut iv) = ([0u8; 16], [0u8; 12]);
        rng.fill(&mut key);
        rng.fill(&mut iv);
        key[11] &= 0xFE;
        key[12..].fill(0);
        let want = oracle(&key, &iv, 300);
        for (name, mk) in makers() {
            let mut c = mk();
            c.init(&key, &iv).unwrap();
            let mut got = vec![0u8; 38];
            c.keystream_bits(&mut got, 300).unwrap();
            assert_eq!(got, want, "{name} key {key:02x?} iv {iv:02x?}");
        }
    }
}

#[test]
fn reproduce_stored_checksum() {
    for (name, mk) in makers() {
        let mut c = mk();
        let d = checksum::checksum(&mut |k, v, n, out| {
            c.init(k, v).unwrap();
            c.keystream_bits(out, n).unwrap();
        });
        assert!(
            checksum::matches(&d),
            "{name}: checksum {} != stored {}",
            std::str::from_utf8(&checksum::to_hex(&d)).unwrap(),
            checksum::CHECKSUM_HEX
        );
    }
}

#[test]
fn deterministic_and_reinit_resets() {
    let key = *b"0123456789abcdef";
    let iv = *b"nonce-96-bit";
    for (name, mk) in makers() {
        let mut a = mk();
        a.init(&key, &iv).unwrap();
        let mut first = [0u8; 40];
        a.keystream(&mut first).unwrap();
        // use the instance mid-block, then re-init: same output again
        let mut junk = [0u8; 5];
        a.keystream_bits(&mut junk, 37).unwrap();
        a.init(&key, &iv).unwrap();
        let mut again = [0u8; 40];
        a.keystream(&mut again).unwrap();
        let mut b = mk();
        b.init(&key, &iv).unwrap();
        let mut fresh = [0u8; 40];
        b.keystream(&mut fresh).unwrap();
        assert_eq!(first, again, "{name}: re-init");
        assert_eq!(first, fresh, "{name}: fresh instance");
        let mut iv2 = iv;
        iv2[11] ^= 1;
        b.init(&key, &iv2).unwrap();
        b.keystream(&mut fresh).unwrap();
        assert_ne!(first, fresh, "{name}: IV ignored");
    }
}

#[test]
fn length_errors() {
    for (name, mk) in makers() {
        let mut c = mk();
        assert!(matches!(c.init(&[0; 15], &[0; 12]), Err(CipherError::KeyLength { expected: 16, got: 15 })), "{name}");
        assert!(matches!(c.init(&[0; 16], &[0; 13]), Err(CipherError::IvLength { expected: 12, got: 13 })), "{name}");
        c.init(&[0; 16], &[0; 12]).unwrap();
        let mut small = [0u8; 1];
        assert!(matches!(c.keystream_bits(&mut small, 9), Err(CipherError::BufferTooSmall { .. })), "{name}");
        assert_eq!(c.info().name, "DRACO");
        assert_eq!(c.info().implementation, name);
    }
}
