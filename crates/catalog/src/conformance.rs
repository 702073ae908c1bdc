//! Contract checks every implementation must pass, independent of its known answers:
//! determinism, bit-granular keystream consistency, in-place XOR semantics, length errors,
//! and AEAD rejection. Run by `lwcbench verify` for every registered entry.
use lwcbench_core::{bits, Aead, BitOrder, BlockCipher, CipherError, CipherInfo, Family, StreamCipher};

use crate::verify::Check;

/// Bit `i` of a packed keystream in the given order. `i` must be below `8 * buf.len()`.
pub fn bit(buf: &[u8], i: usize, order: BitOrder) -> u8 {
    let b = buf[i / 8];
    match order {
        BitOrder::MsbFirst => (b >> (7 - i % 8)) & 1,
        BitOrder::LsbFirst => (b >> (i % 8)) & 1,
    }
}

/// Set bit `i` of a packed keystream in the given order to `v` (0 or 1).
fn set_bit(buf: &mut [u8], i: usize, order: BitOrder, v: u8) {
    let sh = match order {
        BitOrder::MsbFirst => 7 - i % 8,
        BitOrder::LsbFirst => i % 8,
    };
    buf[i / 8] = (buf[i / 8] & !(1 << sh)) | (v << sh);
}

/// Deterministic test key/IV bytes (a simple counter pattern offset by `seed`).
fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed)).collect()
}

/// The key, IV and reference keystream every step of the stream contract compares against.
struct StreamCase {
    info: CipherInfo,
    key: Vec<u8>,
    iv: Vec<u8>,
    /// 80 bytes from one `keystream` call right after `init`.
    long: Vec<u8>,
}

/// Run one group of checks. A cipher call that fails inside it is recorded as a failure of
/// the group, so a broken implementation is reported instead of panicking the verifier.
fn step(chk: &mut Check, what: &str, f: impl FnOnce(&mut Check) -> Result<(), CipherError>) {
    if let Err(e) = f(chk) {
        chk.fail(format!("{what}: {e}"));
    }
}

/// Check the stream-cipher contract of `lwcbench_core::StreamCipher`.
pub fn check_stream(mk: fn() -> Box<dyn StreamCipher + Send>) -> Check {
    let mut c = mk();
    let info: CipherInfo = c.info();
    let mut chk = Check::new(format!("{}/{}", info.name, info.implementation), "conformance: stream contract");
    let (key, iv) = (pattern(info.key_bytes(), 1), pattern(info.iv_bytes(), 101));
    // Reference: 80 bytes from one call.
    let mut long = vec![0u8; 80];
    if let Err(e) = c.init(&key, &iv).and_then(|_| c.keystream(&mut long)) {
        chk.fail(format!("init/keystream failed: {e}"));
        return chk;
    }
    let t = StreamCase { info, key, iv, long };
    let c = c.as_mut();
    step(&mut chk, "re-init, fresh instance, other IV", |chk| stream_determinism(chk, c, mk, &t));
    step(&mut chk, "bit prefixes", |chk| stream_prefixes(chk, c, &t));
    step(&mut chk, "chunked keystream", |chk| stream_chunks(chk, c, &t));
    step(&mut chk, "apply_bits", |chk| stream_apply_bits(chk, c, &t));
    step(&mut chk, "long message", |chk| stream_long(chk, c, &t));
    step(&mut chk, "key and IV sizes", |chk| stream_sizes(chk, c, &t));
    chk
}

