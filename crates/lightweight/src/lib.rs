//! Own `no_std`, allocation-free implementations of lightweight block ciphers and AEADs,
//! written from their specifications (each module names its source):
//!
//! * block ciphers: [`lea`] (LEA-128), [`hight`] (HIGHT), [`simon`] (SIMON, all ten sizes);
//! * NIST LWC finalist AEADs: [`tinyjambu`] (TinyJAMBU-128 v2), [`xoodyak`] (Xoodyak),
//!   [`schwaemm`] (SCHWAEMM256-128), [`grain128aead`] (Grain-128AEADv2).
//!
//! Every type implements the `lwcbench_core` traits directly and wipes its key material on
//! drop. Crate-backed algorithms (AES, Ascon, SPECK, XTEA) are adapted in
//! `lwcbench-catalog` (`adapters/own/lightweight.rs`), not here.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(test)]
extern crate std;

pub mod grain128aead;
pub mod hight;
pub mod lea;
pub mod schwaemm;
pub mod simon;
pub mod tinyjambu;
pub mod xoodyak;

/// Accept a decryption if the computed tag equals the received one (constant time); otherwise
/// wipe the already-decrypted buffer so no unauthenticated plaintext escapes.
pub(crate) fn check_tag(computed: &[u8], received: &[u8], buf: &mut [u8]) -> Result<(), lwcbench_core::CipherError> {
    if ct_eq(computed, received) {
        Ok(())
    } else {
        buf.fill(0);
        Err(lwcbench_core::CipherError::AuthenticationFailed)
    }
}

/// Constant-time equality of two tags (no early exit on the first differing byte).
pub(crate) fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let d = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    // black_box keeps the compiler from turning the fold back into an early-exit compare
    core::hint::black_box(d) == 0
}
