//! DRACO, bit-serial reference (`DRACO/rust-ref`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::stream_image!(lwcbench_draco::DracoRef, lwcbench_draco::reference::INFO);
