//! SPECK-64-128 (one of the ten SPECK sizes) (RustCrypto `speck-cipher`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::block_image!(lwc_mcu_images::rc::RcBlock<speck_cipher::Speck64_128>, 16, 8);
