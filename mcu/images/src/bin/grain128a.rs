//! Grain-128a (`crates/estream`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::stream_image!(lwcbench_estream::Grain128a, lwcbench_estream::grain128a::INFO);
