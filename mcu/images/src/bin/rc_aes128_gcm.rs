//! AES-128-GCM/rustcrypto (lwc_mcu_images::rc::RcAead6<aes_gcm::Aes128Gcm>), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwc_mcu_images::rc::RcAead6<aes_gcm::Aes128Gcm>, 16, 12, 16);
