//! Grain-128AEADv2/rust-ref (lwcbench_lightweight::grain128aead::Grain128AeadV2), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwcbench_lightweight::grain128aead::Grain128AeadV2, 16, 12, 8);
