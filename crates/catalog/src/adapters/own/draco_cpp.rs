//! Registration of the C++ DRACO implementations from `lwcbench-cpp` (`cpp/draco/draco.cpp`,
//! shared/specs/draco.md). DRACO has no official vectors, so both are verified against the
//! independent bit-serial Rust reference (`lwcbench_draco::reference::DracoRef`): its stored
//! checksum constant and a cross-check on random (key, IV, length) triples.
use lwcbench_core::StreamCipher;
use lwcbench_cpp::draco::{DracoCppFast, DracoCppRef};
use lwcbench_draco::checksum;
use lwcbench_draco::reference::DracoRef;

use crate::conformance;
use crate::entry::Entry;
use crate::verify::{Check, VerifyCtx};

/// Add this module's entries to the registry.
pub fn register(r: &mut Vec<Entry>) {
    r.push(Entry::stream(make_ref, verify_with).code(&["lwcbench_cpp::draco::DracoCppRef", "draco_ref_"]));
    r.push(Entry::stream(make_fast, verify_with).code(&["lwcbench_cpp::draco::DracoCppFast", "draco_fast_"]));
}

fn make_ref() -> Box<dyn StreamCipher + Send> {
    Box::new(DracoCppRef::new())
}
fn make_fast() -> Box<dyn StreamCipher + Send> {
    Box::new(DracoCppFast::new())
}

fn verify_with(e: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = match e.stream_make() {
        Ok(mk) => mk,
        Err(c) => return vec![c],
    };
    let triples = if ctx.thorough { 1024 } else { 64 };
    vec![conformance::check_stream(mk), checksum_check(mk), cross_check(mk, triples)]
}

fn id_of(c: &dyn StreamCipher) -> String {
    let info = c.info();
    format!("{}/{}", info.name, info.implementation)
}

/// The SUPERCOP-style digest over 256 triples must equal the constant stored with the reference.
fn checksum_check(mk: fn() -> Box<dyn StreamCipher + Send>) -> Check {
    let mut c = mk();
    let mut chk = Check::new(id_of(&*c), "checksum = lwcbench_draco::checksum::CHECKSUM_HEX (256 triples)");
    let mut err = None;
    let d = checksum::checksum(&mut |k, v, n, out| {
        if let Err(e) = c.init(k, v).and_then(|_| c.keystream_bits(out, n)) {
            err.get_or_insert(e);
        }
    });
    if let Some(e) = err {
        chk.fail(format!("keystream failed: {e}"));
    }
    chk.expect_eq("digest", checksum::to_hex(&d).as_slice(), checksum::CHECKSUM_HEX.as_bytes());
    chk
}

/// `n` random triples (fixed seed): the keystream, produced in two calls split at a random
/// bit, must equal the Rust reference's one-call keystream.
fn cross_check(mk: fn() -> Box<dyn StreamCipher + Send>, n: usize) -> Check {
    let mut c = mk();
    let mut chk =
        Check::new(id_of(&*c), format!("cross-check vs DracoRef (rust-ref), {n} random key/IV/length triples"));
    let mut seed = 0x4350_505F_4452_4143u64; // "CPP_DRAC"
    let mut next = move || {
        // SplitMix64
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for t in 0..n {
        let (mut key, mut iv) = ([0u8; 16], [0u8; 12]);
        key.iter_mut().chain(iv.iter_mut()).for_each(|b| *b = next() as u8);
        let nbits = (next() % 1001) as usize;
        let split = (next() % (nbits as u64 + 1)) as usize;
        let mut want = vec![0u8; nbits.div_ceil(8)];
        DracoRef::with_key_iv(&key, &iv).keystream_bits(&mut want, nbits).expect("reference keystream");
        let r = (|| {
            c.init(&key, &iv)?;
            let mut a = vec![0u8; split.div_ceil(8)];
            let mut b = vec![0u8; (nbits - split).div_ceil(8)];
            c.keystream_bits(&mut a, split)?;
            c.keystream_bits(&mut b, nbits - split)?;
            Ok::<_, lwcbench_core::CipherError>(concat_bits(&a, split, &b, nbits - split))
        })();
        match r {
            Ok(got) => chk.expect_eq(
                format!("triple {t} key {} iv {} {nbits} bits split at {split}", hex::encode(key), hex::encode(iv)),
                &got,
                &want,
            ),
            Err(e) => chk.fail(format!("triple {t}: {e}")),
        }
    }
    chk
}

/// Bits `a[..na]` followed by `b[..nb]`, packed most significant bit first (DRACO's P3 order).
fn concat_bits(a: &[u8], na: usize, b: &[u8], nb: usize) -> Vec<u8> {
    let mut out = vec![0u8; (na + nb).div_ceil(8)];
    let bit = |buf: &[u8], i: usize| (buf[i / 8] >> (7 - i % 8)) & 1;
    for i in 0..na + nb {
        let v = if i < na { bit(a, i) } else { bit(b, i - na) };
        out[i / 8] |= v << (7 - i % 8);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_cpp_variants_verify() {
        let ctx = VerifyCtx::default();
        let r = crate::registry();
        for id in ["DRACO/cpp-ref", "DRACO/cpp-fast"] {
            let e = r.iter().find(|e| e.id() == id).unwrap_or_else(|| panic!("{id} not registered"));
            assert_eq!(e.info.note, spec_note());
            for chk in e.checks(&ctx) {
                assert!(chk.ok() && !chk.skipped, "{id}: {} failed: {:?}", chk.what, chk.failures);
            }
        }
    }

    fn spec_note() -> &'static str {
        "DRACO (provisional reconstruction, not interoperable with the published cipher)"
    }

    #[test]
    fn concat_by_hand() {
        // 3 bits 101 then 6 bits 110011 -> 101110011 -> 0b1011_1001, 0b1000_0000
        assert_eq!(concat_bits(&[0b1010_0000], 3, &[0b1100_1100], 6), vec![0b1011_1001, 0b1000_0000]);
    }
}
