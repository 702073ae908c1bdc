//! One P-256 ECDH on a Cortex-M, in mcu/emulate.py's calling convention: `lwc_init(key, iv)`
//! multiplies the peer's public key (RFC 9529 §3's G_R, a constant) by the 32-byte scalar at
//! `key` (the cost measured), `lwc_keystream(out, nbits)` copies the shared x-coordinate out.
#![no_std]
#![no_main]

use p256::elliptic_curve::sec1::FromEncodedPoint;
use p256::{AffinePoint, EncodedPoint, NonZeroScalar};

/// The scalar's length in bytes, read by the emulator.
#[no_mangle]
#[used]
pub static LWC_KEY_BYTES: u32 = 32;
/// No IV.
#[no_mangle]
#[used]
pub static LWC_IV_BYTES: u32 = 0;

static mut SHARED: [u8; 32] = [0; 32];

// G_R of RFC 9529 Section 3, uncompressed (x from CRED_R, y from the COSE_Key).
const G_R: [u8; 65] = {
    let x = *b"\xbb\xc3\x49\x60\x52\x6e\xa4\xd3\x2e\x94\x0c\xad\x2a\x23\x41\x48\xdd\xc2\x17\x91\xa1\x2a\xfb\xcb\xac\x93\x62\x20\x46\xdd\x44\xf0";
    let y = *b"\x45\x19\xe2\x57\x23\x6b\x2a\x0c\xe2\x02\x3f\x09\x31\xf1\xf3\x86\xca\x7a\xfd\xa6\x4f\xcd\xe0\x10\x8c\x22\x4c\x51\xea\xbf\x60\x72";
    let mut out = [0u8; 65];
    out[0] = 4;
    let mut i = 0;
    while i < 32 {
        out[1 + i] = x[i];
        out[33 + i] = y[i];
        i += 1;
    }
    out
};

/// # Safety
/// `key` points to 32 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn lwc_init(key: *const u8, _iv: *const u8) -> i32 {
    let k = unsafe { core::slice::from_raw_parts(key, 32) };
    let Ok(point) = EncodedPoint::from_bytes(G_R) else { return -1 };
    let Some(public) = Option::<AffinePoint>::from(AffinePoint::from_encoded_point(&point)) else { return -2 };
    let Some(scalar) =
        Option::<NonZeroScalar>::from(NonZeroScalar::from_repr((*<&[u8; 32]>::try_from(k).unwrap_or(&[1; 32])).into()))
    else {
        return -3;
    };
    let shared = p256::ecdh::diffie_hellman(scalar, public);
    unsafe { (*core::ptr::addr_of_mut!(SHARED)).copy_from_slice(shared.raw_secret_bytes()) };
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
