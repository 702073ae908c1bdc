//! Ascon from RustCrypto crates: **Ascon-AEAD128** (NIST SP 800-232) — `ascon-aead128` 0.1;
//! **Ascon-128 v1.2** (CAESAR / NIST-LWC final submission) — `ascon-aead` 0.4 (the last release
//! with the v1.2 variants; 0.5+ implement only SP 800-232). The permutation is a bitsliced
//! 5-bit S-box plus xor/rotate linear layer on 64-bit words, no tables: constant time; both
//! crates compare tags in constant time (`subtle` / `ctutils`). For AEADs `block_bits` is the
//! rate (bytes absorbed per permutation call).
// `KeyInit` of crypto-common, the trait both Ascon crates implement (re-exported by `aes`).
use aes::cipher::KeyInit;
use lwcbench_core::{check_len, iv_err, key_err, Aead, BitOrder, CipherError, CipherInfo, Family, Language, Origin};

use crate::entry::Entry;
use crate::kat::lwc::verify_lwc_aead;

/// Add this module's entries to the registry.
pub fn register(r: &mut Vec<Entry>) {
    r.push(
        Entry::aead(mk_ascon_aead128, verify_lwc_aead)
            .kat("lw-ascon-aead128.txt", &["ascon-c/asconaead128_SP800-232/LWC_AEAD_KAT_128_128.txt"])
            .mcu("rc_ascon_aead128", "lwc_mcu_images::rc::RcAead6<ascon_aead128::AsconAead128>"),
    );
    r.push(
        Entry::aead(mk_ascon128, verify_lwc_aead)
            .kat("lw-ascon128v12.txt", &["ascon-c/ascon128v12_v1.2/LWC_AEAD_KAT_128_128.txt"])
            .mcu("rc_ascon128", "lwc_mcu_images::rc::Ascon128"),
    );
}

// ---------------------------------------------------------------------------------------
// Ascon

const ASCON_AEAD128_INFO: CipherInfo = CipherInfo {
    name: "Ascon-AEAD128",
    implementation: "rustcrypto",
    family: Family::Aead,
    key_bits: 128,
    iv_bits: 128,
    block_bits: 128, // rate
    tag_bits: 128,
    state_bytes: 40,
    origin: Origin::Crate { name: "ascon-aead128", version: "0.1" },
    language: Language::Rust,
    bit_order: BitOrder::MsbFirst,
    bit_granular: false,
    note: "NIST SP 800-232",
};

fn tag_err(expected: usize, got: usize) -> CipherError {
    CipherError::TagLength { expected, got }
}

/// Ascon-AEAD128 (NIST SP 800-232) from `ascon-aead128`.
#[derive(Default)]
pub struct AsconAead128 {
    inner: Option<ascon_aead128::AsconAead128>, // zeroized on drop by the crate
}

impl Aead for AsconAead128 {
    fn info(&self) -> CipherInfo {
        ASCON_AEAD128_INFO
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 16, key_err)?;
        self.inner = Some(ascon_aead128::AsconAead128::new_from_slice(key).expect("length checked"));
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        use ascon_aead128::aead::AeadInOut;
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 16, iv_err)?;
        check_len(tag.len(), 16, tag_err)?;
        let n = ascon_aead128::AsconAead128Nonce::try_from(nonce).expect("length checked");
        let t = c.encrypt_inout_detached(&n, ad, buf.into()).map_err(|_| CipherError::DataLength { got: buf.len() })?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        use ascon_aead128::aead::AeadInOut;
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 16, iv_err)?;
        check_len(tag.len(), 16, tag_err)?;
        let n = ascon_aead128::AsconAead128Nonce::try_from(nonce).expect("length checked");
        let t = ascon_aead128::AsconAead128Tag::try_from(tag).expect("length checked");
        c.decrypt_inout_detached(&n, ad, (&mut *buf).into(), &t).map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}

fn mk_ascon_aead128() -> Box<dyn Aead + Send> {
    Box::new(AsconAead128::default())
}

/// Ascon-128 v1.2 from `ascon-aead` 0.4.
#[derive(Default)]
pub struct Ascon128 {
    inner: Option<ascon_aead::Ascon128>, // zeroized on drop by the crate
}

impl Aead for Ascon128 {
    fn info(&self) -> CipherInfo {
        CipherInfo {
            name: "Ascon-128",
            block_bits: 64,
            origin: Origin::Crate { name: "ascon-aead", version: "0.4" },
            note: "v1.2 (CAESAR portfolio / NIST-LWC submission); superseded by Ascon-AEAD128",
            ..ASCON_AEAD128_INFO
        }
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        use ascon_aead::aead::KeyInit as _;
        check_len(key.len(), 16, key_err)?;
        self.inner = Some(ascon_aead::Ascon128::new_from_slice(key).expect("length checked"));
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        use ascon_aead::aead::AeadInPlace;
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 16, iv_err)?;
        check_len(tag.len(), 16, tag_err)?;
        let t = c
            .encrypt_in_place_detached(ascon_aead::Nonce::<ascon_aead::Ascon128>::from_slice(nonce), ad, buf)
            .map_err(|_| CipherError::DataLength { got: buf.len() })?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        use ascon_aead::aead::AeadInPlace;
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 16, iv_err)?;
        check_len(tag.len(), 16, tag_err)?;
        let n = ascon_aead::Nonce::<ascon_aead::Ascon128>::from_slice(nonce);
        let t = ascon_aead::Tag::<ascon_aead::Ascon128>::from_slice(tag);
        c.decrypt_in_place_detached(n, ad, buf, t).map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}

fn mk_ascon128() -> Box<dyn Aead + Send> {
    Box::new(Ascon128::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kat::{lwc, repo_file};

    #[test]
    fn runners_can_fail() {
        let chk = lwc::aead_lwc(mk_ascon128, &repo_file("lw-ascon-aead128.txt"));
        assert!(!chk.ok(), "Ascon-128 v1.2 must not pass Ascon-AEAD128 vectors");
    }
}
