//! XTEA (RustCrypto `xtea`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::block_image!(lwc_mcu_images::rc::RcBlock<xtea::Xtea>, 16, 8);
