//! The sensor side: per-device counters that never repeat a nonce, the simulated fleet, and one
//! device as its own process with its capture file.
pub mod capture;
pub mod counter;
pub mod fleet;
pub mod process;
