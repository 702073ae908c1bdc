//! The JSON answer (schema [`crate::SCHEMA`], docs/choose.md "JSON").
use crate::report::Report;

/// The report as pretty-printed JSON.
pub fn json(rep: &Report) -> Result<String, String> {
    serde_json::to_string_pretty(rep).map_err(|e| format!("the answer does not serialise: {e}"))
}

/// The report as compact JSON (Python's return value).
pub fn json_compact(rep: &Report) -> Result<String, String> {
    serde_json::to_string(rep).map_err(|e| format!("the answer does not serialise: {e}"))
}
