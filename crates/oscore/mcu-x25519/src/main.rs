//! One X25519 ECDH on a Cortex-M, in mcu/emulate.py's calling convention: `lwc_init(key, iv)`
//! multiplies the peer's public key (RFC 7748 §6.1's Bob's, a constant) by the 32-byte scalar
//! at `key` (the cost measured), `lwc_keystream(out, nbits)` copies the shared secret out.
#![no_std]
#![no_main]

/// The scalar's length in bytes, read by the emulator.
#[no_mangle]
#[used]
pub static LWC_KEY_BYTES: u32 = 32;
/// No IV.
#[no_mangle]
#[used]
pub static LWC_IV_BYTES: u32 = 0;

static mut SHARED: [u8; 32] = [0; 32];

// Bob's public key of RFC 7748 Section 6.1.
const BOB: [u8; 32] = *b"\xde\x9e\xdb\x7d\x7b\x7d\xc1\xb4\xd3\x5b\x61\xc2\xec\xe4\x35\x37\x3f\x83\x43\xc8\x5b\x78\x67\x4d\xad\xfc\x7e\x14\x6f\x88\x2b\x4f";

/// # Safety
/// `key` points to 32 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn lwc_init(key: *const u8, _iv: *const u8) -> i32 {
    let k = unsafe { core::slice::from_raw_parts(key, 32) };
    let Ok(k) = <[u8; 32]>::try_from(k) else { return -1 };
    let shared = x25519_dalek::StaticSecret::from(k).diffie_hellman(&x25519_dalek::PublicKey::from(BOB));
    unsafe { (*core::ptr::addr_of_mut!(SHARED)).copy_from_slice(shared.as_bytes()) };
    0
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

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
