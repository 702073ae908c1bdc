//! The catalogue entries of the matrix: one per supported, built library × mode × key size.
use lwcbench_core::{Aead, CipherMode};

use super::check;
use super::make::{make_aead, make_mode};
#[cfg(feature = "openssl")]
use super::ossl;
use super::{Kind, Lib, KEY_BITS};
use crate::entry::{Entry, McuImage};

// The registry stores plain `fn()` pointers: one monomorphic function per
// library × mode × key size, with the parameters as const generics.
const fn bits_of(b: usize) -> u16 {
    KEY_BITS[b]
}
fn mk_mode<const L: usize, const K: usize, const B: usize>() -> Box<dyn CipherMode + Send> {
    make_mode(Lib::ALL[L], Kind::from_index(K), bits_of(B)).expect("registered only when supported")
}
fn mk_aead<const L: usize, const K: usize, const B: usize>() -> Box<dyn Aead + Send> {
    make_aead(Lib::ALL[L], Kind::from_index(K), bits_of(B)).expect("registered only when supported")
}
fn verify<const L: usize, const K: usize, const B: usize>(
    e: &Entry,
    ctx: &crate::verify::VerifyCtx,
) -> Vec<crate::verify::Check> {
    check::verify(e, Lib::ALL[L], Kind::from_index(K), bits_of(B), ctx)
}

type Slot =
    (usize, usize, usize, fn() -> Box<dyn CipherMode + Send>, fn() -> Box<dyn Aead + Send>, crate::entry::Verify);

macro_rules! slots_b {
    ($v:ident, $l:literal, $k:literal) => {
        $v.push(($l, $k, 0, mk_mode::<$l, $k, 0>, mk_aead::<$l, $k, 0>, verify::<$l, $k, 0>));
        $v.push(($l, $k, 1, mk_mode::<$l, $k, 1>, mk_aead::<$l, $k, 1>, verify::<$l, $k, 1>));
        $v.push(($l, $k, 2, mk_mode::<$l, $k, 2>, mk_aead::<$l, $k, 2>, verify::<$l, $k, 2>));
    };
}
macro_rules! slots_k {
    ($v:ident, $l:literal) => {
        slots_b!($v, $l, 0);
        slots_b!($v, $l, 1);
        slots_b!($v, $l, 2);
        slots_b!($v, $l, 3);
        slots_b!($v, $l, 4);
        slots_b!($v, $l, 5);
        slots_b!($v, $l, 6);
        slots_b!($v, $l, 7);
        slots_b!($v, $l, 8);
        slots_b!($v, $l, 9);
        slots_b!($v, $l, 10);
    };
}

// One push per (library, kind, key size): the const-generic constructors cannot be built in a loop.
#[allow(clippy::vec_init_then_push)]
fn slots() -> Vec<Slot> {
    let mut v: Vec<Slot> = Vec::with_capacity(132);
    slots_k!(v, 0);
    slots_k!(v, 1);
    slots_k!(v, 2);
    slots_k!(v, 3);
    v
}

/// Register every supported, built library × mode × key size.
pub fn register(r: &mut Vec<Entry>) {
    for (l, k, b, m, a, v) in slots() {
        let (lib, kind) = (Lib::ALL[l], Kind::from_index(k));
        if !lib.built() || !lib.supports(kind) {
            continue;
        }
        let e = if kind.is_aead() { Entry::aead(a, v) } else { Entry::mode(m, v) };
        r.push(match mcu_image(lib, kind, bits_of(b)) {
            Some(im) => e.with_mcu(im),
            None => e,
        });
    }
    super::ccm_star::register(r);
    #[cfg(feature = "openssl")]
    r.push(Entry::aead(|| Box::new(ossl::OsslChaCha::new()), ossl::verify_chacha));
}

/// The microcontroller image of a matrix entry: RustCrypto's AES-128-CCM and AES-128-GCM, the
/// AEADs products certify with (SP 800-38C/D); the crates are `no_std`, so the same code runs on
/// the boards (the fixsliced software AES: these cores have no AES instructions).
fn mcu_image(lib: Lib, kind: Kind, bits: u16) -> Option<McuImage> {
    match (lib, kind, bits) {
        (Lib::RustCrypto, Kind::Ccm, 128) => Some(McuImage::new(
            "rc_aes128_ccm",
            "lwc_mcu_images::rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U16, ccm::consts::U12>>",
        )),
        (Lib::RustCrypto, Kind::Gcm, 128) => {
            Some(McuImage::new("rc_aes128_gcm", "lwc_mcu_images::rc::RcAead6<aes_gcm::Aes128Gcm>"))
        }
        _ => None,
    }
}

/// One line per library that is not built, for `lwcbench list` / `verify`.
pub fn missing_libraries() -> Vec<&'static str> {
    Lib::ALL.into_iter().filter_map(|l| l.status().err()).collect()
}
