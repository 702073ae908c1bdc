//! Strings from the command line as the link checks and shows them: secrets in store and broker
//! strings redacted wherever they are printed or written, control characters refused, Markdown
//! escaped, one rule for session names, and the offered rate bounded like `--interval`.
use std::time::Duration;

/// Longest time between two readings of one device (`--interval`, `--rate`, `--rates`).
pub const MAX_INTERVAL_S: f64 = 86_400.0;
/// Highest offered rate over all devices (`--rate`, `--rates`).
pub const MAX_RATE: f64 = 10_000_000.0;

const HIDDEN: &str = "***";

/// `s` with every password hidden: the password of a URL's userinfo (`scheme://user:PASSWORD@host`,
/// up to the last `@` before the query, so a password holding `@` is hidden whole) and the value
/// of every `...password=VALUE` keyword, as a URL query parameter or in libpq's keyword/value form
/// (`password='se cret'` included).
pub fn redact(s: &str) -> String {
    redact_keywords(&redact_userinfo(s))
}

fn redact_userinfo(s: &str) -> String {
    let Some(scheme_end) = s.find("://") else { return s.to_string() };
    let auth_start = scheme_end + 3;
    let rest = &s[auth_start..];
    let before_query = rest.find(['?', '#']).map_or(rest, |q| &rest[..q]);
    let Some(at) = before_query.rfind('@') else { return s.to_string() };
    let userinfo = &rest[..at];
    match userinfo.find(':') {
        Some(colon) => format!("{}{}:{HIDDEN}{}", &s[..auth_start], &userinfo[..colon], &rest[at..]),
        None => s.to_string(),
    }
}

fn redact_keywords(s: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(found) = lower[i..].find("password") {
        let key_end = i + found + "password".len();
        let mut j = key_end;
        while s[j..].starts_with([' ', '\t']) {
            j += 1;
        }
        if !s[j..].starts_with('=') {
            out.push_str(&s[i..key_end]);
            i = key_end;
            continue;
        }
        j += 1;
        while s[j..].starts_with([' ', '\t']) {
            j += 1;
        }
        out.push_str(&s[i..j]);
        out.push_str(HIDDEN);
        // The value: quoted (backslash escapes, as libpq), or up to '&' or white space.
        let bytes = s.as_bytes();
        if bytes.get(j) == Some(&b'\'') {
            j += 1;
            while j < bytes.len() && bytes[j] != b'\'' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            j = (j + 1).min(bytes.len());
        } else {
            while j < bytes.len() && !matches!(bytes[j], b'&' | b' ' | b'\t' | b'\n' | b'\r') {
                j += 1;
            }
        }
        // (j may stop inside a multi-byte character only after a backslash; step to a boundary)
        while !s.is_char_boundary(j) {
            j += 1;
        }
        i = j;
    }
    out.push_str(&s[i..]);
    out
}

/// Refuse control characters (a newline, an escape sequence) in the option `opt`: the value
/// ends up in result files and on the terminal.
pub fn no_control(opt: &str, s: &str) -> Result<(), String> {
    match s.chars().find(|c| c.is_control()) {
        Some(c) => Err(format!("{opt}: '{}' holds the control character {:?}", shown(s), c)),
        None => Ok(()),
    }
}

/// `s` for an error line: redacted, control characters as `\u{..}` escapes.
pub fn shown(s: &str) -> String {
    redact(s).chars().map(|c| if c.is_control() { c.escape_unicode().to_string() } else { c.to_string() }).collect()
}

/// `s` as literal Markdown text: a code span (nothing inside is a heading, table, link or
/// HTML), control characters as spaces and backticks, which would end the span, as `'`.
pub fn md(s: &str) -> String {
    let inner: String = s
        .chars()
        .map(|c| {
            if c.is_control() {
                ' '
            } else if c == '`' {
                '\''
            } else {
                c
            }
        })
        .collect();
    format!("`{inner}`")
}

/// Longest session name (it is part of MQTT topics and client ids).
pub const MAX_SESSION: usize = 64;

