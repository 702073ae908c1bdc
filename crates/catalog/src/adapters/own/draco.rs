//! Registration of the `lwcbench-draco` implementations (DRACO, provisional reconstruction of
//! `shared/specs/draco.md`; no official vectors exist, see that page).
//!
//! What each entry is verified against:
//! * `DRACO/rust-ref` (the oracle): the stream contract; Boolean-function values on
//!   hand-picked states worked out by hand from the spec page; the stored SHA-256 checksum.
//! * `DRACO/rust-fast`: the stream contract; the stored checksum; a cross-check against the
//!   reference over random (key, IV, length) triples with chunked, bit-granular calls; and, for
//!   every bit-sliced backend this CPU can run, the same cross-check plus the checksum.
use lwcbench_core::{bits, BitOrder, StreamCipher};
use lwcbench_draco::bitsliced::{Backend, MultiDraco};
use lwcbench_draco::checksum;
use lwcbench_draco::reference::{self, RegB, RegS};
use lwcbench_draco::{DracoFast, DracoRef};

use crate::conformance;
use crate::entry::Entry;
use crate::verify::{Check, VerifyCtx};

/// Add this module's entries to the registry.
pub fn register(r: &mut Vec<Entry>) {
    r.push(
        Entry::stream(mk_ref, verify_ref)
            .code(&["lwcbench_draco::reference::"])
            .mcu_zeroed("draco_ref", "lwcbench_draco::DracoRef"),
    );
    r.push(
        Entry::stream(mk_fast, verify_fast)
            .code(&["lwcbench_draco::fast::"])
            .mcu_zeroed("draco_fast", "lwcbench_draco::DracoFast"),
    );
}

fn mk_ref() -> Box<dyn StreamCipher + Send> {
    Box::new(DracoRef::new())
}
fn mk_fast() -> Box<dyn StreamCipher + Send> {
    Box::new(DracoFast::new())
}

fn verify_ref(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let _ = ctx;
    vec![conformance::check_stream(mk_ref), hand_computed(), checksum_check(mk_ref)]
}

fn verify_fast(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let triples = if ctx.thorough { 1024 } else { 64 };
    let mut v = vec![conformance::check_stream(mk_fast), checksum_check(mk_fast), cross_check(mk_fast, triples)];
    for be in Backend::ALL {
        if be.available() {
            v.push(bitsliced_check(be, triples));
        }
    }
    v
}

/// Values of z, f, g and the P1 selection on hand-picked states, each worked out by hand from
/// the formulas in `shared/specs/draco.md` (the same cases as the crate's unit tests).
fn hand_computed() -> Check {
    let mut c =
        Check::new("DRACO/rust-ref", "hand-computed: z, f, g, P1 selection on hand-picked states (specs/draco.md)");
    let b = |ones: &[usize]| -> RegB {
        let mut b = [0u8; 95];
        ones.iter().for_each(|&i| b[i] = 1);
        b
    };
    let s = |ones: &[usize]| -> RegS {
        let mut s = [0u8; 33];
        ones.iter().for_each(|&i| s[i] = 1);
        s
    };
    // z: all zero -> 0; all ones -> L(7 terms)=1, Q(4)=0, T1(7)=1, T2(3)=1, T3(4)=0 -> 1
    c.expect("z(0) = 0", reference::z(&b(&[]), &s(&[])) == 0);
    c.expect("z(all ones) = 1", reference::z(&[1; 95], &[1; 33]) == 1);
    c.expect("z: b5 b85 = 1", reference::z(&b(&[5, 85]), &s(&[])) == 1);
    c.expect("z: degree-7 term", reference::z(&b(&[1, 16, 28, 45, 64, 75, 88]), &s(&[])) == 1);
    c.expect("z: s6 s29 b62 b72", reference::z(&b(&[62, 72]), &s(&[6, 29])) == 1);
    // f: S = 0 -> only the all-zero term -> 1; s0 alone -> s0 + 1 = 0; all ones -> 1+0+1+0 = 0
    c.expect("f(0) = 1 (all-zero term)", reference::f(&s(&[])) == 1);
    c.expect("f(s0) = 0", reference::f(&s(&[0])) == 0);
    c.expect("f(all ones) = 0", reference::f(&[1; 33]) == 0);
    c.expect("f: s15 s16 s17 s24 (+s32) = 1", reference::f(&s(&[32, 15, 16, 17, 24])) == 1);
    // g: b86 b90 b91 b93 -> 1; plus b94 -> 0; all ones -> 1+1+1+1 = 0
    c.expect("g: degree-4 term", reference::g(&b(&[86, 90, 91, 93])) == 1);
    c.expect("g: degree-4 term + b94", reference::g(&b(&[86, 90, 91, 93, 94])) == 0);
    c.expect("g(all ones) = 0", reference::g(&[1; 95]) == 0);
    // P1: s2 and s30 -> j = 65
    let mut n = [0u8; 128];
    n[65] = 1;
    c.expect("select: s2 s30 -> n65", reference::select(&s(&[2, 30]), &n) == 1);
    c.expect("select: s2 -> n1", reference::select(&s(&[2]), &n) == 0);
    c
}

