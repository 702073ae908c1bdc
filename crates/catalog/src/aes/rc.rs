//! RustCrypto: `aes` 0.9 under `ecb`, `cbc` (PKCS#7 from `block-padding`), `cfb-mode`,
//! `cfb8`, `ofb`, `ctr` (`Ctr128BE`: the whole 128-bit block is the counter, as SP 800-38A),
//! `aes-gcm`, `ccm`, `eax`, `ocb3`, `aes-siv` (CMAC-SIV). `set_key` runs the AES key schedule
//! (and the AEADs' per-key precomputation); each message clones the keyed cipher into the
//! mode object (a copy of the round keys).
use aes::cipher::block_padding::Pkcs7;
use aes::cipher::common::InnerInit;
use aes::cipher::consts::{U12, U16};
use aes::cipher::{
    BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, BlockSizeUser, InnerIvInit, KeyInit,
    StreamCipher,
};
use aes::{Aes128, Aes192, Aes256};
use aes_gcm::aead::{AeadCore, AeadInOut};
use lwcbench_core::{check_len, key_err, Aead, CipherError, CipherInfo, CipherMode};

use super::{check_aead_args, check_mode_args, info, Kind, Lib};

trait Cipher:
    KeyInit + BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16> + Clone + Send + 'static
{
}
impl<
        T: KeyInit + BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16> + Clone + Send + 'static,
    > Cipher for T
{
}

/// The RustCrypto mode `kind` with a `bits`-bit AES key (128, 192, otherwise 256), not yet keyed.
pub fn mode(kind: Kind, bits: u16) -> Box<dyn CipherMode + Send> {
    match bits {
        128 => Box::new(RcMode::<Aes128> { kind, bits, c: None }),
        192 => Box::new(RcMode::<Aes192> { kind, bits, c: None }),
        _ => Box::new(RcMode::<Aes256> { kind, bits, c: None }),
    }
}

/// The RustCrypto AEAD mode `kind` with a `bits`-bit AES key, not yet keyed.
pub fn aead(kind: Kind, bits: u16) -> Box<dyn Aead + Send> {
    fn b<A: AeadInOut + KeyInit + Send + 'static>(kind: Kind, bits: u16) -> Box<dyn Aead + Send> {
        Box::new(RcAead::<A> { kind, bits, inner: None })
    }
    match (kind, bits) {
        (Kind::Gcm, 128) => b::<aes_gcm::AesGcm<Aes128, U12>>(kind, bits),
        (Kind::Gcm, 192) => b::<aes_gcm::AesGcm<Aes192, U12>>(kind, bits),
        (Kind::Gcm, _) => b::<aes_gcm::AesGcm<Aes256, U12>>(kind, bits),
        (Kind::Ccm, 128) => b::<ccm::Ccm<Aes128, U16, U12>>(kind, bits),
        (Kind::Ccm, 192) => b::<ccm::Ccm<Aes192, U16, U12>>(kind, bits),
        (Kind::Ccm, _) => b::<ccm::Ccm<Aes256, U16, U12>>(kind, bits),
        (Kind::Eax, 128) => b::<eax::Eax<Aes128, U16>>(kind, bits),
        (Kind::Eax, 192) => b::<eax::Eax<Aes192, U16>>(kind, bits),
        (Kind::Eax, _) => b::<eax::Eax<Aes256, U16>>(kind, bits),
        (Kind::Ocb, 128) => b::<ocb3::Ocb3<Aes128, U12, U16>>(kind, bits),
        (Kind::Ocb, 192) => b::<ocb3::Ocb3<Aes192, U12, U16>>(kind, bits),
        (Kind::Ocb, _) => b::<ocb3::Ocb3<Aes256, U12, U16>>(kind, bits),
        (Kind::Siv, 128) => Box::new(RcSiv::<Aes128> { bits, inner: None }),
        (Kind::Siv, 192) => Box::new(RcSiv::<Aes192> { bits, inner: None }),
        (Kind::Siv, _) => Box::new(RcSiv::<Aes256> { bits, inner: None }),
        _ => unreachable!("not an AEAD mode: {kind:?}"),
    }
}

struct RcMode<C> {
    kind: Kind,
    bits: u16,
    c: Option<C>, // `aes` zeroizes round keys on drop (feature "zeroize")
}