/// Determinism across re-init on the same instance and on a fresh instance; a different IV
/// changes the keystream (catches IVs being ignored).
fn stream_determinism(
    chk: &mut Check,
    c: &mut dyn StreamCipher,
    mk: fn() -> Box<dyn StreamCipher + Send>,
    t: &StreamCase,
) -> Result<(), CipherError> {
    let mut again = vec![0u8; t.long.len()];
    c.init(&t.key, &t.iv)?;
    c.keystream(&mut again)?;
    chk.expect("re-init gives the same keystream", again == t.long);
    let mut fresh = mk();
    let mut f = vec![0u8; t.long.len()];
    fresh.init(&t.key, &t.iv)?;
    fresh.keystream(&mut f)?;
    chk.expect("fresh instance gives the same keystream", f == t.long);
    if let Some((first, rest)) = t.iv.split_first() {
        let iv2: Vec<u8> = std::iter::once(first ^ 1).chain(rest.iter().copied()).collect();
        c.init(&t.key, &iv2)?;
        c.keystream(&mut f)?;
        chk.expect("IV changes the keystream", f != t.long);
    }
    Ok(())
}

/// Prefix property: keystream_bits(n) is the first n bits, tail bits zero.
fn stream_prefixes(chk: &mut Check, c: &mut dyn StreamCipher, t: &StreamCase) -> Result<(), CipherError> {
    let order = t.info.bit_order;
    for n in [1usize, 7, 8, 9, 13, 64, 100, 255] {
        let mut out = vec![0xAAu8; bits::bytes_for(n)];
        c.init(&t.key, &t.iv)?;
        if let Err(e) = c.keystream_bits(&mut out, n) {
            chk.fail(format!("keystream_bits({n}): {e}"));
            continue;
        }
        let ok = (0..n).all(|i| bit(&out, i, order) == bit(&t.long, i, order))
            && out.last().is_none_or(|l| l & !bits::tail_mask(n, order) == 0);
        chk.expect(format!("keystream_bits({n}) is the {n}-bit prefix with zero tail"), ok);
    }
    Ok(())
}

/// Continuation: chunks concatenate to the long stream.
fn stream_chunks(chk: &mut Check, c: &mut dyn StreamCipher, t: &StreamCase) -> Result<(), CipherError> {
    let order = t.info.bit_order;
    // Both chunk lists add up to fewer bits than the 640 of the reference.
    let chunks: &[usize] = if t.info.bit_granular { &[1, 3, 8, 13, 64, 5, 200] } else { &[8, 24, 64, 8, 200] };
    c.init(&t.key, &t.iv)?;
    let mut pos = 0usize;
    let mut ok = true;
    for &n in chunks {
        let mut out = vec![0u8; bits::bytes_for(n)];
        c.keystream_bits(&mut out, n)?;
        ok &= (0..n).all(|i| bit(&out, i, order) == bit(&t.long, pos + i, order));
        pos += n;
    }
    chk.expect(format!("chunked keystream {chunks:?} continues the stream"), ok);
    Ok(())
}

/// apply_bits XORs exactly n bits and leaves the rest of the last byte alone; applying twice
/// restores the plaintext (decrypt = encrypt).
fn stream_apply_bits(chk: &mut Check, c: &mut dyn StreamCipher, t: &StreamCase) -> Result<(), CipherError> {
    let order = t.info.bit_order;
    let n = if t.info.bit_granular { 21 } else { 24 };
    let mut data = vec![0x5Au8; 4];
    c.init(&t.key, &t.iv)?;
    c.apply_bits(&mut data, n)?;
    let ok = (0..32).all(|i| {
        let orig = bit(&[0x5A; 4], i, order);
        let want = if i < n { orig ^ bit(&t.long, i, order) } else { orig };
        bit(&data, i, order) == want
    });
    chk.expect(format!("apply_bits({n}) XORs exactly {n} bits"), ok);
    c.init(&t.key, &t.iv)?;
    c.apply_bits(&mut data, n)?;
    chk.expect("apply twice restores the plaintext", data == vec![0x5Au8; 4]);
    Ok(())
}

