//! Industrial protocols inside their cycle: real peers talk through an encrypted hop, and the
//! cycle is timed with and without the cipher over the same path.
pub mod modbus;

/// One protocol cycle measured with and without the cipher over the same path.
#[derive(Clone, Debug)]
pub struct CycleMeasurement {
    /// "Modbus/TCP" or "GOOSE".
    pub protocol: &'static str,
    /// e.g. "read 10 holding registers (function 3): 12 B request, 29 B response".
    pub message: String,
    /// Plain message size on the wire (ADU / frame), the ICS study's size it stands for.
    pub bytes: usize,
    /// The catalogue name of the cipher.
    pub cipher: String,
    /// Per-cycle latency without encryption (ns).
    pub plain_ns: Vec<u64>,
    /// Per-cycle latency with encryption (ns).
    pub sealed_ns: Vec<u64>,
    /// e.g. "loopback TCP via two proxies".
    pub path: String,
}
