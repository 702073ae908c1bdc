//! A candidate's crypto per message as priced on the board: the one shape the image, engine
//! and NIST LWC pricers return (a leaf, so `figures` and `engines` both use it).

/// One candidate's crypto per message as priced on the board: its cycles, energy and time, the
/// relative error band, flash, RAM, the tag it sends and the sources of those figures.
pub struct Priced {
    /// Cycles at the board's clock.
    pub cycles: f64,
    /// Joules per message.
    pub crypto_j: f64,
    /// Seconds per message.
    pub crypto_s: f64,
    /// Relative error band (0.129 = ±12.9 %).
    pub error: f64,
    /// Flash bytes.
    pub flash: u64,
    /// RAM bytes.
    pub ram: u64,
    /// Tag bytes on the frame.
    pub tag: usize,
    /// Where the crypto figure comes from.
    pub source: String,
    /// Where flash and RAM come from.
    pub flash_ram_source: String,
}
