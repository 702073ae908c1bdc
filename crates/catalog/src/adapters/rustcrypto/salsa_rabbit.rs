//! Salsa20 (256- and 128-bit keys) and Rabbit over the RustCrypto `salsa20` and `rabbit`
//! crates, verified like the own eSTREAM ciphers ([`kat::estream::standard`]).
use lwcbench_core::{
    bits, check_len, iv_err, key_err, BitOrder, CipherError, CipherInfo, Family, Language, Origin, StreamCipher,
};
use salsa20::cipher::KeyIvInit;

use crate::entry::Entry;
use crate::kat::{self, estream::standard, shared};
use crate::verify::{Check, VerifyCtx};

/// Add this module's entries to the registry.
pub fn register(r: &mut Vec<Entry>) {
    // Markers built from module_path!(): they follow this file if it moves.
    r.push(
        Entry::stream(|| Box::new(Salsa20::default()), verify_salsa20)
            .code(&[concat!(module_path!(), "::Salsa20")])
            .mcu("rc_salsa20", "lwc_mcu_images::rc::RcStream<salsa20::Salsa20>"),
    );
    r.push(
        Entry::stream(|| Box::new(Salsa20_128::default()), verify_salsa20_128)
            .code(&[concat!(module_path!(), "::Salsa20_128")]),
    );
    r.push(
        Entry::stream(|| Box::new(Rabbit::default()), verify_rabbit)
            .code(&[concat!(module_path!(), "::Rabbit")])
            .mcu("rc_rabbit", "lwc_mcu_images::rc::RcStream<rabbit::Rabbit>"),
    );
}

// ---------------------------------------------------------------------------------------
// RustCrypto adapters

/// Keystream / XOR through a RustCrypto stream cipher; whole bytes only (the stream
/// advances to the next byte boundary), LSB-first tail mask as for ChaCha20.
fn rc_bits<C: salsa20::cipher::StreamCipher>(
    c: &mut C,
    out: &mut [u8],
    nbits: usize,
    xor: bool,
) -> Result<(), CipherError> {
    bits::check_room(out, nbits)?;
    let whole = nbits / 8;
    if xor {
        c.apply_keystream(&mut out[..whole]);
    } else {
        c.write_keystream(&mut out[..whole]);
    }
    if !nbits.is_multiple_of(8) {
        let mut ks = [0u8; 1];
        c.write_keystream(&mut ks);
        let k = ks[0] & bits::tail_mask(nbits, BitOrder::LsbFirst);
        if xor {
            out[whole] ^= k
        } else {
            out[whole] = k
        }
    }
    Ok(())
}

const SALSA20_INFO: CipherInfo = CipherInfo {
    name: "Salsa20",
    implementation: "rustcrypto",
    family: Family::Stream,
    key_bits: 256,
    iv_bits: 64,
    block_bits: 0,
    tag_bits: 0,
    state_bytes: 64,
    origin: Origin::Crate { name: "salsa20", version: "0.11" },
    language: Language::Rust,
    bit_order: BitOrder::LsbFirst,
    bit_granular: false,
    note: "Salsa20/20, 64-bit nonce, 64-bit block counter from 0",
};

/// Salsa20/20 with a 256-bit key (eSTREAM profile 1).
#[derive(Default)]
pub struct Salsa20 {
    inner: Option<salsa20::Salsa20>, // zeroized on drop by the crate ("zeroize" feature)
}

impl StreamCipher for Salsa20 {
    fn info(&self) -> CipherInfo {
        SALSA20_INFO
    }
    fn init(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 32, key_err)?;
        check_len(iv.len(), 8, iv_err)?;
        self.inner = Some(salsa20::Salsa20::new_from_slices(key, iv).expect("lengths checked"));
        Ok(())
    }
    fn keystream_bits(&mut self, out: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        rc_bits(self.inner.as_mut().ok_or(CipherError::NotInitialized)?, out, nbits, false)
    }
    fn apply_bits(&mut self, data: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        rc_bits(self.inner.as_mut().ok_or(CipherError::NotInitialized)?, data, nbits, true)
    }
}

