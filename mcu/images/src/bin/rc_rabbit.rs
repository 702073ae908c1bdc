//! Rabbit/rustcrypto (lwc_mcu_images::rc::RcStream<rabbit::Rabbit>), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.
#![no_std]
#![no_main]
use lwc_mcu_images as _;
lwc_mcu_images::stream_image_default!(lwc_mcu_images::rc::RcStream<rabbit::Rabbit>, 16, 8);
