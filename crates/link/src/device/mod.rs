//! The sensor side: per-device counters that never repeat a nonce, the simulated fleet, and one
//! device as its own process.
pub mod counter;
pub mod durable;
pub mod fleet;
pub mod process;
