//! `lwcbench link`: a chosen cipher on a real sensor → broker → gateway → database path,
//! measured end to end and attacked. See docs/link.md.
//!
//! * [`frame`] — the versioned binary frame and the nonce rule;
//! * [`suite`] — which catalogue ciphers protect it (AEADs as they are, stream ciphers with this
//!   project's Poly1305 composition);
//! * [`keys`] — master key file and per-device HKDF keys;
//! * [`counter`] — persistent per-device counters (reserve a block durably before use);
//! * [`replay`] — the per-device sliding replay window;
//! * [`gateway`], [`store`] — checking, opening and storing (SQLite or PostgreSQL);
//! * [`broker`], [`run`] — the embedded MQTT broker, transports, devices and the measured session;
//! * [`gateway_proc`], [`chaos`], [`overload`] — the gateway as a process, faults, overload;
//! * [`input`] — command-line strings: secrets redacted, control characters refused, session names;
//! * [`workers`] — K gateway workers on an MQTT v5 shared subscription, replay state in the store;
//! * [`choose`] — `lwcbench choose`: filters, ranking with ties, robustness and the deploy command;
//! * [`netcond`], [`sweep`] — the same path across network namespaces under network conditions.
pub mod attack;
pub mod broker;
pub mod chaos;
pub mod choose;
pub mod counter;
pub mod energy;
pub mod frame;
pub mod gateway;
pub mod gateway_proc;
pub mod input;
pub mod keys;
pub mod netcond;
pub mod overload;
pub mod replay;
pub mod results;
pub mod run;
pub mod store;
pub mod suite;
pub mod sweep;
pub mod workers;
