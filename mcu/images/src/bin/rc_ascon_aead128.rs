//! Ascon-AEAD128/rustcrypto (lwc_mcu_images::rc::RcAead6<ascon_aead128::AsconAead128>), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwc_mcu_images::rc::RcAead6<ascon_aead128::AsconAead128>, 16, 16, 16);
