//! MICKEY 2.0 (`crates/estream`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::stream_image!(lwcbench_estream::MickeyV2, lwcbench_estream::mickey::INFO_80);
