//! Grain v1 (`crates/estream`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::stream_image!(lwcbench_estream::GrainV1, lwcbench_estream::grain_v1::INFO);
