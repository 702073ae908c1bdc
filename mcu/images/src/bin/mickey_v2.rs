//! MICKEY-2.0/rust (lwcbench_estream::MickeyV2), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::stream_image!(lwcbench_estream::MickeyV2, 10, 10);
