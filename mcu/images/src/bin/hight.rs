//! HIGHT/rust-ref (lwcbench_lightweight::hight::Hight), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::block_image!(lwcbench_lightweight::hight::Hight, 16, 8);
