//! Harness shared by every image: reset vector (Cortex-M), panic handler, and the
//! [`stream_image!`] macro that exports the two C entry points the emulator calls:
//!
//! * `lwc_init(key_ptr, iv_ptr) -> i32` — `init` of the static cipher state (in `.bss`),
//! * `lwc_keystream(out_ptr, nbits) -> i32` — the next `nbits` keystream bits into
//!   `out[..ceil(nbits/8)]`,
//!
//! and two `u32` statics `LWC_KEY_BYTES`, `LWC_IV_BYTES` (0 in the baseline) so the ELF says
//! what to pass. The baseline image uses the same harness with stub entry points, so that
//! "image minus baseline" is the cipher alone.
#![no_std]

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {
        core::hint::spin_loop();
    }
}

/// Reset handler: the emulator never runs it (it loads the segments itself and calls the
/// entry points); on a board it would be where `.data`/`.bss` set-up and `main` go.
#[no_mangle]
pub extern "C" fn lwc_reset() -> ! {
    loop {
        core::hint::spin_loop();
    }
}

/// One Cortex-M vector table entry: the initial SP (entry 0) or a handler address.
#[cfg(target_arch = "arm")]
#[repr(C)]
pub union Vector {
    sp: *const u8,
    handler: unsafe extern "C" fn() -> !,
}
// SAFETY: the table is read-only data read by the hardware only.
#[cfg(target_arch = "arm")]
unsafe impl Sync for Vector {}

#[cfg(target_arch = "arm")]
extern "C" {
    /// Top of RAM, from `lwc.ld`.
    static __stack_top: u8;
}

#[cfg(target_arch = "arm")]
unsafe extern "C" fn lwc_reset_thunk() -> ! {
    lwc_reset()
}

/// Minimal Cortex-M vector table: initial SP and reset vector (no exception handlers).
#[cfg(target_arch = "arm")]
#[link_section = ".vector_table"]
#[no_mangle]
#[used]
pub static LWC_VECTORS: [Vector; 2] =
    [Vector { sp: core::ptr::addr_of!(__stack_top) }, Vector { handler: lwc_reset_thunk }];

/// Export `lwc_init` / `lwc_keystream` for a `StreamCipher` type `$ty` whose metadata
/// constant is `$info` (key and IV lengths are taken from it).
///
/// The state is a zero-filled static in `.bss`: every field of the own stream ciphers is an
/// integer, an integer array or a `bool`, for which all-zero bytes are a valid value, and
/// `init` fully resets the state (trait contract), so no constructor runs on the device.
#[macro_export]
macro_rules! stream_image {
    ($ty:ty, $info:expr) => {
        static mut LWC_STATE: core::mem::MaybeUninit<$ty> = core::mem::MaybeUninit::zeroed();
        const LWC_KEY: usize = ($info).key_bits as usize / 8;
        const LWC_IV: usize = ($info).iv_bits as usize / 8;

        #[no_mangle]
        #[used]
        pub static LWC_KEY_BYTES: u32 = LWC_KEY as u32;
        #[no_mangle]
        #[used]
        pub static LWC_IV_BYTES: u32 = LWC_IV as u32;

        #[inline(always)]
        fn lwc_state() -> &'static mut $ty {
            // SAFETY: single-threaded bare metal; all-zero bytes are a valid `$ty` (see macro doc).
            unsafe { (*core::ptr::addr_of_mut!(LWC_STATE)).assume_init_mut() }
        }

        /// # Safety
        /// `key` and `iv` point to `LWC_KEY_BYTES` / `LWC_IV_BYTES` readable bytes.
        #[no_mangle]
        pub unsafe extern "C" fn lwc_init(key: *const u8, iv: *const u8) -> i32 {
            let k = unsafe { core::slice::from_raw_parts(key, LWC_KEY) };
            let v = unsafe { core::slice::from_raw_parts(iv, LWC_IV) };
            match lwcbench_core::StreamCipher::init(lwc_state(), k, v) {
                Ok(()) => 0,
                Err(_) => -1,
            }
        }

        /// # Safety
        /// `out` points to `ceil(nbits / 8)` writable bytes.
        #[no_mangle]
        pub unsafe extern "C" fn lwc_keystream(out: *mut u8, nbits: u32) -> i32 {
            let n = nbits as usize;
            let o = unsafe { core::slice::from_raw_parts_mut(out, n.div_ceil(8)) };
            match lwcbench_core::StreamCipher::keystream_bits(lwc_state(), o, n) {
                Ok(()) => 0,
                Err(_) => -1,
            }
        }
    };
}
