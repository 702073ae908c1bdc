//! The sensor side: per-device counters that never repeat a nonce, the simulated fleet, one
//! device as its own process, and the camera that sends video frames.
pub mod camera;
pub mod counter;
pub mod durable;
pub mod fleet;
pub mod process;
