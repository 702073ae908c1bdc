//! Ascon-AEAD128 (SP 800-232) (RustCrypto `ascon-aead128`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwc_mcu_images::rc::RcAead6<ascon_aead128::AsconAead128>, 16, 16, 16);
