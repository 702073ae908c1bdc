//! ChaCha20 (IETF, 96-bit nonce) (RustCrypto `chacha20`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::stream_image_default!(lwc_mcu_images::rc::RcStream<chacha20::ChaCha20>, 32, 12);