/// Long messages: one 64 KiB + 5-byte call (the bulk paths: SIMD blocks, whole words)
/// equals the same stream requested in odd chunks after a 1-bit (bit-granular) or
/// 1-byte start, which keeps it off those paths, and equals `apply` on zeros. Short
/// vectors cannot reach bugs that only show after many blocks.
fn stream_long(chk: &mut Check, c: &mut dyn StreamCipher, t: &StreamCase) -> Result<(), CipherError> {
    let order = t.info.bit_order;
    let len = 65536 + 5;
    let mut bulk = vec![0u8; len];
    c.init(&t.key, &t.iv)?;
    c.keystream(&mut bulk)?;
    let (first, step) = if t.info.bit_granular { (1usize, 8191usize) } else { (8, 8 * 1021) };
    let mut pieces = vec![0u8; len];
    c.init(&t.key, &t.iv)?;
    let mut pos = 0usize; // bits
    let mut n = first;
    let mut ok = true;
    while pos < len * 8 {
        let take = n.min(len * 8 - pos);
        let mut out = vec![0u8; bits::bytes_for(take)];
        c.keystream_bits(&mut out, take)?;
        for i in 0..take {
            let b = bit(&out, i, order);
            ok &= b == bit(&bulk, pos + i, order);
            set_bit(&mut pieces, pos + i, order, b);
        }
        pos += take;
        n = step;
    }
    chk.expect(
        format!("{len}-byte keystream in one call = the same in chunks of {step} bits after a {first}-bit start"),
        ok,
    );
    let mut zeros = vec![0u8; len];
    c.init(&t.key, &t.iv)?;
    c.apply(&mut zeros)?;
    chk.expect(format!("apply on {len} zero bytes = keystream"), zeros == bulk && pieces == bulk);
    Ok(())
}

/// Errors: a key or IV length outside what the implementation accepts (crate::sizes), an
/// undersized buffer; every listed size is accepted and the keystream depends on the length
/// (catches a key or IV silently truncated to the nominal size).
fn stream_sizes(chk: &mut Check, c: &mut dyn StreamCipher, t: &StreamCase) -> Result<(), CipherError> {
    let (info, key, iv) = (&t.info, &t.key, &t.iv);
    let sizes = crate::sizes::supported(info);
    let bad_key = [info.key_bytes().saturating_sub(1), info.key_bytes() + 1]
        .into_iter()
        .find(|&n| !sizes.key_bits.iter().any(|&b| usize::from(b) == n * 8))
        .unwrap_or(0);
    chk.expect(
        format!("{bad_key}-byte key is rejected with KeyLength"),
        matches!(c.init(&vec![0u8; bad_key], iv), Err(CipherError::KeyLength { .. })),
    );
    let long_iv = vec![0u8; usize::from(*sizes.iv_bits.last().unwrap_or(&info.iv_bits)) / 8 + 1];
    chk.expect(
        "long IV is rejected with IvLength or IvTooLong",
        matches!(c.init(key, &long_iv), Err(CipherError::IvLength { .. } | CipherError::IvTooLong { .. })),
    );
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut ok = true;
    for &kb in &sizes.key_bits {
        for &ib in &sizes.iv_bits {
            let mut ks = vec![0u8; 16];
            let r = c
                .init(&pattern(usize::from(kb) / 8, 1), &pattern(usize::from(ib) / 8, 101))
                .and_then(|_| c.keystream(&mut ks));
            ok &= r.is_ok() && !seen.contains(&ks);
            seen.push(ks);
        }
    }
    chk.expect(
        format!(
            "every listed size gives its own keystream (key {} bits, IV {} bits)",
            crate::sizes::describe(&sizes.key_bits),
            crate::sizes::describe(&sizes.iv_bits)
        ),
        ok,
    );
    c.init(key, iv)?;
    let mut tiny = [0u8; 1];
    chk.expect(
        "undersized buffer is rejected",
        matches!(c.keystream_bits(&mut tiny, 9), Err(CipherError::BufferTooSmall { .. })),
    );
    Ok(())
}

