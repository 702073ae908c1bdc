//! LEA-128 (`crates/lightweight`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::block_image!(lwcbench_lightweight::lea::Lea128, 16, 16);
