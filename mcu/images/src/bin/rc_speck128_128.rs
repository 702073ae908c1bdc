//! SPECK-128-128/rustcrypto (lwc_mcu_images::rc::RcBlock<speck_cipher::Speck128_128>), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::block_image!(lwc_mcu_images::rc::RcBlock<speck_cipher::Speck128_128>, 16, 16);
