//! DRACO/rust-fast (lwcbench_draco::DracoFast), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::stream_image!(lwcbench_draco::DracoFast, 16, 12);
