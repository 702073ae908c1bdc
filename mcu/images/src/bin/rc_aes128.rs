//! AES-128 (software backend: no AES instructions on these cores) (RustCrypto `aes`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::block_image!(lwc_mcu_images::rc::RcBlock<aes::Aes128>, 16, 16);