impl<C: Cipher> CipherMode for RcMode<C> {
    fn info(&self) -> CipherInfo {
        info(Lib::RustCrypto, self.kind, self.bits)
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), self.bits as usize / 8, key_err)?;
        self.c = Some(C::new_from_slice(key).expect("length checked"));
        Ok(())
    }
    fn ciphertext_len(&self, len: usize) -> usize {
        self.kind.ciphertext_len(len)
    }
    fn encrypt(&mut self, iv: &[u8], buf: &mut [u8], len: usize) -> Result<usize, CipherError> {
        check_mode_args(self.kind, iv, buf, len)?;
        let c = self.c.clone().ok_or(CipherError::NotInitialized)?;
        let (needed, got) = (self.kind.ciphertext_len(len), buf.len());
        let pad_err = |_| CipherError::BufferTooSmall { needed, got };
        let ivr = |_| CipherError::IvLength { expected: 16, got: iv.len() };
        Ok(match self.kind {
            Kind::Ecb => ecb::Encryptor::<C>::inner_init(c).encrypt_padded::<Pkcs7>(buf, len).map_err(pad_err)?.len(),
            Kind::Cbc => cbc::Encryptor::<C>::inner_iv_slice_init(c, iv)
                .map_err(ivr)?
                .encrypt_padded::<Pkcs7>(buf, len)
                .map_err(pad_err)?
                .len(),
            Kind::Cfb => {
                cfb_mode::Encryptor::<C>::inner_iv_slice_init(c, iv).map_err(ivr)?.encrypt(&mut buf[..len]);
                len
            }
            Kind::Cfb8 => {
                cfb8::Encryptor::<C>::inner_iv_slice_init(c, iv).map_err(ivr)?.encrypt(&mut buf[..len]);
                len
            }
            Kind::Ofb => {
                ofb::Ofb::<C>::from_core(ofb::OfbCore::<C>::inner_iv_slice_init(c, iv).map_err(ivr)?)
                    .apply_keystream(&mut buf[..len]);
                len
            }
            Kind::Ctr => {
                ctr::Ctr128BE::<C>::from_core(
                    ctr::CtrCore::<C, ctr::flavors::Ctr128BE>::inner_iv_slice_init(c, iv).map_err(ivr)?,
                )
                .apply_keystream(&mut buf[..len]);
                len
            }
            _ => unreachable!("AEAD modes are not CipherModes"),
        })
    }
    fn decrypt(&mut self, iv: &[u8], buf: &mut [u8]) -> Result<usize, CipherError> {
        check_mode_args(self.kind, iv, buf, 0)?;
        let c = self.c.clone().ok_or(CipherError::NotInitialized)?;
        let len = buf.len();
        let bad = |_| CipherError::DataLength { got: len };
        let ivr = |_| CipherError::IvLength { expected: 16, got: iv.len() };
        Ok(match self.kind {
            Kind::Ecb => ecb::Decryptor::<C>::inner_init(c).decrypt_padded::<Pkcs7>(buf).map_err(bad)?.len(),
            Kind::Cbc => cbc::Decryptor::<C>::inner_iv_slice_init(c, iv)
                .map_err(ivr)?
                .decrypt_padded::<Pkcs7>(buf)
                .map_err(bad)?
                .len(),
            Kind::Cfb => {
                cfb_mode::Decryptor::<C>::inner_iv_slice_init(c, iv).map_err(ivr)?.decrypt(buf);
                len
            }
            Kind::Cfb8 => {
                cfb8::Decryptor::<C>::inner_iv_slice_init(c, iv).map_err(ivr)?.decrypt(buf);
                len
            }
            Kind::Ofb => {
                ofb::Ofb::<C>::from_core(ofb::OfbCore::<C>::inner_iv_slice_init(c, iv).map_err(ivr)?)
                    .apply_keystream(buf);
                len
            }
            Kind::Ctr => {
                ctr::Ctr128BE::<C>::from_core(
                    ctr::CtrCore::<C, ctr::flavors::Ctr128BE>::inner_iv_slice_init(c, iv).map_err(ivr)?,
                )
                .apply_keystream(buf);
                len
            }
            _ => unreachable!("AEAD modes are not CipherModes"),
        })
    }
}

struct RcAead<A> {
    kind: Kind,
    bits: u16,
    inner: Option<A>,
}

impl<A: AeadInOut + AeadCore + KeyInit + Send> Aead for RcAead<A> {
    fn info(&self) -> CipherInfo {
        info(Lib::RustCrypto, self.kind, self.bits)
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), self.bits as usize / 8, key_err)?;
        self.inner = Some(A::new_from_slice(key).expect("length checked"));
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_aead_args(self.kind, nonce, tag)?;
        let n = aes_gcm::aead::Nonce::<A>::try_from(nonce)
            .map_err(|_| CipherError::IvLength { expected: 0, got: nonce.len() })?;
        let t = c.encrypt_inout_detached(&n, ad, buf.into()).map_err(|_| CipherError::DataLength { got: buf.len() })?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_aead_args(self.kind, nonce, tag)?;
        let n = aes_gcm::aead::Nonce::<A>::try_from(nonce)
            .map_err(|_| CipherError::IvLength { expected: 0, got: nonce.len() })?;
        let t = aes_gcm::aead::Tag::<A>::try_from(tag)
            .map_err(|_| CipherError::TagLength { expected: 16, got: tag.len() })?;
        c.decrypt_inout_detached(&n, ad, (&mut *buf).into(), &t).map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}

/// AES-SIV (RFC 5297, S2V with CMAC) used as a deterministic AEAD with one AD component.
struct RcSiv<C: Cipher> {
    bits: u16,
    inner: Option<aes_siv::siv::CmacSiv<C>>,
}

impl<C: Cipher> Aead for RcSiv<C>
where
    aes_siv::siv::CmacSiv<C>: KeyInit + Send,
{
    fn info(&self) -> CipherInfo {
        info(Lib::RustCrypto, Kind::Siv, self.bits)
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), self.bits as usize / 4, key_err)?;
        self.inner = Some(<aes_siv::siv::CmacSiv<C> as KeyInit>::new_from_slice(key).expect("length checked"));
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        check_aead_args(Kind::Siv, nonce, tag)?;
        let c = self.inner.as_mut().ok_or(CipherError::NotInitialized)?;
        let t = c.encrypt_inout_detached([ad], buf.into()).map_err(|_| CipherError::DataLength { got: buf.len() })?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        check_aead_args(Kind::Siv, nonce, tag)?;
        let c = self.inner.as_mut().ok_or(CipherError::NotInitialized)?;
        let t = aes_siv::Tag::try_from(tag).map_err(|_| CipherError::TagLength { expected: 16, got: tag.len() })?;
        c.decrypt_inout_detached([ad], (&mut *buf).into(), &t).map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}
