//! One ECDH on a Cortex-M, in mcu/emulate.py's calling convention, for EDHOC's device cost:
//! `lwc_init(key, iv)` multiplies a fixed peer public key by the 32-byte scalar at `key` (the
//! cost measured), `lwc_keystream(out, nbits)` copies the shared secret out. Each curve is a
//! binary (`src/bin/`) that names its multiplication in [`ecdh_image!`]; the rest is here.
#![no_std]

/// Exports the emulator's entry points for `$mul: fn(&[u8; 32]) -> Option<[u8; 32]>` (the
/// scalar multiplication under test; None for a key it refuses), with the key length 32 and no IV.
#[macro_export]
macro_rules! ecdh_image {
    ($mul:path) => {
        /// The scalar's length in bytes, read by the emulator.
        #[no_mangle]
        #[used]
        pub static LWC_KEY_BYTES: u32 = 32;
        /// No IV.
        #[no_mangle]
        #[used]
        pub static LWC_IV_BYTES: u32 = 0;

        static mut SHARED: [u8; 32] = [0; 32];

        /// # Safety
        /// `key` points to 32 readable bytes.
        #[no_mangle]
        pub unsafe extern "C" fn lwc_init(key: *const u8, _iv: *const u8) -> i32 {
            let k: &[u8; 32] = unsafe { &*(key as *const [u8; 32]) };
            match $mul(k) {
                Some(s) => {
                    unsafe { *core::ptr::addr_of_mut!(SHARED) = s };
                    0
                }
                None => -1,
            }
        }

        /// # Safety
        /// `out` points to `ceil(nbits / 8)` writable bytes.
        #[no_mangle]
        pub unsafe extern "C" fn lwc_keystream(out: *mut u8, nbits: u32) -> i32 {
            let n = (nbits as usize).div_ceil(8).min(32);
            let o = unsafe { core::slice::from_raw_parts_mut(out, n) };
            let shared: &[u8; 32] = unsafe { &*core::ptr::addr_of!(SHARED) };
            o.copy_from_slice(&shared[..n]);
            0
        }

        /// Never run by the emulator (it loads the segments and calls the entry points itself).
        #[no_mangle]
        pub extern "C" fn lwc_reset() -> ! {
            loop {
                core::hint::spin_loop();
            }
        }

        #[link_section = ".vector_table"]
        #[no_mangle]
        #[used]
        static LWC_VECTORS: [u32; 2] = [0x2004_2000, 0];
    };
}

#[cfg(not(test))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
