//! SIMON-128-128/rust-ref (lwcbench_lightweight::simon::Simon<lwcbench_lightweight::simon::Simon128_128>), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::block_image!(lwcbench_lightweight::simon::Simon<lwcbench_lightweight::simon::Simon128_128>, 16, 16);
