//! The one cipher API of lwcbench.
//!
//! Everything here is `no_std` and allocation-free so that the same cipher crates build for
//! microcontrollers. Three families share one metadata record ([`CipherInfo`]):
//!
//! * [`StreamCipher`] — init from key + IV, then keystream of an arbitrary number of **bits**.
//! * [`BlockCipher`] — a keyed permutation of one block; modes live above it.
//! * [`Aead`] — encrypt/decrypt in place with a detached tag; a failed check is an error and
//!   the buffer is wiped, never left holding unauthenticated plaintext.
#![no_std]
#![forbid(unsafe_code)]

pub mod bits;
mod info;

pub use info::{BitOrder, CipherInfo, Family, Language, Origin};

/// Errors a cipher call can return. Kept small and `Copy` so `no_std` code can return it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CipherError {
    /// Key of the wrong length (bytes).
    KeyLength {
        /// The length the cipher takes.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// IV / nonce of the wrong length (bytes).
    IvLength {
        /// The length the cipher takes.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// IV longer than a cipher that accepts shorter IVs (zero-padded) allows (bytes).
    IvTooLong {
        /// The longest IV the cipher takes.
        max: usize,
        /// The length given.
        got: usize,
    },
    /// Tag of the wrong length (bytes).
    TagLength {
        /// The length the cipher takes.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// Output buffer too small for the requested bits/bytes.
    BufferTooSmall {
        /// The bytes the call needs.
        needed: usize,
        /// The bytes the buffer has.
        got: usize,
    },
    /// Data length not acceptable for this primitive (e.g. not a whole block).
    DataLength {
        /// The length given.
        got: usize,
    },
    /// Keystream requested before `init`.
    NotInitialized,
    /// AEAD tag did not verify. The buffer has been zeroed.
    AuthenticationFailed,
}

impl core::fmt::Display for CipherError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::KeyLength { expected, got } => {
                write!(f, "key must be {expected} bytes ({} bits), got {got} bytes", expected * 8)
            }
            Self::IvLength { expected, got } => {
                write!(f, "IV/nonce must be {expected} bytes ({} bits), got {got} bytes", expected * 8)
            }
            Self::IvTooLong { max, got } => {
                write!(f, "IV must be at most {max} bytes ({} bits), got {got} bytes", max * 8)
            }
            Self::TagLength { expected, got } => write!(f, "tag must be {expected} bytes, got {got}"),
            Self::BufferTooSmall { needed, got } => {
                write!(f, "buffer too small: need {needed} bytes, got {got}")
            }
            Self::DataLength { got } => write!(f, "data length {got} bytes not accepted by this primitive"),
            Self::NotInitialized => f.write_str("cipher used before init"),
            Self::AuthenticationFailed => f.write_str("authentication failed (tag mismatch)"),
        }
    }
}

/// Check a key/IV length; a helper so every implementation reports the same error.
pub fn check_len(got: usize, expected: usize, err: fn(usize, usize) -> CipherError) -> Result<(), CipherError> {
    if got == expected {
        Ok(())
    } else {
        Err(err(expected, got))
    }
}
/// Constructor for [`CipherError::KeyLength`] usable with [`check_len`].
pub fn key_err(expected: usize, got: usize) -> CipherError {
    CipherError::KeyLength { expected, got }
}
/// Constructor for [`CipherError::IvLength`] usable with [`check_len`].
pub fn iv_err(expected: usize, got: usize) -> CipherError {
    CipherError::IvLength { expected, got }
}

/// A synchronous stream cipher with bit-granular keystream.
///
/// Contract (checked by the catalogue's conformance tests for every implementation):
/// * `init` fully resets the state: the same key/IV always gives the same keystream.
/// * `keystream_bits(out, n)` writes the next `n` keystream bits into
///   `out[..ceil(n/8)]`, packed in the cipher's [`BitOrder`]; unused bits of a
///   partial last byte are zero. For bit-oriented ciphers the stream position advances by
///   exactly `n` bits. Word-oriented ciphers (ChaCha20, Salsa20, …) cannot stop inside a
///   byte: they advance to the next byte boundary and say so with `CipherInfo::bit_granular = false`.
/// * `apply_bits(data, n)` XORs the next `n` keystream bits into `data`; bits past `n` in the
///   last byte are left untouched.
pub trait StreamCipher {
    /// The implementation's metadata.
    fn info(&self) -> CipherInfo;
    /// Load a key and IV, resetting the keystream to its start.
    fn init(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError>;
    /// Write the next `nbits` keystream bits into `out` (see the contract above).
    fn keystream_bits(&mut self, out: &mut [u8], nbits: usize) -> Result<(), CipherError>;
    /// XOR the next `nbits` keystream bits into `data` (see the contract above).
    fn apply_bits(&mut self, data: &mut [u8], nbits: usize) -> Result<(), CipherError>;

    /// Whole-byte keystream.
    fn keystream(&mut self, out: &mut [u8]) -> Result<(), CipherError> {
        let n = out.len() * 8;
        self.keystream_bits(out, n)
    }
    /// Whole-byte encryption/decryption in place.
    fn apply(&mut self, data: &mut [u8]) -> Result<(), CipherError> {
        let n = data.len() * 8;
        self.apply_bits(data, n)
    }
}

/// A block cipher: a keyed permutation of `block_bits` bits. Modes are built above it.
pub trait BlockCipher {
    /// The implementation's metadata.
    fn info(&self) -> CipherInfo;
    /// Run the key schedule.
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError>;
    /// Encrypt one block in place (`block.len()` = block size in bytes).
    fn encrypt_block(&self, block: &mut [u8]);
    /// Decrypt one block in place.
    fn decrypt_block(&self, block: &mut [u8]);
}

/// Authenticated encryption with associated data, in place, detached tag.
pub trait Aead {
    /// The implementation's metadata.
    fn info(&self) -> CipherInfo;
    /// Run the key schedule.
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError>;
    /// Encrypt `buf` in place and write the tag (`tag.len()` = tag size in bytes).
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError>;
    /// Verify and decrypt `buf` in place. On tag mismatch returns
    /// [`CipherError::AuthenticationFailed`] and zeroes `buf`.
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError>;
}

/// A confidentiality-only block-cipher mode with an IV, as libraries offer it: ECB and CBC
/// with PKCS#7 padding (the ciphertext is longer than the message), CFB, OFB and CTR (same
/// length). In place: the caller's buffer must have room for [`CipherMode::ciphertext_len`].
pub trait CipherMode {
    /// The implementation's metadata.
    fn info(&self) -> CipherInfo;
    /// Run the key schedule (and whatever per-key context the library keeps).
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError>;
    /// Ciphertext length for a `len`-byte message (padding included).
    fn ciphertext_len(&self, len: usize) -> usize;
    /// Encrypt `buf[..len]` in place with this IV (empty for ECB); returns the ciphertext
    /// length. `buf.len()` must be at least `ciphertext_len(len)`.
    fn encrypt(&mut self, iv: &[u8], buf: &mut [u8], len: usize) -> Result<usize, CipherError>;
    /// Decrypt the whole of `buf` in place; returns the plaintext length (padding removed).
    /// Bad padding, or a length that is not a whole number of blocks, is a `DataLength` error.
    fn decrypt(&mut self, iv: &[u8], buf: &mut [u8]) -> Result<usize, CipherError>;
}
