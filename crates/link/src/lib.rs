//! `lwcbench link`: a chosen cipher on a real sensor → broker → gateway → database path,
//! measured end to end and attacked. See docs/link.md.
//!
//! Each module uses only modules listed above it (scripts/ci/import-cycles.py checks for cycles):
//! * [`input`], [`clock`], [`units`] — command-line strings (secrets redacted, control characters
//!   refused, session names), the one clock, latencies in readable units;
//! * [`state_file`] — the bounded reader of the line-oriented state files;
//! * [`wire`] — the versioned binary frame and the nonce rule, which catalogue ciphers protect it
//!   (AEADs as they are, stream ciphers with this project's Poly1305 composition), master key
//!   file and per-device HKDF keys;
//! * [`transport`] — MQTT (embedded broker, clients, the broker URL) and UDP;
//! * [`store`] — storing accepted readings (SQLite or PostgreSQL);
//! * [`device`] — persistent per-device counters (reserve a block durably before use), the
//!   simulated fleet, one device as its own process;
//! * [`gateway`] — checking and opening frames, the per-device replay window, the single gateway,
//!   K workers on an MQTT v5 shared subscription with the replay state in the store, the gateway
//!   as a process;
//! * [`session`] — one measured session: fleet → transport → gateway → store;
//! * [`oscore`] — the same readings as CoAP requests protected with OSCORE (RFC 8613): devices,
//!   a CoAP gateway on UDP with the same store, and its session;
//! * [`industrial`] — industrial messages in their cycle: GOOSE frames on a veth pair, plain and
//!   sealed, and the ICS study's "in the cycle" rows;
//! * [`experiments`] — attack, overload, faults (chaos), network conditions and their sweep;
//! * [`industrial`] — Modbus/TCP through an encrypting proxy pair, its poll cycle timed plain and sealed;
//! * [`results`] — the result files of a session and the radio/battery energy model;
pub mod clock;
pub mod device;
pub mod experiments;
pub mod gateway;
pub mod industrial;
pub mod input;
pub mod oscore;
pub mod results;
pub mod session;
pub mod state_file;
pub mod store;
pub mod transport;
pub mod units;
pub mod wire;
