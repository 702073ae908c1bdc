//! The 32-bit-word fast variant (`DracoFast` on 32-bit targets), checked on the host against
//! the bit-serial reference and the stored checksum (the reference's own guard is its
//! hand-computed unit tests in `src/reference.rs`).
use lwcbench_core::{bits, StreamCipher};
use lwcbench_draco::checksum::{self, CHECKSUM_HEX};
use lwcbench_draco::fast32::DracoFast32;
use lwcbench_draco::DracoRef;

/// xorshift64*: deterministic test inputs.
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

fn bit(buf: &[u8], i: usize) -> u8 {
    (buf[i / 8] >> (7 - i % 8)) & 1
}

#[test]
fn fast32_checksum_reproduces_reference_constant() {
    let d = checksum::checksum(&mut |k, v, n, out| {
        DracoFast32::with_key_iv(k, v).keystream_bits(out, n).unwrap();
    });
    assert_eq!(&checksum::to_hex(&d)[..], CHECKSUM_HEX.as_bytes());
}

#[test]
fn fast32_equals_reference_random_and_chunked() {
    let mut rng = Rng(0x3232_3232_0123_4567);
    for case in 0..120 {
        let (key, iv) = (rng.bytes::<16>(), rng.bytes::<12>());
        let total = 1 + rng.below(2500);
        let mut want = vec![0u8; bits::bytes_for(total)];
        DracoRef::with_key_iv(&key, &iv).keystream_bits(&mut want, total).unwrap();
        let mut f = DracoFast32::with_key_iv(&key, &iv);
        let mut pos = 0;
        while pos < total {
            let n = match rng.below(4) {
                0 => rng.below(8),
                1 => rng.below(40),
                2 => 32,
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

/// Around f's all-zero term (s1 … s32 = 0) at every offset inside a group: random keys never
/// get there.
#[test]
fn fast32_equals_reference_around_the_all_zero_term() {
    let mut rng = Rng(99);
    for case in 0..160usize {
        let b = rng.bits::<95>();
        let n = rng.bits::<128>();
        let mut s = [0u8; 33];
        s[0] = (case % 2) as u8;
        // a single one at position p (or none): the all-zero window is reached p clocks later
        let p = (case / 2) % 70;
        if (1..33).contains(&p) {
            s[p] = 1;
        }
        let nbits = 400;
        let mut want = vec![0u8; bits::bytes_for(nbits)];
        DracoRef::from_registers(&b, &s, &n).keystream_bits(&mut want, nbits).unwrap();
        let mut got = vec![0u8; bits::bytes_for(nbits)];
        DracoFast32::from_registers(&b, &s, &n).keystream_bits(&mut got, nbits).unwrap();
        assert_eq!(got, want, "case {case}");
    }
}

#[test]
fn fast32_apply_equals_reference_apply() {
    let mut rng = Rng(7);
    for _ in 0..30 {
        let (key, iv) = (rng.bytes::<16>(), rng.bytes::<12>());
        let n = rng.below(1000);
        let data: Vec<u8> = (0..bits::bytes_for(n) + 1).map(|_| rng.next() as u8).collect();
        let (mut a, mut b) = (data.clone(), data.clone());
        DracoRef::with_key_iv(&key, &iv).apply_bits(&mut a, n).unwrap();
        DracoFast32::with_key_iv(&key, &iv).apply_bits(&mut b, n).unwrap();
        assert_eq!(a, b);
    }
}
