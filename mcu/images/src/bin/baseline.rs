//! Baseline: the harness with no cipher (same entry points, stub bodies). Subtracted from
//! every cipher image so that flash/RAM figures are the cipher's alone.
#![no_std]
#![no_main]
use lwc_mcu_images as _;

/// No key: the emulator passes none.
#[no_mangle]
#[used]
pub static LWC_KEY_BYTES: u32 = 0;
/// No IV.
#[no_mangle]
#[used]
pub static LWC_IV_BYTES: u32 = 0;

/// # Safety
/// Never dereferences its arguments.
#[no_mangle]
pub unsafe extern "C" fn lwc_init(key: *const u8, iv: *const u8) -> i32 {
    core::hint::black_box((key, iv));
    0
}

/// # Safety
/// Never dereferences its arguments.
#[no_mangle]
pub unsafe extern "C" fn lwc_keystream(out: *mut u8, nbits: u32) -> i32 {
    core::hint::black_box((out, nbits));
    0
}
