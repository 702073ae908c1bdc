//! DRACO, word-parallel fast variant (`DRACO/rust-fast`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::stream_image!(lwcbench_draco::DracoFast, lwcbench_draco::reference::INFO);