/// Check the AEAD contract: round trip, and rejection of a modified tag, ciphertext or AD
/// with the buffer wiped.
pub fn check_aead(mk: fn() -> Box<dyn Aead + Send>) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(format!("{}/{}", info.name, info.implementation), "conformance: AEAD contract");
    if info.key_bytes() == 0 || info.tag_bytes() == 0 {
        chk.fail(format!("bad metadata: key_bits {}, tag_bits {}", info.key_bits, info.tag_bits));
        return chk;
    }
    let (key, nonce) = (pattern(info.key_bytes(), 3), pattern(info.iv_bytes(), 77));
    if let Err(e) = c.set_key(&key) {
        chk.fail(format!("set_key: {e}"));
        return chk;
    }
    for len in [0usize, 1, 15, 16, 17, 64, 100] {
        step(&mut chk, &format!("round trip of {len} bytes"), |chk| aead_message(chk, c.as_mut(), &nonce, len));
    }
    chk.expect("short key rejected", matches!(c.set_key(&key[1..]), Err(CipherError::KeyLength { .. })));
    step(&mut chk, "set_key after a refused key", |_| c.set_key(&key));
    let mut tag = vec![0u8; info.tag_bytes()];
    // One byte short, or one byte where the cipher takes no nonce.
    let wrong_nonce = if nonce.is_empty() { vec![0u8] } else { nonce[1..].to_vec() };
    chk.expect(
        "wrong nonce length rejected",
        matches!(c.encrypt(&wrong_nonce, &[], &mut [], &mut tag), Err(CipherError::IvLength { .. })),
    );
    chk
}

/// Round trip of one `len`-byte message, and refusal (buffer wiped) of a flipped tag bit,
/// a flipped ciphertext bit and extended AD.
fn aead_message(chk: &mut Check, c: &mut dyn Aead, nonce: &[u8], len: usize) -> Result<(), CipherError> {
    let pt = pattern(len, 9);
    let ad = pattern(len % 7, 200);
    let mut buf = pt.clone();
    let mut tag = vec![0u8; c.info().tag_bytes()];
    c.encrypt(nonce, &ad, &mut buf, &mut tag)?;
    let ct = buf.clone();
    let ok = c.decrypt(nonce, &ad, &mut buf, &tag).is_ok() && buf == pt;
    chk.expect(format!("round trip of {len} bytes"), ok);
    let mut bad = tag.clone();
    if let Some(b) = bad.first_mut() {
        *b ^= 1;
    }
    let mut b = ct.clone();
    let r = c.decrypt(nonce, &ad, &mut b, &bad);
    chk.expect(
        format!("flipped tag bit rejected and buffer wiped ({len} bytes)"),
        r == Err(CipherError::AuthenticationFailed) && b.iter().all(|&x| x == 0),
    );
    if let Some(last) = ct.len().checked_sub(1) {
        let mut b = ct.clone();
        b[last] ^= 0x80;
        chk.expect(
            format!("flipped ciphertext bit rejected ({len} bytes)"),
            c.decrypt(nonce, &ad, &mut b, &tag).is_err(),
        );
    }
    let mut ad2 = ad.clone();
    ad2.push(0);
    let mut b = ct.clone();
    chk.expect(format!("extended AD rejected ({len} bytes)"), c.decrypt(nonce, &ad2, &mut b, &tag).is_err());
    Ok(())
}

/// SplitMix64, a deterministic source of test blocks (not for keys of real use).
struct Mix(u64);
impl Mix {
    fn fill(&mut self, b: &mut [u8]) {
        for c in b.chunks_mut(8) {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            c.copy_from_slice(&z.to_le_bytes()[..c.len()]);
        }
    }
}

