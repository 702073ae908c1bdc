//! The sensor side: per-device counters that never repeat a nonce.
pub mod counter;
