//! Text from outside (logs, files, engines) on its way to a terminal: one line, bounded.

/// `s` as one terminal line of at most `max` characters: control characters (newlines,
/// carriage returns, escape sequences) escaped, the rest cut with a note of the full length.
pub fn one_line(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut shown = 0usize;
    for c in s.chars() {
        if shown >= max {
            out.push_str(&format!("… ({} characters in all)", s.chars().count()));
            break;
        }
        if c.is_control() {
            let e: String = c.escape_default().collect();
            shown += e.chars().count();
            out.push_str(&e);
        } else {
            out.push(c);
            shown += 1;
        }
    }
    out
}

/// Human-friendly duration: picks ns/µs/ms.
pub fn fmt_ns(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.1} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_and_cuts() {
        assert_eq!(super::one_line("a\nb\r\u{1b}[2J", 100), "a\\nb\\r\\u{1b}[2J");
        assert_eq!(super::one_line("abcdef", 3), "abc… (6 characters in all)");
        assert_eq!(super::one_line("é°", 5), "é°");
    }
}
