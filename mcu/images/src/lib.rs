//! Harness shared by every image: reset vector (Cortex-M), panic handler, and the
//! [`stream_image!`] macro that exports the two C entry points the emulator calls:
//!
//! * `lwc_init(key_ptr, iv_ptr) -> i32` — `init` of the static cipher state (in `.bss`),
//! * `lwc_keystream(out_ptr, nbits) -> i32` — the next `nbits` keystream bits into
//!   `out[..ceil(nbits/8)]`,
//!
//! and two `u32` statics `LWC_KEY_BYTES`, `LWC_IV_BYTES` (0 in the baseline) so the ELF says
//! what to pass. The baseline image uses the same harness with stub entry points, so that
//! "image minus baseline" is the cipher alone. Every other `src/bin/<image>.rs` is one macro
//! call generated from the image's catalogue entry (crates/catalog/src/mcu_glue.rs).
#![no_std]

pub mod rc;

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

/// Export `lwc_init` / `lwc_keystream` for a `StreamCipher` type `$ty` with a `$key`-byte key
/// and a `$iv`-byte IV.
///
/// The state is a zero-filled static in `.bss`: every field of the own stream ciphers is an
/// integer, an integer array or a `bool`, for which all-zero bytes are a valid value, and
/// `init` fully resets the state (trait contract), so no constructor runs on the device.
#[macro_export]
macro_rules! stream_image {
    ($ty:ty, $key:expr, $iv:expr) => {
        static mut LWC_STATE: core::mem::MaybeUninit<$ty> = core::mem::MaybeUninit::zeroed();
        const LWC_KEY: usize = $key;
        const LWC_IV: usize = $iv;

        /// Key length in bytes, read by the emulator.
        #[no_mangle]
        #[used]
        pub static LWC_KEY_BYTES: u32 = LWC_KEY as u32;
        /// IV (nonce) length in bytes, read by the emulator; 0 for a block cipher.
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

/// Export `lwc_init` / `lwc_keystream` for a `BlockCipher` type `$ty` (`Default`) with a
/// `$key`-byte key and `$block`-byte blocks. Same ABI as [`stream_image!`] so that one
/// emulator drives every image:
///
/// * `lwc_init(key_ptr, _iv_ptr)` — construct the state (`Default`) and run `set_key`;
/// * `lwc_keystream(buf_ptr, nbits)` — encrypt `buf[..nbits/8]` in place, block by block
///   (ECB; `nbits` must be a multiple of the block size, else -1).
///
/// The state is an `Option` in `.bss` (`None` is all-zero), built by `lwc_init`: no claim
/// about which bit patterns of `$ty` are valid is needed.
#[macro_export]
macro_rules! block_image {
    ($ty:ty, $key:expr, $block:expr) => {
        static mut LWC_STATE: Option<$ty> = None;
        const LWC_KEY: usize = $key;
        const LWC_BLOCK: usize = $block;

        /// Key length in bytes, read by the emulator.
        #[no_mangle]
        #[used]
        pub static LWC_KEY_BYTES: u32 = LWC_KEY as u32;
        /// IV (nonce) length in bytes, read by the emulator; 0 for a block cipher.
        #[no_mangle]
        #[used]
        pub static LWC_IV_BYTES: u32 = 0;
        /// Tag length in bytes written after the message; 0 for a non-AEAD image.
        #[no_mangle]
        #[used]
        pub static LWC_TAG_BYTES: u32 = 0;

        /// # Safety
        /// `key` points to `LWC_KEY_BYTES` readable bytes.
        #[no_mangle]
        pub unsafe extern "C" fn lwc_init(key: *const u8, _iv: *const u8) -> i32 {
            let k = unsafe { core::slice::from_raw_parts(key, LWC_KEY) };
            // SAFETY: single-threaded bare metal, no other reference to the state is live.
            let st = unsafe { &mut *core::ptr::addr_of_mut!(LWC_STATE) };
            let c = st.insert(<$ty>::default());
            match lwcbench_core::BlockCipher::set_key(c, k) {
                Ok(()) => 0,
                Err(_) => -1,
            }
        }

        /// # Safety
        /// `buf` points to `nbits / 8` writable bytes.
        #[no_mangle]
        pub unsafe extern "C" fn lwc_keystream(buf: *mut u8, nbits: u32) -> i32 {
            let n = nbits as usize;
            // SAFETY: as in lwc_init.
            let Some(c) = (unsafe { &*core::ptr::addr_of!(LWC_STATE) }) else { return -1 };
            if n % (8 * LWC_BLOCK) != 0 {
                return -1;
            }
            let b = unsafe { core::slice::from_raw_parts_mut(buf, n / 8) };
            for blk in b.chunks_exact_mut(LWC_BLOCK) {
                lwcbench_core::BlockCipher::encrypt_block(c, blk);
            }
            0
        }
    };
}

/// Export the entry points for an `Aead` type `$ty` (`Default`): `$key`-byte key,
/// `$nonce`-byte nonce, `$tag`-byte tag.
///
/// * `lwc_init(key_ptr, nonce_ptr)` — construct the state, `set_key`, keep the nonce;
/// * `lwc_keystream(buf_ptr, nbits)` — encrypt the `nbits/8`-byte message `buf` in place
///   with empty associated data and write the tag right after it (`LWC_TAG_BYTES`, which
///   tells the emulator to read it back). `nbits` must be a multiple of 8, else -1;
/// * with the `ad-entry` feature only, `lwc_encrypt_ad(buf_ptr, nbits, ad_ptr, adlen)` — the
///   same with associated data, for the official vectors that carry some.
#[macro_export]
macro_rules! aead_image {
    ($ty:ty, $key:expr, $nonce:expr, $tag:expr) => {
        static mut LWC_STATE: Option<$ty> = None;
        static mut LWC_NONCE: [u8; $nonce] = [0; $nonce];
        const LWC_KEY: usize = $key;
        const LWC_TAG: usize = $tag;

        /// Key length in bytes, read by the emulator.
        #[no_mangle]
        #[used]
        pub static LWC_KEY_BYTES: u32 = LWC_KEY as u32;
        /// IV (nonce) length in bytes, read by the emulator; 0 for a block cipher.
        #[no_mangle]
        #[used]
        pub static LWC_IV_BYTES: u32 = $nonce as u32;
        /// Tag length in bytes written after the message; 0 for a non-AEAD image.
        #[no_mangle]
        #[used]
        pub static LWC_TAG_BYTES: u32 = LWC_TAG as u32;

        /// # Safety
        /// `key` / `nonce` point to `LWC_KEY_BYTES` / `LWC_IV_BYTES` readable bytes.
        #[no_mangle]
        pub unsafe extern "C" fn lwc_init(key: *const u8, nonce: *const u8) -> i32 {
            let k = unsafe { core::slice::from_raw_parts(key, LWC_KEY) };
            // SAFETY: single-threaded bare metal, no other reference to these statics is live.
            unsafe {
                (*core::ptr::addr_of_mut!(LWC_NONCE)).copy_from_slice(core::slice::from_raw_parts(nonce, $nonce));
            }
            let st = unsafe { &mut *core::ptr::addr_of_mut!(LWC_STATE) };
            let c = st.insert(<$ty>::default());
            match lwcbench_core::Aead::set_key(c, k) {
                Ok(()) => 0,
                Err(_) => -1,
            }
        }

        /// # Safety
        /// `buf` points to `nbits / 8 + LWC_TAG_BYTES` writable bytes.
        #[no_mangle]
        pub unsafe extern "C" fn lwc_keystream(buf: *mut u8, nbits: u32) -> i32 {
            let n = nbits as usize;
            // SAFETY: as in lwc_init.
            let (st, nonce) = unsafe { (&mut *core::ptr::addr_of_mut!(LWC_STATE), &*core::ptr::addr_of!(LWC_NONCE)) };
            let Some(c) = st else { return -1 };
            if n % 8 != 0 {
                return -1;
            }
            let b = unsafe { core::slice::from_raw_parts_mut(buf, n / 8 + LWC_TAG) };
            let (msg, tag) = b.split_at_mut(n / 8);
            match lwcbench_core::Aead::encrypt(c, nonce, &[], msg, tag) {
                Ok(()) => 0,
                Err(_) => -1,
            }
        }

        /// `lwc_keystream` with `adlen` bytes of associated data at `ad`: the official vectors'
        /// entry point (mcu/tests/test_aes_vectors.py). Only in a build with the `ad-entry`
        /// feature, so that the measured images (and their counts and sizes) stay without it.
        ///
        /// # Safety
        /// `buf` points to `nbits / 8 + LWC_TAG_BYTES` writable bytes, `ad` to `adlen` readable ones.
        #[cfg(feature = "ad-entry")]
        #[no_mangle]
        pub unsafe extern "C" fn lwc_encrypt_ad(buf: *mut u8, nbits: u32, ad: *const u8, adlen: u32) -> i32 {
            let n = nbits as usize;
            // SAFETY: as in lwc_init.
            let (st, nonce) = unsafe { (&mut *core::ptr::addr_of_mut!(LWC_STATE), &*core::ptr::addr_of!(LWC_NONCE)) };
            let Some(c) = st else { return -1 };
            if n % 8 != 0 {
                return -1;
            }
            let a = unsafe { core::slice::from_raw_parts(ad, adlen as usize) };
            let b = unsafe { core::slice::from_raw_parts_mut(buf, n / 8 + LWC_TAG) };
            let (msg, tag) = b.split_at_mut(n / 8);
            match lwcbench_core::Aead::encrypt(c, nonce, a, msg, tag) {
                Ok(()) => 0,
                Err(_) => -1,
            }
        }
    };
}

/// [`stream_image!`] for a `StreamCipher` type whose all-zero bytes are not known to be a valid
/// value (e.g. the RustCrypto adapters in [`rc`]): the state is an `Option` in `.bss`, built
/// (`Default`) by `lwc_init`. `$key` / `$iv` in bytes.
#[macro_export]
macro_rules! stream_image_default {
    ($ty:ty, $key:expr, $iv:expr) => {
        static mut LWC_STATE: Option<$ty> = None;

        /// Key length in bytes, read by the emulator.
        #[no_mangle]
        #[used]
        pub static LWC_KEY_BYTES: u32 = $key as u32;
        /// IV (nonce) length in bytes, read by the emulator; 0 for a block cipher.
        #[no_mangle]
        #[used]
        pub static LWC_IV_BYTES: u32 = $iv as u32;

        /// # Safety
        /// `key` and `iv` point to `LWC_KEY_BYTES` / `LWC_IV_BYTES` readable bytes.
        #[no_mangle]
        pub unsafe extern "C" fn lwc_init(key: *const u8, iv: *const u8) -> i32 {
            let k = unsafe { core::slice::from_raw_parts(key, $key) };
            let v = unsafe { core::slice::from_raw_parts(iv, $iv) };
            // SAFETY: single-threaded bare metal, no other reference to the state is live.
            let st = unsafe { &mut *core::ptr::addr_of_mut!(LWC_STATE) };
            match lwcbench_core::StreamCipher::init(st.insert(<$ty>::default()), k, v) {
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
            // SAFETY: as in lwc_init.
            let Some(c) = (unsafe { &mut *core::ptr::addr_of_mut!(LWC_STATE) }) else { return -1 };
            match lwcbench_core::StreamCipher::keystream_bits(c, o, n) {
                Ok(()) => 0,
                Err(_) => -1,
            }
        }
    };
}
