//! Every DRACO variant against the bit-serial reference (the oracle, itself guarded by the
//! hand-computed unit tests in `src/reference.rs`), and against the stored checksum.
// Integration tests, helpers included: a panic is the failure report, as .clippy.toml
// allows in #[test] functions.
#![allow(clippy::unwrap_used)]
use lwcbench_core::{bits, StreamCipher};
use lwcbench_draco::bitsliced::{Backend, MultiDraco};
use lwcbench_draco::checksum::{self, CHECKSUM_HEX};
use lwcbench_draco::{DracoFast, DracoRef};
use proptest::prelude::*;

/// xorshift64*: a small deterministic generator for test inputs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        core::array::from_fn(|_| self.next() as u8)
    }
    fn bits<const N: usize>(&mut self) -> [u8; N] {
        core::array::from_fn(|_| (self.next() >> 40) as u8 & 1)
    }
}

fn reference(key: &[u8; 16], iv: &[u8; 12], nbits: usize) -> Vec<u8> {
    let mut r = DracoRef::with_key_iv(key, iv);
    let mut out = vec![0u8; bits::bytes_for(nbits)];
    r.keystream_bits(&mut out, nbits).unwrap();
    out
}

fn bit(buf: &[u8], i: usize) -> u8 {
    (buf[i / 8] >> (7 - i % 8)) & 1
}

fn available() -> Vec<Backend> {
    let v: Vec<_> = Backend::ALL.into_iter().filter(|b| b.available()).collect();
    assert!(v.contains(&Backend::Portable));
    v
}

#[test]
fn fast_equals_reference_random() {
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    for case in 0..300 {
        let (key, iv) = (rng.bytes::<16>(), rng.bytes::<12>());
        let n = match case % 4 {
            0 => rng.below(64),
            1 => rng.below(300),
            2 => 64 * rng.below(20) + rng.below(2),
            _ => rng.below(3000),
        };
        let want = reference(&key, &iv, n);
        let mut f = DracoFast::with_key_iv(&key, &iv);
        let mut got = vec![0xA5u8; bits::bytes_for(n)];
        f.keystream_bits(&mut got, n).unwrap();
        assert_eq!(got, want, "case {case}: {n} bits");
    }
}

#[test]
fn fast_chunked_continues_the_stream() {
    let mut rng = Rng(42);
    for case in 0..60 {
        let (key, iv) = (rng.bytes::<16>(), rng.bytes::<12>());
        let total = 2500;
        let want = reference(&key, &iv, total);
        let mut f = DracoFast::with_key_iv(&key, &iv);
        let mut pos = 0;
        while pos < total {
            let n = match rng.below(4) {
                0 => rng.below(8),
                1 => rng.below(70),
                2 => 64,
                _ => rng.below(400),
            }
            .min(total - pos);
            let mut out = vec![0xFFu8; bits::bytes_for(n)];
            f.keystream_bits(&mut out, n).unwrap();
            for i in 0..n {
                assert_eq!(bit(&out, i), bit(&want, pos + i), "case {case} bit {}", pos + i);
            }
            if n % 8 != 0 {
                assert_eq!(out[n / 8] & !bits::tail_mask(n, lwcbench_core::BitOrder::MsbFirst), 0);
            }
            pos += n;
        }
    }
}

#[test]
fn fast_apply_equals_reference_apply() {
    let mut rng = Rng(7);
    for _ in 0..50 {
        let (key, iv) = (rng.bytes::<16>(), rng.bytes::<12>());
        let n = rng.below(1000);
        let data: Vec<u8> = (0..bits::bytes_for(n) + 1).map(|_| rng.next() as u8).collect();
        let (mut a, mut b) = (data.clone(), data.clone());
        DracoRef::with_key_iv(&key, &iv).apply_bits(&mut a, n).unwrap();
        DracoFast::with_key_iv(&key, &iv).apply_bits(&mut b, n).unwrap();
        assert_eq!(a, b);
    }
}

