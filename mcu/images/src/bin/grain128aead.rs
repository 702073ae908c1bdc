//! Grain-128AEADv2 (`crates/lightweight`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwcbench_lightweight::grain128aead::Grain128AeadV2, 16, 12, 8);
