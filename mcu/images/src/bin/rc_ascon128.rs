//! Ascon-128 v1.2 (RustCrypto `ascon-aead`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwc_mcu_images::rc::Ascon128, 16, 16, 16);
