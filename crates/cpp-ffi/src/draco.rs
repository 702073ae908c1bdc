//! DRACO (provisional reconstruction, shared/specs/draco.md) from `cpp/draco/draco.cpp`,
//! wrapped in [`StreamCipher`]: [`DracoCppRef`] (bit-serial, "cpp-ref") and [`DracoCppFast`]
//! (word-parallel, "cpp-fast"). The C++ state lives inline in the Rust value and is wiped by the
//! C++ `draco_*_wipe` (volatile stores) on drop.
use lwcbench_core::{
    bits, check_len, iv_err, key_err, BitOrder, CipherError, CipherInfo, Family, Language, Origin, StreamCipher,
};

/// Shown wherever DRACO is listed.
pub const NOTE: &str = "DRACO (provisional reconstruction, not interoperable with the published cipher)";

const KEY_BYTES: usize = 16;
const IV_BYTES: usize = 12;
const DRACO_OK: i32 = 0;
const DRACO_ERR_NOT_INITIALIZED: i32 = -1;

/// Metadata shared by both C++ variants (only `implementation` differs).
const INFO: CipherInfo = CipherInfo {
    name: "DRACO",
    implementation: "cpp-ref",
    family: Family::Stream,
    key_bits: 128,
    iv_bits: 96,
    block_bits: 0,
    tag_bits: 0,
    state_bytes: 16,
    origin: Origin::Own,
    language: Language::Cpp,
    bit_order: BitOrder::MsbFirst,
    bit_granular: true,
    note: NOTE,
};

/// The raw C API of `cpp/draco/draco.h`. The state structs are opaque here: Rust only needs
/// their size and alignment, which a test checks against the C++ `sizeof`.
pub mod ffi {
    /// `draco_ref_state`: 95 + 33 + 128 + 1 bytes.
    #[repr(C)]
    pub struct RefState {
        pub(crate) bytes: [u8; 257],
    }
    /// `draco_fast_state`: eight `uint64_t`, two `uint32_t`, two `uint64_t[64]`.
    #[repr(C)]
    pub struct FastState {
        pub(crate) words: [u64; 9 + 128],
    }

    // Each returns DRACO_OK or a DRACO_ERR_* status (cpp/draco/draco.h); key is 16 bytes,
    // iv 12, and out/data hold at least ceil(nbits / 8) bytes.
    extern "C" {
        /// `sizeof(draco_ref_state)`.
        pub fn draco_ref_state_size() -> usize;
        /// `sizeof(draco_fast_state)`.
        pub fn draco_fast_state_size() -> usize;
        /// Initialise the reference state from a key and IV.
        pub fn draco_ref_init(st: *mut RefState, key: *const u8, iv: *const u8) -> i32;
        /// Write the next `nbits` keystream bits of the reference state.
        pub fn draco_ref_keystream_bits(st: *mut RefState, out: *mut u8, nbits: usize) -> i32;
        /// XOR the next `nbits` keystream bits of the reference state into `data`.
        pub fn draco_ref_apply_bits(st: *mut RefState, data: *mut u8, nbits: usize) -> i32;
        /// Zero the reference state.
        pub fn draco_ref_wipe(st: *mut RefState);
        /// Initialise the fast state from a key and IV.
        pub fn draco_fast_init(st: *mut FastState, key: *const u8, iv: *const u8) -> i32;
        /// Write the next `nbits` keystream bits of the fast state.
        pub fn draco_fast_keystream_bits(st: *mut FastState, out: *mut u8, nbits: usize) -> i32;
        /// XOR the next `nbits` keystream bits of the fast state into `data`.
        pub fn draco_fast_apply_bits(st: *mut FastState, data: *mut u8, nbits: usize) -> i32;
        /// Zero the fast state.
        pub fn draco_fast_wipe(st: *mut FastState);
    }
}

fn status(rc: i32) -> Result<(), CipherError> {
    match rc {
        DRACO_OK => Ok(()),
        DRACO_ERR_NOT_INITIALIZED => Err(CipherError::NotInitialized),
        // DRACO_ERR_NULL cannot happen: the wrappers only pass valid pointers.
        other => panic!("draco C++ returned unexpected status {other}"),
    }
}

