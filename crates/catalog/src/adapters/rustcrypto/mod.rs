//! Adapters over RustCrypto crates. The crate does the work; the adapter maps it onto the
//! lwcbench traits (and byte conventions) and reports the crate version in the metadata.
//! The RustCrypto AES modes are with the other AES libraries in `crate::aes`.
pub mod ascon;
pub mod block;
pub mod chacha;
pub mod misuse;
pub mod salsa_rabbit;

#[cfg(test)]
mod tests {
    use zeroize::ZeroizeOnDrop;

    fn wiped_on_drop<T: ZeroizeOnDrop>() {}

    /// The cipher crates are built with `zeroize`: their key schedules and keystream state are
    /// wiped when an instance is dropped. (Without the feature these types do not implement
    /// `ZeroizeOnDrop` and this does not compile.)
    #[test]
    fn cipher_crates_zeroize_on_drop() {
        wiped_on_drop::<chacha20::ChaCha20>();
        wiped_on_drop::<chacha20poly1305::ChaCha20Poly1305>();
        wiped_on_drop::<chacha20poly1305::XChaCha20Poly1305>();
        wiped_on_drop::<aes_gcm::Aes128Gcm>();
        wiped_on_drop::<aes_siv::siv::Aes128Siv>(); // what AES-*-SIV/rustcrypto holds
        wiped_on_drop::<aes::Aes256>(); // the key schedule of every AES-*/rustcrypto entry
        wiped_on_drop::<salsa20::Salsa20>();
        wiped_on_drop::<rabbit::Rabbit>();
    }
}
