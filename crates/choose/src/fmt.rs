//! Numbers, durations and echoed values for people (errors and the text answer).

/// Longest prefix of a bad value an error line echoes (a long value would bury the message).
const SHOWN: usize = 24;

/// At most the first [`SHOWN`] characters of `s` for an error line, control characters escaped.
pub fn prefix(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(SHOWN)
        .map(|c| if c.is_control() { c.escape_unicode().to_string() } else { c.to_string() })
        .collect();
    if s.chars().count() > SHOWN {
        out.push('…');
    }
    out
}

/// A number given as a float option, short: `1e308` rather than its 309 digits.
pub fn shown_num(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-3..1e6).contains(&v.abs()) {
        prefix(&format!("{v:e}"))
    } else {
        prefix(&format!("{v}"))
    }
}

/// `v` for people: whole numbers as such, three decimals from 1 up, six below (so that half of
/// a 1 ms interval does not print as 0).
pub fn num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        let s = if v.abs() < 1.0 { format!("{v:.6}") } else { format!("{v:.3}") };
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// `v` seconds for a message: milliseconds below one second.
pub fn secs(v: f64) -> String {
    if v < 1.0 {
        format!("{} ms", num(v * 1e3))
    } else {
        format!("{} s", num(v))
    }
}

/// `b` bytes: whole KiB as such.
pub fn bytes(b: u64) -> String {
    if b >= 1024 && b.is_multiple_of(1024) {
        format!("{} KiB", b / 1024)
    } else {
        format!("{b} B")
    }
}
