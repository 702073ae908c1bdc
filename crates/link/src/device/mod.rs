//! The sensor side: per-device counters that never repeat a nonce, provisioning of a device's
//! own key, the simulated fleet, one device as its own process with its capture file, and the
//! camera that sends video frames.
pub mod camera;
pub mod capture;
pub mod counter;
pub mod fleet;
pub mod process;
pub mod provision;