/// The SUPERCOP-style checksum (`lwcbench_draco::checksum`) equals the stored constant.
fn checksum_check(mk: fn() -> Box<dyn StreamCipher + Send>) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(
        format!("{}/{}", info.name, info.implementation),
        format!("checksum: SHA-256 over {} (key, IV, 0..=300-bit) keystreams = stored CHECKSUM_HEX", checksum::PAIRS),
    );
    let mut err = None;
    let d = checksum::checksum(&mut |k, v, n, out| {
        if let Err(e) = c.init(k, v).and_then(|_| c.keystream_bits(out, n)) {
            err = Some(e);
        }
    });
    if let Some(e) = err {
        chk.fail(format!("cipher error: {e}"));
    }
    let hex = checksum::to_hex(&d);
    chk.expect_eq("digest", &hex, checksum::CHECKSUM_HEX.as_bytes());
    chk
}

/// xorshift64* for the cross-check inputs (deterministic, so a failure can be reproduced).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn fill(&mut self, b: &mut [u8]) {
        b.iter_mut().for_each(|x| *x = self.next() as u8);
    }
}

fn reference_bits(key: &[u8; 16], iv: &[u8; 12], nbits: usize) -> Vec<u8> {
    let mut r = DracoRef::with_key_iv(key, iv);
    let mut out = vec![0u8; bits::bytes_for(nbits)];
    r.keystream_bits(&mut out, nbits).expect("buffer sized");
    out
}

fn get_bit(buf: &[u8], i: usize) -> u8 {
    conformance::bit(buf, i, BitOrder::MsbFirst)
}

/// Random (key, IV, length) triples; the variant's keystream is requested in bit-granular
/// chunks and compared with one reference call.
fn cross_check(mk: fn() -> Box<dyn StreamCipher + Send>, triples: usize) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(
        format!("{}/{}", info.name, info.implementation),
        format!("cross-check: equals DRACO/rust-ref on {triples} random (key, IV, length ≤ 2000 bits) triples, chunked calls"),
    );
    let mut rng = Rng(0xD4AC_0C4E_C7EC_0001);
    for t in 0..triples {
        let (mut key, mut iv) = ([0u8; 16], [0u8; 12]);
        rng.fill(&mut key);
        rng.fill(&mut iv);
        let total = (rng.next() % 2001) as usize;
        let want = reference_bits(&key, &iv, total);
        if let Err(e) = c.init(&key, &iv) {
            chk.fail(format!("triple {t}: init: {e}"));
            continue;
        }
        let mut got = vec![0u8; bits::bytes_for(total)];
        let mut pos = 0;
        let mut ok = true;
        while pos < total {
            let n = ((rng.next() % 150) as usize).min(total - pos);
            let mut out = vec![0u8; bits::bytes_for(n)];
            if let Err(e) = c.keystream_bits(&mut out, n) {
                chk.fail(format!("triple {t}: keystream_bits({n}): {e}"));
                ok = false;
                break;
            }
            for i in 0..n {
                got[(pos + i) / 8] |= get_bit(&out, i) << (7 - (pos + i) % 8);
            }
            pos += n;
        }
        if ok {
            chk.expect_eq(format!("triple {t} ({total} bits)"), &got, &want);
        }
    }
    chk
}

