//! TinyJAMBU-128 v2 (`crates/lightweight`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwcbench_lightweight::tinyjambu::TinyJambu128, 16, 12, 8);
