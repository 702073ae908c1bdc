//! The receiving side: frame checks, the replay window, scale-out workers and the gateway process.
pub mod checks;
pub mod process;
pub mod replay;
pub mod workers;
