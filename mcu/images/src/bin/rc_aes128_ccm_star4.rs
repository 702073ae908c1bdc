//! AES-128-CCM*-4/rustcrypto (lwc_mcu_images::rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U4, ccm::consts::U13>>), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(
    lwc_mcu_images::rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U4, ccm::consts::U13>>,
    16,
    13,
    4
);
