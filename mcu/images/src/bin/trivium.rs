//! Trivium (`crates/estream`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::stream_image!(lwcbench_estream::Trivium, lwcbench_estream::trivium::INFO);
