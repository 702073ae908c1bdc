//! DRACO stream cipher (provisional reconstruction, not interoperable with the published
//! cipher), as defined in `shared/specs/draco.md`.
//!
//! * [`provisional`] — every provisional choice (P1 selection, P2 initialization, P3 bit order);
//! * [`reference::DracoRef`] — bit-serial reference, the oracle ("rust-ref");
//! * [`DracoFast`] — word-parallel single stream, 64 clocks per step ("rust-fast"); on
//!   32-bit targets it is [`fast32::DracoFast32`] (32-bit words, 32 clocks per step);
//! * [`bitsliced::MultiDraco`] — bit-sliced multi-stream (portable u64, AVX2, AVX-512);
//! * [`composition`] — this project's integrity composition (one-time Poly1305 key from the
//!   keystream, RFC 8439 layout) and the single-stream seal/open on [`DracoFast`];
//! * [`batch`] (feature `alloc`, default) — gateway-side batch opening of many devices'
//!   messages at once on [`bitsliced::MultiDraco`];
//! * [`checksum`] — SHA-256 over many (key, IV, length) keystreams, stored as [`checksum::CHECKSUM_HEX`].
#![no_std]
#![deny(unsafe_code)] // allowed only in `bitsliced` (SIMD)

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(test)]
extern crate std;

#[cfg(feature = "alloc")]
pub mod batch;
pub mod bitsliced;
pub mod boolfn;
pub mod checksum;
pub mod composition;
pub mod fast;
pub mod fast32;
pub mod provisional;
pub mod reference;

#[cfg(not(target_pointer_width = "32"))]
pub use fast::DracoFast;
// No native 64-bit shifts on these cores: the u32 formulation avoids runtime helper calls.
#[cfg(target_pointer_width = "32")]
pub use fast32::DracoFast32 as DracoFast;
pub use reference::DracoRef;