/// One wrapper type per C++ variant; the two differ only in the functions they call.
macro_rules! draco_cpp {
    ($(#[$doc:meta])* $ty:ident, $state:ident, $zero:expr, $imp:literal,
     $init:ident, $ks:ident, $apply:ident, $wipe:ident) => {
        $(#[$doc])*
        pub struct $ty {
            st: ffi::$state,
        }

        impl $ty {
            /// An instance without key; `init` it before use.
            pub fn new() -> Self {
                $ty { st: $zero }
            }
        }

        impl Default for $ty {
            fn default() -> Self {
                Self::new()
            }
        }

        impl Drop for $ty {
            fn drop(&mut self) {
                // SAFETY: `self.st` is a live, exclusively borrowed state of the size the C++
                // side expects (checked in tests); wipe only writes inside it.
                unsafe { ffi::$wipe(&mut self.st) }
            }
        }

        impl StreamCipher for $ty {
            fn info(&self) -> CipherInfo {
                CipherInfo { implementation: $imp, ..INFO }
            }
            fn init(&mut self, key: &[u8], iv: &[u8]) -> Result<(), CipherError> {
                check_len(key.len(), KEY_BYTES, key_err)?;
                check_len(iv.len(), IV_BYTES, iv_err)?;
                // SAFETY: key and iv have exactly the 16 and 12 bytes the C++ reads; the state
                // is exclusively borrowed.
                status(unsafe { ffi::$init(&mut self.st, key.as_ptr(), iv.as_ptr()) })
            }
            fn keystream_bits(&mut self, out: &mut [u8], nbits: usize) -> Result<(), CipherError> {
                bits::check_room(out, nbits)?;
                // SAFETY: check_room guarantees ceil(nbits/8) writable bytes, all the C++ writes.
                status(unsafe { ffi::$ks(&mut self.st, out.as_mut_ptr(), nbits) })
            }
            fn apply_bits(&mut self, data: &mut [u8], nbits: usize) -> Result<(), CipherError> {
                bits::check_room(data, nbits)?;
                // SAFETY: as for keystream_bits; the C++ reads and writes ceil(nbits/8) bytes.
                status(unsafe { ffi::$apply(&mut self.st, data.as_mut_ptr(), nbits) })
            }
        }
    };
}

draco_cpp!(
    /// Bit-serial C++ reference ("cpp-ref"): one byte per state bit, formulas as on the spec page.
    DracoCppRef, RefState, ffi::RefState { bytes: [0; 257] }, "cpp-ref",
    draco_ref_init, draco_ref_keystream_bits, draco_ref_apply_bits, draco_ref_wipe
);
draco_cpp!(
    /// Word-parallel C++ variant ("cpp-fast"): 64 keystream bits per output-function evaluation.
    DracoCppFast, FastState, ffi::FastState { words: [0; 9 + 128] }, "cpp-fast",
    draco_fast_init, draco_fast_keystream_bits, draco_fast_apply_bits, draco_fast_wipe
);

/// `sizeof` of the C++ states, (ref, fast), for the layout check.
pub fn cpp_state_sizes() -> (usize, usize) {
    // SAFETY: both functions only return a constant.
    unsafe { (ffi::draco_ref_state_size(), ffi::draco_fast_state_size()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_layout_matches_cpp() {
        assert_eq!(cpp_state_sizes(), (core::mem::size_of::<ffi::RefState>(), core::mem::size_of::<ffi::FastState>()));
        assert!(core::mem::align_of::<ffi::FastState>() >= 8);
    }

    #[test]
    fn not_initialized_is_reported() {
        let mut out = [0u8; 2];
        assert_eq!(DracoCppRef::new().keystream_bits(&mut out, 9), Err(CipherError::NotInitialized));
        assert_eq!(DracoCppFast::new().apply_bits(&mut out, 9), Err(CipherError::NotInitialized));
    }
}
