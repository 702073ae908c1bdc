//! Hex text in vector files.

/// Decode hex that may contain spaces; error names the offending text.
pub fn unhex(s: &str) -> Result<Vec<u8>, String> {
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    hex::decode(&clean).map_err(|e| format!("bad hex {:?}: {e}", truncate(&clean, 40)))
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}
