//! ChaCha20-Poly1305/rustcrypto (lwc_mcu_images::rc::RcAead6<chacha20poly1305::ChaCha20Poly1305>), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwc_mcu_images::rc::RcAead6<chacha20poly1305::ChaCha20Poly1305>, 32, 12, 16);
