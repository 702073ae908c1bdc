//! SCHWAEMM256-128 (`crates/lightweight`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwcbench_lightweight::schwaemm::Schwaemm256_128, 16, 32, 16);
