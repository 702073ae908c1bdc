//! TinyJAMBU-128/rust-ref (lwcbench_lightweight::tinyjambu::TinyJambu128), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwcbench_lightweight::tinyjambu::TinyJambu128, 16, 12, 8);
