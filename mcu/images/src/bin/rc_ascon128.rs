//! Ascon-128/rustcrypto (lwc_mcu_images::rc::Ascon128), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwc_mcu_images::rc::Ascon128, 16, 16, 16);
