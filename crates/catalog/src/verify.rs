//! What `lwcbench verify` runs and how results are reported.
use std::path::PathBuf;

/// Result of one group of known-answer tests (one vector file, one transcribed set, one
/// cross-check).
#[derive(Clone, Debug)]
pub struct Check {
    /// "cipher/implementation".
    pub id: String,
    /// What was checked: file name or "transcribed: RFC 8439 §2.4.2" etc.
    pub what: String,
    /// Vectors and checks that passed.
    pub passed: usize,
    /// One line per failed vector (or a file-format error).
    pub failures: Vec<String>,
    /// True if the check could not run because the shared vector folder is absent.
    pub skipped: bool,
}

impl Check {
    /// A check with nothing recorded yet.
    pub fn new(id: impl Into<String>, what: impl Into<String>) -> Self {
        Check { id: id.into(), what: what.into(), passed: 0, failures: Vec::new(), skipped: false }
    }
    /// A check that could not run because the shared vector folder is absent.
    pub fn skipped(id: impl Into<String>, what: impl Into<String>) -> Self {
        Check { skipped: true, ..Check::new(id, what) }
    }
    /// Record one comparison.
    pub fn expect_eq(&mut self, label: impl std::fmt::Display, got: &[u8], want: &[u8]) {
        if got == want {
            self.passed += 1;
        } else {
            let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
            self.failures.push(format!(
                "{label}: first difference at byte {first} of {} (want {}): got {}… want {}…",
                got.len(),
                want.len(),
                hex::encode(&got[first.min(got.len())..(first + 16).min(got.len())]),
                hex::encode(&want[first.min(want.len())..(first + 16).min(want.len())])
            ));
        }
    }
    /// Record one boolean outcome.
    pub fn expect(&mut self, label: impl std::fmt::Display, ok: bool) {
        if ok {
            self.passed += 1
        } else {
            self.failures.push(label.to_string())
        }
    }
    /// Record one failure.
    pub fn fail(&mut self, msg: impl Into<String>) {
        self.failures.push(msg.into());
    }
    /// No failure, and something passed (or the check was skipped).
    pub fn ok(&self) -> bool {
        self.failures.is_empty() && (self.passed > 0 || self.skipped)
    }
}

/// Where verification finds the shared official vectors.
#[derive(Clone, Debug, Default)]
pub struct VerifyCtx {
    /// The `shared/vectors` folder, if present.
    pub vectors: Option<PathBuf>,
    /// Bigger cross-checks (more random keys) when true.
    pub thorough: bool,
}

impl VerifyCtx {
    /// Look for the vectors in `$LWCBENCH_VECTORS`, then `../shared/vectors` from the
    /// current directory and beside the lwcbench tree found at run time ([`crate::paths`]).
    pub fn discover() -> Self {
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(p) = std::env::var_os("LWCBENCH_VECTORS") {
            candidates.push(PathBuf::from(p));
        }
        if let Ok(cwd) = std::env::current_dir() {
            for anc in cwd.ancestors().take(4) {
                candidates.push(anc.join("../shared/vectors"));
                candidates.push(anc.join("shared/vectors"));
            }
        }
        // a checkout's neighbour, as the current directory's above
        candidates.extend(crate::paths::roots().into_iter().map(|r| r.join("../shared/vectors")));
        let vectors = candidates.into_iter().find(|p| p.join("README.md").is_file());
        VerifyCtx { vectors: vectors.map(|p| p.canonicalize().unwrap_or(p)), thorough: false }
    }
    /// Path of a shared vector file, or None if the folder is absent. A missing *file*
    /// inside a present folder is an error the caller must report, not a skip.
    pub fn file(&self, rel: &str) -> Option<PathBuf> {
        self.vectors.as_ref().map(|d| d.join(rel))
    }
}
