//! Xoodyak/rust-ref (lwcbench_lightweight::xoodyak::Xoodyak), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::aead_image!(lwcbench_lightweight::xoodyak::Xoodyak, 16, 16, 16);
