//! Limits and constants of the engine protocol.
use std::time::Duration;

/// Protocol version this host speaks.
pub const PROTOCOL: u32 = 1;
/// Longest line in either direction, newline included.
pub const MAX_LINE: usize = 65536;
/// Longest piece of engine-provided text quoted in an error or a run.json note.
pub const MAX_QUOTE: usize = 500;
/// Most `cipher` lines a `list` answer may have: a `list` that never ends is refused.
pub const MAX_OFFERS: usize = 10_000;
/// Longest a whole `list` answer may take, whatever the per-line deadline.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest per-operation time an engine may report (1000 s); larger is not a measurement.
pub const MAX_NS: f64 = 1e12;
/// Built-in engines, by name.
pub const BUILTIN: [&str; 1] = ["pycryptodome"];
