//! Modbus/TCP through an encrypted hop (docs/link.md "Modbus/TCP bump-in-the-wire"): the ADU
//! reader and its bounds, the proxy pair, the built-in master and slave, the measurement.
pub mod adu;
pub mod floor;
pub mod hop;
pub mod measure;
pub mod pair;
pub mod peers;
pub mod proxy;

pub use measure::measure_modbus;

#[cfg(test)]
mod tests;
