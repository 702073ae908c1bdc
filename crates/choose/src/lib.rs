//! `lwcbench choose`: from a board, a radio and a requirement to a ranked, explained answer and
//! the `lwcbench link` command that deploys it (docs/choose.md).
//!
//! Hard filters come first (status, superseded, claimed security, constant time, integrity, tag,
//! an image on the board, flash, RAM, counter space, schedule), each with its reason; the
//! survivors are scored on the board's figures with the user's weights (flash and RAM only
//! against a budget), and candidates whose score intervals overlap under the error model are
//! ties. Every figure comes from a data file through lwcbench-data; the link's frame facts come
//! from [`link_facts`], which the link crate's tests keep equal to its own. [`Options`] holds
//! the request as strings: the CLI and the Python API resolve it the same way.
//!
//! * [`options`] — the request, checked;
//! * [`data`] — the tables and the candidates' catalogue facts;
//! * [`engines`] — the board's on-chip crypto engines and emulated NIST LWC builds as candidates;
//! * [`figures`] — a candidate's figures on the board ([`priced`]: the crypto per message);
//! * [`filter`] — the typed hard filters and each candidate's verdict;
//! * [`score`], [`ties`] — the weighted score and the tie rule;
//! * [`evaluate`] — one request through them;
//! * [`robust`] — one-step changes;
//! * [`explain`] — the term that dominates the energy; [`fold`] — one row per construction, one
//!   line for the host-only builds;
//! * [`handover`] — the firmware build and the link command;
//! * [`oscore`] — OSCORE as a framing (`--framing`), its AEADs and EDHOC's one-time cost;
//! * [`carrier`] — what the radio's carrier already protects (data/carrier-security.csv);
//! * [`report`] — the typed answer and [`choose`];
//! * [`render`] — text, JSON and HTML over the answer;
//! * [`out`] — `--out DIR` as one unit;
//! * [`userdata`] — `--boards FILE`, `--radios FILE`.
pub mod carrier;
pub mod data;
pub mod engines;
pub mod evaluate;
pub mod explain;
pub mod figures;
pub mod filter;
pub mod fmt;
pub mod fold;
pub mod handover;
pub mod link_facts;
pub mod options;
pub mod oscore;
pub mod out;
pub mod priced;
pub mod render;
pub mod report;
pub mod robust;
pub mod score;
pub mod ties;
pub mod userdata;

pub use options::{Options, Request, Require, Weights};
pub use out::{check_out, write_out, OUT_FILES};
pub use report::{choose, Report, SCHEMA};
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_explain;
#[cfg(test)]
mod tests_oscore;