/// Salsa20/20 with a 128-bit key. The crate only keys 256-bit keys, so the 16-byte-key
/// state ("expand 16-byte k" constants, key words repeated; Bernstein, "Salsa20
/// specification" §10) is built here and handed to the crate's core.
#[derive(Default)]
pub struct Salsa20_128 {
    inner: Option<salsa20::Salsa20>,
}

impl StreamCipher for Salsa20_128 {
    fn info(&self) -> CipherInfo {
        CipherInfo {
            name: "Salsa20-128",
            key_bits: 128,
            note: "Salsa20/20, 128-bit key (tau constants), key expansion own code, core from the crate",
            ..SALSA20_INFO
        }
    }
    fn init(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 16, key_err)?;
        check_len(iv.len(), 8, iv_err)?;
        const TAU: [u32; 4] = [0x6170_7865, 0x3120_646e, 0x7962_2d36, 0x6b20_6574]; // "expand 16-byte k"
        let w = |b: &[u8], i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        let mut st = [0u32; 16];
        st[0] = TAU[0];
        st[5] = TAU[1];
        st[10] = TAU[2];
        st[15] = TAU[3];
        for i in 0..4 {
            st[1 + i] = w(key, i);
            st[11 + i] = w(key, i);
        }
        st[6] = w(iv, 0);
        st[7] = w(iv, 1);
        // st[8], st[9]: block counter 0
        let core = salsa20::SalsaCore::<salsa20::cipher::consts::U10>::from_raw_state(st);
        self.inner = Some(salsa20::Salsa20::from_core(core));
        salsa20::cipher::zeroize::Zeroize::zeroize(&mut st);
        Ok(())
    }
    fn keystream_bits(&mut self, out: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        rc_bits(self.inner.as_mut().ok_or(CipherError::NotInitialized)?, out, nbits, false)
    }
    fn apply_bits(&mut self, data: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        rc_bits(self.inner.as_mut().ok_or(CipherError::NotInitialized)?, data, nbits, true)
    }
}

fn verify_salsa20(e: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    standard(e, ctx, "estream-salsa20-256.txt", &["estream-via-avr-crypto-lib/salsa20-full-256-verified.test-vectors"])
}

fn verify_salsa20_128(e: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    standard(e, ctx, "estream-salsa20-128.txt", &["estream-via-avr-crypto-lib/salsa20-full-128-verified.test-vectors"])
}

/// Rabbit (RFC 4503 / eSTREAM), 128-bit key, 64-bit IV.
#[derive(Default)]
pub struct Rabbit {
    inner: Option<rabbit::Rabbit>,
}

impl StreamCipher for Rabbit {
    fn info(&self) -> CipherInfo {
        CipherInfo {
            name: "Rabbit",
            key_bits: 128,
            state_bytes: 65, // 8 state + 8 counter words + carry bit = 513 bits
            origin: Origin::Crate { name: "rabbit", version: "0.5" },
            note: "",
            ..SALSA20_INFO
        }
    }
    fn init(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 16, key_err)?;
        check_len(iv.len(), 8, iv_err)?;
        self.inner = Some(rabbit::Rabbit::new_from_slices(key, iv).expect("lengths checked"));
        Ok(())
    }
    fn keystream_bits(&mut self, out: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        rc_bits(self.inner.as_mut().ok_or(CipherError::NotInitialized)?, out, nbits, false)
    }
    fn apply_bits(&mut self, data: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        rc_bits(self.inner.as_mut().ok_or(CipherError::NotInitialized)?, data, nbits, true)
    }
}

fn verify_rabbit(e: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mut v = standard(e, ctx, "estream-rabbit.txt", &["estream-via-avr-crypto-lib/rabbit-verified.test-vectors"]);
    if let Ok(mk) = e.stream_make() {
        v.push(shared(ctx, &e.id(), "cryptopp-testvectors/rabbit.txt", |p| {
            kat::stream_cryptopp(mk, p, &["RabbitWithIV"], 16)
        }));
    }
    v
}
