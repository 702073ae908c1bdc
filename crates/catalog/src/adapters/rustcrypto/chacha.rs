//! ChaCha20 (RustCrypto `chacha20`) and ChaCha20-Poly1305 (RustCrypto `chacha20poly1305`),
//! with the Wycheproof runner for the AEAD.
use chacha20::cipher::{KeyIvInit, StreamCipher as _};
use chacha20poly1305::aead::{AeadInOut, KeyInit};
use lwcbench_core::{
    bits, check_len, iv_err, key_err, Aead, BitOrder, CipherError, CipherInfo, Family, Language, Origin, StreamCipher,
};

use crate::conformance;
use crate::entry::Entry;
use crate::kat::{self, shared, wycheproof};
use crate::verify::{Check, VerifyCtx};

/// Add this module's entries to the registry.
pub fn register(r: &mut Vec<Entry>) {
    // Markers built from module_path!(): they follow this file if it moves.
    r.push(
        Entry::stream(|| Box::new(ChaCha20::default()), verify_chacha20)
            .code(&[concat!(module_path!(), "::ChaCha20")])
            .mcu("rc_chacha20", "lwc_mcu_images::rc::RcStream<chacha20::ChaCha20>"),
    );
    r.push(
        Entry::aead(|| Box::new(ChaCha20Poly1305::default()), verify_chacha20poly1305)
            .mcu("rc_chacha20poly1305", "lwc_mcu_images::rc::RcAead6<chacha20poly1305::ChaCha20Poly1305>"),
    );
}

/// ChaCha20 as in RFC 8439 (96-bit nonce, 32-bit block counter starting at 0).
#[derive(Default)]
pub struct ChaCha20 {
    inner: Option<chacha20::ChaCha20>, // the crate zeroizes its state on drop
}

const CHACHA20_INFO: CipherInfo = CipherInfo {
    name: "ChaCha20",
    implementation: "rustcrypto",
    family: Family::Stream,
    key_bits: 256,
    iv_bits: 96,
    block_bits: 0,
    tag_bits: 0,
    state_bytes: 64,
    origin: Origin::Crate { name: "chacha20", version: "0.10" },
    language: Language::Rust,
    bit_order: BitOrder::LsbFirst,
    bit_granular: false,
    note: "",
};

impl StreamCipher for ChaCha20 {
    fn info(&self) -> CipherInfo {
        CHACHA20_INFO
    }
    fn init(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 32, key_err)?;
        check_len(iv.len(), 12, iv_err)?;
        self.inner = Some(chacha20::ChaCha20::new_from_slices(key, iv).expect("lengths checked"));
        Ok(())
    }
    fn keystream_bits(&mut self, out: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        bits::check_room(out, nbits)?;
        let c = self.inner.as_mut().ok_or(CipherError::NotInitialized)?;
        let n = bits::bytes_for(nbits);
        c.write_keystream(&mut out[..n]);
        if n > 0 {
            out[n - 1] &= bits::tail_mask(nbits, BitOrder::LsbFirst);
        }
        Ok(())
    }
    fn apply_bits(&mut self, data: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        bits::check_room(data, nbits)?;
        let c = self.inner.as_mut().ok_or(CipherError::NotInitialized)?;
        let whole = nbits / 8;
        c.apply_keystream(&mut data[..whole]);
        if !nbits.is_multiple_of(8) {
            let mut ks = [0u8; 1];
            c.write_keystream(&mut ks);
            data[whole] ^= ks[0] & bits::tail_mask(nbits, BitOrder::LsbFirst);
        }
        Ok(())
    }
}

fn verify_chacha20(e: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = match e.stream_make() {
        Ok(mk) => mk,
        Err(c) => return vec![c],
    };
    vec![
        conformance::check_stream(mk),
        kat::stream_cryptopp(mk, &kat::repo_file("rfc8439.txt"), &["ChaCha20"], 64),
        shared(ctx, &e.id(), "cryptopp-testvectors/chacha_tls.txt", |p| {
            kat::stream_cryptopp(mk, p, &["ChaChaTLS"], 64)
        }),
    ]
}

/// ChaCha20-Poly1305 AEAD (RFC 8439).
#[derive(Default)]
pub struct ChaCha20Poly1305 {
    inner: Option<chacha20poly1305::ChaCha20Poly1305>,
}

impl Aead for ChaCha20Poly1305 {
    fn info(&self) -> CipherInfo {
        CipherInfo {
            name: "ChaCha20-Poly1305",
            family: Family::Aead,
            tag_bits: 128,
            origin: Origin::Crate { name: "chacha20poly1305", version: "0.11" },
            bit_order: BitOrder::MsbFirst,
            ..CHACHA20_INFO
        }
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 32, key_err)?;
        self.inner = Some(chacha20poly1305::ChaCha20Poly1305::new_from_slice(key).expect("length checked"));
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 12, iv_err)?;
        check_len(tag.len(), 16, |e, g| CipherError::TagLength { expected: e, got: g })?;
        let n = chacha20poly1305::Nonce::try_from(nonce).expect("length checked");
        let t = c.encrypt_inout_detached(&n, ad, buf.into()).map_err(|_| CipherError::DataLength { got: buf.len() })?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 12, iv_err)?;
        check_len(tag.len(), 16, |e, g| CipherError::TagLength { expected: e, got: g })?;
        let n = chacha20poly1305::Nonce::try_from(nonce).expect("length checked");
        let t = chacha20poly1305::Tag::try_from(tag).expect("length checked");
        c.decrypt_inout_detached(&n, ad, (&mut *buf).into(), &t).map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}

fn verify_chacha20poly1305(e: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = match e.aead_make() {
        Ok(mk) => mk,
        Err(c) => return vec![c],
    };
    let id = &e.id();
    vec![
        conformance::check_aead(mk),
        kat::aead_cryptopp(mk, &kat::repo_file("rfc8439.txt"), &["ChaCha20/Poly1305"]),
        shared(ctx, id, "cryptopp-testvectors/chacha20poly1305.txt", |p| {
            kat::aead_cryptopp(mk, p, &["ChaCha20/Poly1305"])
        }),
        // every case of Wycheproof `chacha20_poly1305_test.json`
        shared(ctx, id, "wycheproof/chacha20_poly1305_test.json", |p| wycheproof::aead_wycheproof(mk, p)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Wycheproof file is checked when the shared folder is present and skipped when not
    /// (the registry-wide test checks that every check passes).
    #[test]
    fn wycheproof_runs_with_the_shared_vectors_only() {
        for ctx in [VerifyCtx::discover(), VerifyCtx::default()] {
            let checks = crate::find("ChaCha20-Poly1305/rustcrypto").expect("registered").checks(&ctx);
            let wp = checks.iter().find(|c| c.what.contains("chacha20_poly1305_test.json")).expect("wycheproof check");
            assert_eq!(wp.skipped, ctx.vectors.is_none());
        }
    }
}
