//! HIGHT (`crates/lightweight`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::block_image!(lwcbench_lightweight::hight::Hight, 16, 8);