/// The [`BlockCipher`] contract: decrypt ∘ encrypt = identity on random blocks, encryption
/// is deterministic and not the identity, the key matters, wrong key lengths are refused.
pub fn check_block(mk: fn() -> Box<dyn BlockCipher + Send>) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(format!("{}/{}", info.name, info.implementation), "conformance: block-cipher contract");
    let (kb, bb) = (info.key_bytes(), info.block_bytes());
    if info.family != Family::Block || kb == 0 || bb == 0 || bb * 8 != usize::from(info.block_bits) {
        chk.fail(format!(
            "bad metadata: family {:?}, key_bits {}, block_bits {}",
            info.family, info.key_bits, info.block_bits
        ));
        return chk;
    }
    let mut rng = Mix(u64::from(info.block_bits) << 16 | u64::from(info.key_bits));
    let mut fresh = mk();
    let (mut rt_ok, mut moved, mut same) = (true, 0usize, true);
    const N: usize = 64;
    for _ in 0..N {
        let mut key = vec![0u8; kb];
        rng.fill(&mut key);
        if let Err(e) = c.set_key(&key).and_then(|_| fresh.set_key(&key)) {
            chk.fail(format!("set_key: {e}"));
            return chk;
        }
        let mut p = vec![0u8; bb];
        rng.fill(&mut p);
        let mut b = p.clone();
        c.encrypt_block(&mut b);
        moved += usize::from(b != p);
        let mut b2 = p.clone();
        fresh.encrypt_block(&mut b2);
        same &= b2 == b;
        c.decrypt_block(&mut b);
        rt_ok &= b == p;
    }
    chk.expect(format!("decrypt(encrypt(p)) = p for {N} random keys/blocks"), rt_ok);
    chk.expect("encryption is not the identity", moved >= N - 1);
    chk.expect("two instances with the same key agree", same);
    step(&mut chk, "key bit flip", |chk| block_key_bit(chk, c.as_mut(), &mut rng));
    let mut key = vec![0u8; kb];
    rng.fill(&mut key);
    chk.expect("short key rejected", matches!(c.set_key(&key[1..]), Err(CipherError::KeyLength { .. })));
    key.push(0);
    chk.expect("long key rejected", matches!(c.set_key(&key), Err(CipherError::KeyLength { .. })));
    chk
}

