//! Xoodyak (`crates/lightweight`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwcbench_lightweight::xoodyak::Xoodyak, 16, 16, 16);
