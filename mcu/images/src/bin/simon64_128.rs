//! SIMON-64-128 (one of the ten SIMON sizes: same code, other constants) (`crates/lightweight`).
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::block_image!(lwcbench_lightweight::simon::Simon<lwcbench_lightweight::simon::Simon64_128>, 16, 8);
