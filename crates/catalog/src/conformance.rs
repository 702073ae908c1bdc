//! Contract checks every implementation must pass, independent of its known answers:
//! determinism, bit-granular keystream consistency, in-place XOR semantics, length errors,
//! and AEAD rejection. Run by `lwcbench verify` for every registered entry.
use lwcbench_core::{bits, Aead, BitOrder, BlockCipher, CipherError, CipherInfo, Family, StreamCipher};

use crate::verify::Check;

/// Bit `i` of a packed keystream in the given order.
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

/// Check the stream-cipher contract of `lwcbench_core::StreamCipher`.
pub fn check_stream(mk: fn() -> Box<dyn StreamCipher + Send>) -> Check {
    let mut c = mk();
    let info: CipherInfo = c.info();
    let mut chk = Check::new(format!("{}/{}", info.name, info.implementation), "conformance: stream contract");
    let (key, iv) = (pattern(info.key_bytes(), 1), pattern(info.iv_bytes(), 101));
    let order = info.bit_order;

    // Reference: 80 bytes from one call.
    let mut long = vec![0u8; 80];
    if let Err(e) = c.init(&key, &iv).and_then(|_| c.keystream(&mut long)) {
        chk.fail(format!("init/keystream failed: {e}"));
        return chk;
    }
    // Determinism across re-init on the same instance and on a fresh instance.
    let mut again = vec![0u8; 80];
    c.init(&key, &iv).and_then(|_| c.keystream(&mut again)).unwrap();
    chk.expect("re-init gives the same keystream", again == long);
    let mut fresh = mk();
    let mut f = vec![0u8; 80];
    fresh.init(&key, &iv).and_then(|_| fresh.keystream(&mut f)).unwrap();
    chk.expect("fresh instance gives the same keystream", f == long);
    // A different IV must change the keystream (catches IVs being ignored).
    if info.iv_bytes() > 0 {
        let mut iv2 = iv.clone();
        iv2[0] ^= 1;
        c.init(&key, &iv2).and_then(|_| c.keystream(&mut f)).unwrap();
        chk.expect("IV changes the keystream", f != long);
    }

    // Prefix property: keystream_bits(n) is the first n bits, tail bits zero.
    for n in [1usize, 7, 8, 9, 13, 64, 100, 255] {
        let mut out = vec![0xAAu8; bits::bytes_for(n)];
        c.init(&key, &iv).unwrap();
        if let Err(e) = c.keystream_bits(&mut out, n) {
            chk.fail(format!("keystream_bits({n}): {e}"));
            continue;
        }
        let ok = (0..n).all(|i| bit(&out, i, order) == bit(&long, i, order))
            && out.last().is_none_or(|l| l & !bits::tail_mask(n, order) == 0);
        chk.expect(format!("keystream_bits({n}) is the {n}-bit prefix with zero tail"), ok);
    }

    // Continuation: chunks concatenate to the long stream.
    let chunks: &[usize] = if info.bit_granular { &[1, 3, 8, 13, 64, 5, 200] } else { &[8, 24, 64, 8, 200] };
    c.init(&key, &iv).unwrap();
    let mut pos = 0usize;
    let mut ok = true;
    for &n in chunks {
        let mut out = vec![0u8; bits::bytes_for(n)];
        c.keystream_bits(&mut out, n).unwrap();
        ok &= (0..n).all(|i| bit(&out, i, order) == bit(&long, pos + i, order));
        pos += n;
    }
    chk.expect(format!("chunked keystream {chunks:?} continues the stream"), ok);

    // apply_bits XORs exactly n bits and leaves the rest of the last byte alone.
    let n = if info.bit_granular { 21 } else { 24 };
    let mut data = vec![0x5Au8; 4];
    c.init(&key, &iv).unwrap();
    c.apply_bits(&mut data, n).unwrap();
    let ok = (0..32).all(|i| {
        let orig = bit(&[0x5A; 4], i, order);
        let want = if i < n { orig ^ bit(&long, i, order) } else { orig };
        bit(&data, i, order) == want
    });
    chk.expect(format!("apply_bits({n}) XORs exactly {n} bits"), ok);
    // Decrypt = encrypt.
    c.init(&key, &iv).unwrap();
    c.apply_bits(&mut data, n).unwrap();
    chk.expect("apply twice restores the plaintext", data == vec![0x5Au8; 4]);

    // Long messages: one 64 KiB + 5-byte call (the bulk paths: SIMD blocks, whole words)
    // equals the same stream requested in odd chunks after a 1-bit (bit-granular) or
    // 1-byte start, which keeps it off those paths, and equals `apply` on zeros. Short
    // vectors cannot reach bugs that only show after many blocks.
    let len = 65536 + 5;
    let mut bulk = vec![0u8; len];
    c.init(&key, &iv).unwrap();
    c.keystream(&mut bulk).unwrap();
    let (first, step) = if info.bit_granular { (1usize, 8191usize) } else { (8, 8 * 1021) };
    let mut pieces = vec![0u8; len];
    c.init(&key, &iv).unwrap();
    let mut pos = 0usize; // bits
    let mut n = first;
    let mut ok = true;
    while pos < len * 8 {
        let take = n.min(len * 8 - pos);
        let mut out = vec![0u8; bits::bytes_for(take)];
        c.keystream_bits(&mut out, take).unwrap();
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
    c.init(&key, &iv).unwrap();
    c.apply(&mut zeros).unwrap();
    chk.expect(format!("apply on {len} zero bytes = keystream"), zeros == bulk && pieces == bulk);

    // Errors: a key or IV length outside what the implementation accepts (crate::sizes).
    let sizes = crate::sizes::supported(&info);
    let bad_key = [info.key_bytes().saturating_sub(1), info.key_bytes() + 1]
        .into_iter()
        .find(|&n| !sizes.key_bits.contains(&(n as u16 * 8)))
        .unwrap_or(0);
    chk.expect(
        format!("{bad_key}-byte key is rejected with KeyLength"),
        matches!(c.init(&vec![0u8; bad_key], &iv), Err(CipherError::KeyLength { .. })),
    );
    let long_iv = vec![0u8; *sizes.iv_bits.last().unwrap_or(&info.iv_bits) as usize / 8 + 1];
    chk.expect(
        "long IV is rejected with IvLength or IvTooLong",
        matches!(c.init(&key, &long_iv), Err(CipherError::IvLength { .. } | CipherError::IvTooLong { .. })),
    );
    // Every listed size is accepted and the keystream depends on the length (catches a key
    // or IV silently truncated to the nominal size).
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut ok = true;
    for &kb in &sizes.key_bits {
        for &ib in &sizes.iv_bits {
            let mut ks = vec![0u8; 16];
            let r =
                c.init(&pattern(kb as usize / 8, 1), &pattern(ib as usize / 8, 101)).and_then(|_| c.keystream(&mut ks));
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
    c.init(&key, &iv).unwrap();
    let mut tiny = [0u8; 1];
    chk.expect(
        "undersized buffer is rejected",
        matches!(c.keystream_bits(&mut tiny, 9), Err(CipherError::BufferTooSmall { .. })),
    );
    chk
}

/// Check the AEAD contract: round trip, and rejection of a modified tag, ciphertext or AD
/// with the buffer wiped.
pub fn check_aead(mk: fn() -> Box<dyn Aead + Send>) -> Check {
    let mut c = mk();
    let info = c.info();
    let mut chk = Check::new(format!("{}/{}", info.name, info.implementation), "conformance: AEAD contract");
    let (key, nonce) = (pattern(info.key_bytes(), 3), pattern(info.iv_bytes(), 77));
    if let Err(e) = c.set_key(&key) {
        chk.fail(format!("set_key: {e}"));
        return chk;
    }
    for len in [0usize, 1, 15, 16, 17, 64, 100] {
        let pt = pattern(len, 9);
        let ad = pattern(len % 7, 200);
        let mut buf = pt.clone();
        let mut tag = vec![0u8; info.tag_bytes()];
        c.encrypt(&nonce, &ad, &mut buf, &mut tag).unwrap();
        let ct = buf.clone();
        let ok = c.decrypt(&nonce, &ad, &mut buf, &tag).is_ok() && buf == pt;
        chk.expect(format!("round trip of {len} bytes"), ok);
        let mut bad = tag.clone();
        bad[0] ^= 1;
        let mut b = ct.clone();
        let r = c.decrypt(&nonce, &ad, &mut b, &bad);
        chk.expect(
            format!("flipped tag bit rejected and buffer wiped ({len} bytes)"),
            r == Err(CipherError::AuthenticationFailed) && b.iter().all(|&x| x == 0),
        );
        if len > 0 {
            let mut b = ct.clone();
            b[len - 1] ^= 0x80;
            chk.expect(
                format!("flipped ciphertext bit rejected ({len} bytes)"),
                c.decrypt(&nonce, &ad, &mut b, &tag).is_err(),
            );
        }
        let mut ad2 = ad.clone();
        ad2.push(0);
        let mut b = ct.clone();
        chk.expect(format!("extended AD rejected ({len} bytes)"), c.decrypt(&nonce, &ad2, &mut b, &tag).is_err());
    }
    chk.expect("short key rejected", matches!(c.set_key(&key[1..]), Err(CipherError::KeyLength { .. })));
    c.set_key(&key).unwrap();
    let mut tag = vec![0u8; info.tag_bytes()];
    chk.expect(
        "wrong nonce length rejected",
        matches!(c.encrypt(&nonce[1..], &[], &mut [], &mut tag), Err(CipherError::IvLength { .. })),
    );
    chk
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
    if info.family != Family::Block || bb == 0 || bb * 8 != usize::from(info.block_bits) {
        chk.fail(format!("bad metadata: family {:?}, block_bits {}", info.family, info.block_bits));
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
    // one key bit changes the ciphertext
    let mut key = vec![0u8; kb];
    rng.fill(&mut key);
    let p = vec![0u8; bb];
    let (mut a, mut b) = (p.clone(), p.clone());
    c.set_key(&key).unwrap();
    c.encrypt_block(&mut a);
    key[kb - 1] ^= 1;
    c.set_key(&key).unwrap();
    c.encrypt_block(&mut b);
    chk.expect("last key bit changes the ciphertext", a != b);
    chk.expect("short key rejected", matches!(c.set_key(&key[1..]), Err(CipherError::KeyLength { .. })));
    key.push(0);
    chk.expect("long key rejected", matches!(c.set_key(&key), Err(CipherError::KeyLength { .. })));
    chk
}