/// The one rule for session names (`--session` of `link device`, `link gateway` and every
/// session the tool makes): 1 to 64 of `A-Z a-z 0-9 - _`. Anything else could name no topic a
/// gateway subscribes to (`''`, `a/b`, `../x`) or a wildcard (`#`, `+`).
pub fn check_session(s: &str) -> Result<(), String> {
    if s.is_empty() || s.len() > MAX_SESSION || !s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(format!("--session: '{}' is not a session name (1 to {MAX_SESSION} of A-Z a-z 0-9 - _)", shown(s)));
    }
    Ok(())
}

/// The time between two readings of one device when `devices` share `rate` readings/s; the
/// same bound as `--interval` (at most 24 h), so every rate gives a valid schedule.
pub fn interval_for_rate(opt: &str, rate: f64, devices: u32) -> Result<Duration, String> {
    let devices = devices.max(1) as f64;
    let min = devices / MAX_INTERVAL_S;
    if !(rate.is_finite() && rate >= min && rate <= MAX_RATE) {
        return Err(format!(
            "{opt}: {rate} readings/s is not in [{min}, {MAX_RATE}] for {devices} devices (one reading per device \
             at least every 24 h)"
        ));
    }
    Ok(Duration::from_secs_f64(devices / rate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden_in_every_form() {
        // Expected strings written by hand from RFC 3986 userinfo and libpq's keyword/value syntax.
        let cases = [
            ("postgres://u:hunter2@h:5432/db", "postgres://u:***@h:5432/db"),
            ("postgres://u:p@ss@h/db", "postgres://u:***@h/db"),
            ("postgres://h/db?user=u&password=hunter2", "postgres://h/db?user=u&password=***"),
            ("postgres://h/db?password=hunter2&user=u", "postgres://h/db?password=***&user=u"),
            ("postgresql://u@h/db?PASSWORD=x", "postgresql://u@h/db?PASSWORD=***"),
            ("host=h user=u password=hunter2 dbname=d", "host=h user=u password=*** dbname=d"),
            ("host=h password = 'hun ter\\'2' dbname=d", "host=h password = *** dbname=d"),
            ("sslpassword=k host=h", "sslpassword=*** host=h"),
            ("mqtt://u:secret@broker:1883", "mqtt://u:***@broker:1883"),
            ("postgres://u@h/db", "postgres://u@h/db"),
            ("/var/lib/link.db", "/var/lib/link.db"),
            ("passwords.db", "passwords.db"),
        ];
        for (given, want) in cases {
            assert_eq!(redact(given), want, "{given}");
            assert!(!redact(given).contains("hunter2") && !redact(given).contains("ss@h"));
        }
    }

    #[test]
    fn session_names() {
        for ok in ["a", "0123abcdef01-32", "x_y-Z", &"s".repeat(64)] {
            assert!(check_session(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a/b", "../../etc", "#", "+", "a b", "é", "a\nb", &"s".repeat(65)] {
            let e = check_session(bad).unwrap_err();
            assert!(e.starts_with("--session: '") && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn rates_are_bounded_like_the_interval() {
        // 8 devices: at least 8 / 86,400 readings/s (one per device a day).
        assert!(interval_for_rate("--rate", 1e-300, 8).is_err());
        assert!(interval_for_rate("--rate", 1e-12, 8).is_err());
        assert!(interval_for_rate("--rate", 8.0 / 86_400.0 * 0.99, 8).is_err());
        assert_eq!(interval_for_rate("--rate", 8.0 / 86_400.0, 8).unwrap(), Duration::from_secs(86_400));
        assert_eq!(interval_for_rate("--rate", 800.0, 8).unwrap(), Duration::from_millis(10));
        for bad in [f64::NAN, f64::INFINITY, 0.0, -1.0, 1e7 + 1.0] {
            assert!(interval_for_rate("--rate", bad, 8).is_err(), "{bad}");
        }
    }

    #[test]
    fn markdown_and_control_characters() {
        assert_eq!(md("a\n## H|<b>`x"), "`a ## H|<b>'x`");
        assert!(no_control("--store", "x\ny").unwrap_err().contains("--store: 'x\\u{a}y'"));
        assert!(no_control("--store", "postgres://u:pw@h\n/db").unwrap_err().contains("u:***@"));
        assert!(no_control("--store", "/tmp/ok.db").is_ok());
    }
}