/// States around f's all-zero term (s1 … s32 = 0), reached at every offset inside the fast
/// variant's 8- and 64-clock groups; random keys never get there.
fn zero_term_states() -> Vec<([u8; 95], [u8; 33], [u8; 128])> {
    let mut rng = Rng(99);
    let mut v = Vec::new();
    for case in 0..140usize {
        let b = rng.bits::<95>();
        let n = rng.bits::<128>();
        let mut s = [0u8; 33];
        if case % 2 == 1 {
            s[0] = 1;
        }
        let one = (case / 2) % 70;
        if one < 33 {
            s[one] = 1;
        }
        v.push((b, s, n));
    }
    // and fully random states
    for _ in 0..60 {
        v.push((rng.bits::<95>(), rng.bits::<33>(), rng.bits::<128>()));
    }
    v
}

fn reference_from(regs: &([u8; 95], [u8; 33], [u8; 128]), nbits: usize) -> Vec<u8> {
    let mut r = DracoRef::from_registers(&regs.0, &regs.1, &regs.2);
    let mut out = vec![0u8; bits::bytes_for(nbits)];
    r.keystream_bits(&mut out, nbits).unwrap();
    out
}

#[test]
fn fast_equals_reference_around_the_all_zero_term() {
    for (i, regs) in zero_term_states().iter().enumerate() {
        let want = reference_from(regs, 400);
        let mut f = DracoFast::from_registers(&regs.0, &regs.1, &regs.2);
        let mut got = vec![0u8; 50];
        f.keystream_bits(&mut got, 400).unwrap();
        assert_eq!(got, want, "state {i}");
    }
    // the all-zero term must actually fire in these states: S = 0 gives new s32 = 1
    let mut r = DracoRef::from_registers(&[0; 95], &[0; 33], &[0; 128]);
    r.next_bit();
    assert_eq!(r.state().1[32], 1);
}

#[test]
fn bitsliced_equals_reference_around_the_all_zero_term() {
    let states = zero_term_states();
    for be in available() {
        for chunk in states.chunks(be.lanes()) {
            let mut m = MultiDraco::from_registers(be, chunk).unwrap();
            let mut out = vec![0u8; chunk.len() * 50];
            m.keystream_bits(&mut out, 50, 400).unwrap();
            for (i, regs) in chunk.iter().enumerate() {
                assert_eq!(out[50 * i..50 * i + 50], reference_from(regs, 400)[..], "{be:?} state {i}");
            }
        }
    }
}

#[test]
fn bitsliced_equals_reference_every_backend() {
    let mut rng = Rng(0xB175);
    for be in available() {
        for &streams in &[1usize, 3, 64, 65, be.lanes()] {
            if streams > be.lanes() {
                continue;
            }
            let keys: Vec<[u8; 16]> = (0..streams).map(|_| rng.bytes()).collect();
            let ivs: Vec<[u8; 12]> = (0..streams).map(|_| rng.bytes()).collect();
            let total = 700;
            let mut m = MultiDraco::with_backend(be, &keys, &ivs).unwrap();
            assert_eq!(m.backend(), be);
            // chunked calls of odd lengths, each packed from bit 0 of its own buffer
            let mut got = vec![vec![0u8; bits::bytes_for(total)]; streams];
            let mut pos = 0;
            for n in [1usize, 13, 64, 7, 130, 250, 235] {
                let stride = bits::bytes_for(n) + 3;
                let mut out = vec![0xEEu8; streams * stride];
                m.keystream_bits(&mut out, stride, n).unwrap();
                for (i, g) in got.iter_mut().enumerate() {
                    let o = &out[i * stride..i * stride + bits::bytes_for(n)];
                    for k in 0..n {
                        g[(pos + k) / 8] |= bit(o, k) << (7 - (pos + k) % 8);
                    }
                    if n % 8 != 0 {
                        assert_eq!(o[n / 8] & !bits::tail_mask(n, lwcbench_core::BitOrder::MsbFirst), 0);
                    }
                    assert!(
                        out[i * stride + bits::bytes_for(n)..(i + 1) * stride].iter().all(|&x| x == 0xEE),
                        "wrote past its bytes"
                    );
                }
                pos += n;
            }
            assert_eq!(pos, total);
            // check a sample of streams (all when few) against the reference
            let step = (streams / 17).max(1);
            for i in (0..streams).step_by(step).chain([streams - 1]) {
                assert_eq!(got[i], reference(&keys[i], &ivs[i], total), "{be:?} {streams} streams, stream {i}");
            }
        }
    }
}