/// A bit-sliced backend: the checksum over all 256 triples (as parallel streams) and random
/// streams against the reference with chunked calls of odd lengths.
fn bitsliced_check(be: Backend, triples: usize) -> Check {
    let mut chk = Check::new(
        "DRACO/rust-fast",
        format!(
            "bitsliced {} ({} lanes): equals DRACO/rust-ref on {triples} random streams (chunked) + checksum",
            be.name(),
            be.lanes()
        ),
    );
    // checksum: the 256 triples, `lanes` streams at a time, 300 bits each, cut to length
    let inputs: Vec<_> = (0..checksum::PAIRS).map(checksum::input).collect();
    let nb = bits::bytes_for(checksum::MAX_BITS);
    let mut outs = vec![0u8; checksum::PAIRS * nb];
    for (ci, chunk) in inputs.chunks(be.lanes()).enumerate() {
        let keys: Vec<_> = chunk.iter().map(|i| i.key).collect();
        let ivs: Vec<_> = chunk.iter().map(|i| i.iv).collect();
        let r = MultiDraco::with_backend(be, &keys, &ivs)
            .and_then(|mut m| m.keystream_bits(&mut outs[ci * be.lanes() * nb..], nb, checksum::MAX_BITS));
        if let Err(e) = r {
            chk.fail(format!("{e:?}"));
            return chk;
        }
    }
    let d = checksum::checksum_indexed(&mut |i, out| {
        out.copy_from_slice(&outs[i * nb..i * nb + out.len()]);
        let n = inputs[i].nbits;
        if let Some(last) = out.last_mut() {
            *last &= bits::tail_mask(n, BitOrder::MsbFirst);
        }
    });
    chk.expect_eq("checksum digest", &checksum::to_hex(&d), checksum::CHECKSUM_HEX.as_bytes());

    // random streams, compared in full
    let mut rng = Rng(0xB175_11CE ^ be.lanes() as u64);
    let streams = triples.min(be.lanes());
    let keys: Vec<[u8; 16]> = (0..streams)
        .map(|_| {
            let mut k = [0u8; 16];
            rng.fill(&mut k);
            k
        })
        .collect();
    let ivs: Vec<[u8; 12]> = (0..streams)
        .map(|_| {
            let mut v = [0u8; 12];
            rng.fill(&mut v);
            v
        })
        .collect();
    let mut m = match MultiDraco::with_backend(be, &keys, &ivs) {
        Ok(m) => m,
        Err(e) => {
            chk.fail(format!("{e:?}"));
            return chk;
        }
    };
    let chunks = [3usize, 64, 1, 200, 77, 131];
    let total: usize = chunks.iter().sum();
    let mut got = vec![vec![0u8; bits::bytes_for(total)]; streams];
    let mut pos = 0;
    for n in chunks {
        let stride = bits::bytes_for(n);
        let mut out = vec![0u8; streams * stride];
        if let Err(e) = m.keystream_bits(&mut out, stride, n) {
            chk.fail(format!("keystream_bits({n}): {e:?}"));
            return chk;
        }
        for (i, g) in got.iter_mut().enumerate() {
            for k in 0..n {
                g[(pos + k) / 8] |= get_bit(&out[i * stride..], k) << (7 - (pos + k) % 8);
            }
        }
        pos += n;
    }
    for i in 0..streams {
        chk.expect_eq(format!("stream {i}"), &got[i], &reference_bits(&keys[i], &ivs[i], total));
    }
    chk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draco_entries_verify() {
        let r = crate::registry();
        let mut n = 0;
        for e in r.iter().filter(|e| e.info.name == "DRACO" && e.info.implementation.starts_with("rust-")) {
            assert_eq!(e.info.note, "DRACO (provisional reconstruction, not interoperable with the published cipher)");
            for c in e.checks(&VerifyCtx::discover()) {
                assert!(c.ok(), "{}: {} {:?}", c.id, c.what, c.failures);
                assert!(!c.skipped);
            }
            n += 1;
        }
        assert_eq!(n, 2);
    }

    #[test]
    fn checksum_check_can_fail() {
        // a "cipher" that is the reference with one output bit flipped must fail the checksum
        struct Broken(DracoRef);
        impl StreamCipher for Broken {
            fn info(&self) -> lwcbench_core::CipherInfo {
                self.0.info()
            }
            fn init(&mut self, k: &[u8], v: &[u8]) -> Result<(), lwcbench_core::CipherError> {
                self.0.init(k, v)
            }
            fn keystream_bits(&mut self, out: &mut [u8], n: usize) -> Result<(), lwcbench_core::CipherError> {
                self.0.keystream_bits(out, n)?;
                if n > 100 {
                    out[12] ^= 1;
                }
                Ok(())
            }
            fn apply_bits(&mut self, d: &mut [u8], n: usize) -> Result<(), lwcbench_core::CipherError> {
                self.0.apply_bits(d, n)
            }
        }
        let c = checksum_check(|| Box::new(Broken(DracoRef::new())));
        assert!(!c.ok());
        let c = cross_check(|| Box::new(Broken(DracoRef::new())), 16);
        assert!(!c.ok());
    }
}
