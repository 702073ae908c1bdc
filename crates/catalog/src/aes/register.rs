//! The catalogue entries of the matrix: one per supported, built library × mode × key size.
use lwcbench_core::{Aead, CipherMode};

use super::check;
use super::make::{make_aead, make_mode};
#[cfg(feature = "openssl")]
use super::ossl;
use super::{Kind, Lib, KEY_BITS};
use crate::entry::Entry;

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
        let _ = b;
        r.push(if kind.is_aead() { Entry::aead(a, v) } else { Entry::mode(m, v) });
    }
    #[cfg(feature = "openssl")]
    r.push(Entry::aead(|| Box::new(ossl::OsslChaCha::new()), ossl::verify_chacha));
}

/// One line per library that is not built, for `lwcbench list` / `verify`.
pub fn missing_libraries() -> Vec<&'static str> {
    Lib::ALL.into_iter().filter_map(|l| l.status().err()).collect()
}