#[test]
fn bitsliced_raw_lanes_equal_byte_api() {
    let mut rng = Rng(5);
    for be in available() {
        let n = be.lanes();
        let keys: Vec<[u8; 16]> = (0..n).map(|_| rng.bytes()).collect();
        let ivs: Vec<[u8; 12]> = (0..n).map(|_| rng.bytes()).collect();
        let mut a = MultiDraco::with_backend(be, &keys, &ivs).unwrap();
        let mut b = a.clone();
        let mut bytes = vec![0u8; n * 20];
        a.keystream(&mut bytes, 20).unwrap();
        let mut ok = true;
        b.keystream_lanes(160, &mut |t, lanes| {
            for l in 0..n {
                ok &= ((lanes[l / 64] >> (l % 64)) & 1) as u8 == bit(&bytes[20 * l..], t);
            }
        });
        assert!(ok, "{be:?}");
    }
}

#[test]
fn checksum_fast_reproduces_reference_constant() {
    let d = checksum::checksum(&mut |k, v, n, out| {
        DracoFast::with_key_iv(k, v).keystream_bits(out, n).unwrap();
    });
    assert_eq!(std::str::from_utf8(&checksum::to_hex(&d)).unwrap(), CHECKSUM_HEX);
}

#[test]
fn checksum_bitsliced_reproduces_reference_constant_every_backend() {
    for be in available() {
        // all 256 triples, `lanes` at a time, 300 bits each, then cut to each triple's length
        let inputs: Vec<_> = (0..checksum::PAIRS).map(checksum::input).collect();
        let mut outs = vec![[0u8; 38]; checksum::PAIRS];
        for (c, chunk) in inputs.chunks(be.lanes()).enumerate() {
            let keys: Vec<_> = chunk.iter().map(|i| i.key).collect();
            let ivs: Vec<_> = chunk.iter().map(|i| i.iv).collect();
            let mut m = MultiDraco::with_backend(be, &keys, &ivs).unwrap();
            let mut buf = vec![0u8; chunk.len() * 38];
            m.keystream_bits(&mut buf, 38, checksum::MAX_BITS).unwrap();
            for i in 0..chunk.len() {
                outs[c * be.lanes() + i].copy_from_slice(&buf[38 * i..38 * i + 38]);
            }
        }
        let d = checksum::checksum_indexed(&mut |i, out| {
            let n = inputs[i].nbits;
            out.copy_from_slice(&outs[i][..out.len()]);
            if n % 8 != 0 {
                let last = out.len() - 1;
                out[last] &= bits::tail_mask(n, lwcbench_core::BitOrder::MsbFirst);
            }
        });
        assert_eq!(std::str::from_utf8(&checksum::to_hex(&d)).unwrap(), CHECKSUM_HEX, "{be:?}");
    }
}

#[test]
fn checksum_detects_a_wrong_generator() {
    // one flipped bit in one output changes the digest
    let d = checksum::checksum(&mut |k, v, n, out| {
        DracoFast::with_key_iv(k, v).keystream_bits(out, n).unwrap();
        if n == 151 {
            out[0] ^= 0x80;
        }
    });
    assert!(!checksum::matches(&d));
}