/// One key bit changes the ciphertext.
fn block_key_bit(chk: &mut Check, c: &mut dyn BlockCipher, rng: &mut Mix) -> Result<(), CipherError> {
    let info = c.info();
    let mut key = vec![0u8; info.key_bytes()];
    rng.fill(&mut key);
    let p = vec![0u8; info.block_bytes()];
    let (mut a, mut b) = (p.clone(), p.clone());
    c.set_key(&key)?;
    c.encrypt_block(&mut a);
    if let Some(k) = key.last_mut() {
        *k ^= 1;
    }
    c.set_key(&key)?;
    c.encrypt_block(&mut b);
    chk.expect("last key bit changes the ciphertext", a != b);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lwcbench_core::{Language, Origin};

    const INFO: CipherInfo = CipherInfo {
        name: "BROKEN",
        implementation: "test",
        family: Family::Stream,
        key_bits: 128,
        iv_bits: 64,
        block_bits: 0,
        tag_bits: 0,
        state_bytes: 0,
        origin: Origin::Own,
        language: Language::Rust,
        bit_order: BitOrder::MsbFirst,
        bit_granular: false,
        note: "",
    };

    /// A byte-counter "stream cipher" that accepts its first `init` and refuses every later
    /// one, as an implementation with a one-shot state would.
    #[derive(Default)]
    struct InitOnce {
        inits: u32,
        ctr: u8,
    }
    impl StreamCipher for InitOnce {
        fn info(&self) -> CipherInfo {
            INFO
        }
        fn init(&mut self, _key: &[u8], _iv: &[u8]) -> Result<(), CipherError> {
            self.inits += 1;
            self.ctr = 0;
            if self.inits > 1 {
                return Err(CipherError::NotInitialized);
            }
            Ok(())
        }
        fn keystream_bits(&mut self, out: &mut [u8], nbits: usize) -> Result<(), CipherError> {
            bits::check_room(out, nbits)?;
            for b in &mut out[..bits::bytes_for(nbits)] {
                self.ctr = self.ctr.wrapping_add(1);
                *b = self.ctr;
            }
            Ok(())
        }
        fn apply_bits(&mut self, data: &mut [u8], nbits: usize) -> Result<(), CipherError> {
            bits::xor_with_keystream(data, nbits, BitOrder::MsbFirst, |o, n| self.keystream_bits(o, n))
        }
    }

    #[test]
    fn a_stream_cipher_failing_on_reinit_is_a_failure_not_a_panic() {
        let c = check_stream(|| Box::new(InitOnce::default()));
        assert!(!c.ok(), "{c:?}");
        assert!(
            c.failures.iter().any(|f| f.contains("re-init") && f.contains("cipher used before init")),
            "{:?}",
            c.failures
        );
    }

    /// An AEAD whose encryption always fails, with the metadata it is given.
    struct NeverEncrypts(CipherInfo);
    impl Aead for NeverEncrypts {
        fn info(&self) -> CipherInfo {
            self.0
        }
        fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
            lwcbench_core::check_len(key.len(), 16, lwcbench_core::key_err)
        }
        fn encrypt(&mut self, _n: &[u8], _ad: &[u8], _buf: &mut [u8], _tag: &mut [u8]) -> Result<(), CipherError> {
            Err(CipherError::DataLength { got: 0 })
        }
        fn decrypt(&mut self, _n: &[u8], _ad: &[u8], buf: &mut [u8], _tag: &[u8]) -> Result<(), CipherError> {
            buf.fill(0);
            Err(CipherError::AuthenticationFailed)
        }
    }

    #[test]
    fn an_aead_failing_to_encrypt_is_a_failure_not_a_panic() {
        let c = check_aead(|| {
            Box::new(NeverEncrypts(CipherInfo { family: Family::Aead, iv_bits: 96, tag_bits: 128, ..INFO }))
        });
        assert!(!c.ok(), "{c:?}");
        assert!(c.failures.iter().any(|f| f.contains("data length 0")), "{:?}", c.failures);
    }

    #[test]
    fn an_aead_without_a_tag_or_nonce_is_a_failure_not_a_panic() {
        let c = check_aead(|| Box::new(NeverEncrypts(CipherInfo { family: Family::Aead, iv_bits: 0, ..INFO })));
        assert!(!c.ok(), "{c:?}");
        assert!(c.failures.iter().any(|f| f.contains("tag_bits 0")), "{:?}", c.failures);
    }

    /// A block cipher that accepts the key length it announces only once.
    #[derive(Default)]
    struct KeyOnce(u32);
    impl BlockCipher for KeyOnce {
        fn info(&self) -> CipherInfo {
            CipherInfo { family: Family::Block, iv_bits: 0, block_bits: 64, ..INFO }
        }
        fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
            self.0 += 1;
            if self.0 > 64 {
                return Err(CipherError::KeyLength { expected: 16, got: key.len() });
            }
            Ok(())
        }
        fn encrypt_block(&self, block: &mut [u8]) {
            block.iter_mut().for_each(|b| *b = !*b);
        }
        fn decrypt_block(&self, block: &mut [u8]) {
            block.iter_mut().for_each(|b| *b = !*b);
        }
    }

    #[test]
    fn a_block_cipher_refusing_a_later_key_is_a_failure_not_a_panic() {
        let c = check_block(|| Box::new(KeyOnce::default()));
        assert!(!c.ok(), "{c:?}");
        assert!(c.failures.iter().any(|f| f.contains("key must be 16 bytes")), "{:?}", c.failures);
    }

    #[test]
    fn a_block_cipher_without_a_key_is_a_failure_not_a_panic() {
        fn keyless() -> Box<dyn BlockCipher + Send> {
            struct NoKey;
            impl BlockCipher for NoKey {
                fn info(&self) -> CipherInfo {
                    CipherInfo { family: Family::Block, key_bits: 0, iv_bits: 0, block_bits: 64, ..INFO }
                }
                fn set_key(&mut self, _key: &[u8]) -> Result<(), CipherError> {
                    Ok(())
                }
                fn encrypt_block(&self, block: &mut [u8]) {
                    block.reverse();
                }
                fn decrypt_block(&self, block: &mut [u8]) {
                    block.reverse();
                }
            }
            Box::new(NoKey)
        }
        let c = check_block(keyless);
        assert!(!c.ok(), "{c:?}");
    }
}
