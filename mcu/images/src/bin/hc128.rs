//! HC-128 (`crates/estream`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::stream_image!(lwcbench_estream::Hc128, lwcbench_estream::hc128::INFO);