#[test]
fn deterministic_and_reinit() {
    let (key, iv) = ([3u8; 16], [4u8; 12]);
    let mut f = DracoFast::with_key_iv(&key, &iv);
    let mut a = [0u8; 77];
    f.keystream(&mut a).unwrap();
    f.init(&key, &iv).unwrap();
    let mut b = [0u8; 77];
    f.keystream(&mut b).unwrap();
    assert_eq!(a, b);
    let mut m1 = MultiDraco::new(&[key, [5; 16]], &[iv, iv]).unwrap();
    let mut m2 = MultiDraco::new(&[key, [5; 16]], &[iv, iv]).unwrap();
    let (mut o1, mut o2) = ([0u8; 154], [0u8; 154]);
    m1.keystream(&mut o1, 77).unwrap();
    m2.keystream(&mut o2, 77).unwrap();
    assert_eq!(o1, o2);
    assert_eq!(o1[..77], a);
}

#[test]
fn multi_rejects_bad_arguments() {
    use lwcbench_draco::bitsliced::MultiError;
    let k = vec![[0u8; 16]; 65];
    let v = vec![[0u8; 12]; 65];
    assert!(matches!(MultiDraco::with_backend(Backend::Portable, &k, &v), Err(MultiError::StreamCount { .. })));
    assert!(matches!(
        MultiDraco::with_backend(Backend::Portable, &k[..2], &v[..1]),
        Err(MultiError::StreamCount { .. })
    ));
    assert!(matches!(MultiDraco::with_backend(Backend::Portable, &[], &[]), Err(MultiError::StreamCount { .. })));
    let mut m = MultiDraco::with_backend(Backend::Portable, &k[..2], &v[..2]).unwrap();
    let mut out = [0u8; 3];
    assert!(m.keystream_bits(&mut out, 1, 9).is_err()); // stride < 2 bytes
    assert!(m.keystream_bits(&mut out, 2, 9).is_err()); // needs 4 bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any split of a keystream into calls gives the reference's bits, for fast and bit-sliced.
    #[test]
    fn prop_any_split_matches_reference(
        key in any::<[u8; 16]>(),
        iv in any::<[u8; 12]>(),
        splits in proptest::collection::vec(0usize..200, 1..8),
    ) {
        let total: usize = splits.iter().sum();
        let want = reference(&key, &iv, total);
        let mut f = DracoFast::with_key_iv(&key, &iv);
        let mut m = MultiDraco::with_backend(Backend::best(), &[key], &[iv]).unwrap();
        let mut pos = 0;
        for &n in &splits {
            let mut a = vec![0u8; bits::bytes_for(n)];
            let mut b = vec![0u8; bits::bytes_for(n)];
            f.keystream_bits(&mut a, n).unwrap();
            m.keystream_bits(&mut b, bits::bytes_for(n), n).unwrap();
            for i in 0..n {
                prop_assert_eq!(bit(&a, i), bit(&want, pos + i));
                prop_assert_eq!(bit(&b, i), bit(&want, pos + i));
            }
            pos += n;
        }
    }

    /// Random states (skipping init) evolve identically in all variants.
    #[test]
    fn prop_random_states_match(b in any::<[bool; 95]>(), s in any::<[bool; 33]>(), seed in any::<u64>()) {
        let b = b.map(u8::from);
        let s = s.map(u8::from);
        let mut rng = Rng(seed | 1);
        let n = rng.bits::<128>();
        let want = reference_from(&(b, s, n), 333);
        let mut f = DracoFast::from_registers(&b, &s, &n);
        let mut got = vec![0u8; 42];
        f.keystream_bits(&mut got, 333).unwrap();
        prop_assert_eq!(&got, &want);
        let mut m = MultiDraco::from_registers(Backend::Portable, &[(b, s, n)]).unwrap();
        m.keystream_bits(&mut got, 42, 333).unwrap();
        prop_assert_eq!(&got, &want);
    }
}
