//! Minimal `no_std` adapters from the RustCrypto crates the catalogue uses to the
//! `lwcbench_core` traits, so that [`crate::stream_image!`]-style macros can drive them on the
//! MCU and `mcu/hostref` can run the same code natively. Raw crate byte conventions (no
//! word/byte swapping as in `crates/catalog`'s adapters): the cost is the same, and the
//! emulated-vs-host check compares like with like.
use chacha20::cipher::{BlockCipherEncrypt, KeyInit, KeyIvInit, StreamCipher as RcStreamCipher};
use lwcbench_core::{
    bits, Aead, BitOrder, BlockCipher, CipherError, CipherInfo, Family, Language, Origin, StreamCipher,
};

const INFO: CipherInfo = CipherInfo {
    name: "rustcrypto",
    implementation: "rustcrypto",
    family: Family::Stream,
    key_bits: 0,
    iv_bits: 0,
    block_bits: 0,
    tag_bits: 0,
    state_bytes: 0,
    origin: Origin::Crate { name: "rustcrypto", version: "" },
    language: Language::Rust,
    bit_order: BitOrder::MsbFirst,
    bit_granular: false,
    note: "mcu image adapter",
};

fn key_len(got: usize) -> CipherError {
    CipherError::KeyLength { expected: 0, got }
}

/// A RustCrypto stream cipher (`cipher` 0.5): keystream = `write_keystream` of whole bytes.
pub struct RcStream<C>(Option<C>);
impl<C> Default for RcStream<C> {
    fn default() -> Self {
        RcStream(None)
    }
}
impl<C: KeyIvInit + RcStreamCipher> StreamCipher for RcStream<C> {
    fn info(&self) -> CipherInfo {
        INFO
    }
    fn init(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
        self.0 = Some(C::new_from_slices(key, iv).map_err(|_| key_len(key.len()))?);
        Ok(())
    }
    fn keystream_bits(&mut self, out: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        bits::check_room(out, nbits)?;
        let c = self.0.as_mut().ok_or(CipherError::NotInitialized)?;
        c.write_keystream(&mut out[..bits::bytes_for(nbits)]);
        Ok(())
    }
    fn apply_bits(&mut self, data: &mut [u8], nbits: usize) -> Result<(), CipherError> {
        bits::check_room(data, nbits)?;
        let c = self.0.as_mut().ok_or(CipherError::NotInitialized)?;
        c.apply_keystream(&mut data[..bits::bytes_for(nbits)]);
        Ok(())
    }
}

/// A RustCrypto block cipher (`cipher` 0.5), encryption only.
pub struct RcBlock<C>(Option<C>);
impl<C> Default for RcBlock<C> {
    fn default() -> Self {
        RcBlock(None)
    }
}
impl<C: KeyInit + BlockCipherEncrypt> BlockCipher for RcBlock<C> {
    fn info(&self) -> CipherInfo {
        CipherInfo { family: Family::Block, ..INFO }
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        self.0 = Some(C::new_from_slice(key).map_err(|_| key_len(key.len()))?);
        Ok(())
    }
    fn encrypt_block(&self, block: &mut [u8]) {
        if let (Some(c), Ok(b)) = (&self.0, block.try_into()) {
            c.encrypt_block(b);
        }
    }
    fn decrypt_block(&self, _block: &mut [u8]) {} // not measured on the MCU
}

/// A RustCrypto AEAD of the `aead` 0.6 generation (ChaCha20-Poly1305, Ascon-AEAD128),
/// detached in-place encryption.
pub struct RcAead6<C>(Option<C>);
impl<C> Default for RcAead6<C> {
    fn default() -> Self {
        RcAead6(None)
    }
}
impl<C: chacha20poly1305::aead::AeadInOut + chacha20poly1305::aead::KeyInit> Aead for RcAead6<C> {
    fn info(&self) -> CipherInfo {
        CipherInfo { family: Family::Aead, ..INFO }
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        self.0 = Some(C::new_from_slice(key).map_err(|_| key_len(key.len()))?);
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        let c = self.0.as_ref().ok_or(CipherError::NotInitialized)?;
        let n = chacha20poly1305::aead::Nonce::<C>::try_from(nonce)
            .map_err(|_| CipherError::IvLength { expected: 0, got: nonce.len() })?;
        let t = c.encrypt_inout_detached(&n, ad, buf.into()).map_err(|_| CipherError::DataLength { got: buf.len() })?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn decrypt(&mut self, _: &[u8], _: &[u8], _: &mut [u8], _: &[u8]) -> Result<(), CipherError> {
        Err(CipherError::NotInitialized) // not measured on the MCU
    }
}

/// Ascon-128 v1.2 (`ascon-aead` 0.4, `aead` 0.5 generation), detached in-place encryption.
#[derive(Default)]
pub struct Ascon128(Option<ascon_aead::Ascon128>);
impl Aead for Ascon128 {
    fn info(&self) -> CipherInfo {
        CipherInfo { family: Family::Aead, ..INFO }
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        use ascon_aead::aead::KeyInit as _;
        self.0 = Some(ascon_aead::Ascon128::new_from_slice(key).map_err(|_| key_len(key.len()))?);
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        use ascon_aead::aead::AeadInPlace;
        let c = self.0.as_ref().ok_or(CipherError::NotInitialized)?;
        if nonce.len() != 16 {
            return Err(CipherError::IvLength { expected: 16, got: nonce.len() });
        }
        let t = c
            .encrypt_in_place_detached(ascon_aead::Nonce::<ascon_aead::Ascon128>::from_slice(nonce), ad, buf)
            .map_err(|_| CipherError::DataLength { got: buf.len() })?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn decrypt(&mut self, _: &[u8], _: &[u8], _: &mut [u8], _: &[u8]) -> Result<(), CipherError> {
        Err(CipherError::NotInitialized)
    }
}
