//! A running engine's state.
use std::collections::BTreeMap;
use std::io::Write;
use std::process::Child;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::protocol::{Hello, Offer};

/// A running engine: the process (if any), its lines, and what it said about itself.
pub struct Engine {
    /// The name given on the command line (built-in name or command).
    pub spec: String,
    /// What it said in `hello`.
    pub hello: Hello,
    /// The ciphers it offers.
    pub offers: Vec<Offer>,
    pub(super) writer: Option<Box<dyn Write + Send>>,
    pub(super) lines: Receiver<Result<String, String>>,
    pub(super) child: Option<Child>,
    pub(super) stderr_tail: Arc<Mutex<String>>,
    pub(super) broken: Option<String>,
    pub(super) timeout: Duration,
    /// End of the current answer's time budget (the whole `list`), if any.
    pub(super) deadline: Option<Instant>,
    /// Ciphers whose output was checked before timing: name → the one-line failure, if any.
    pub(super) checked: BTreeMap<String, Option<String>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Engine({}, {} ciphers)", self.spec, self.offers.len())
    }
}
