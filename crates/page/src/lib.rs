//! The page and chart kit of every HTML output of lwcbench: one escaping function ([`esc`]),
//! one page skeleton ([`page`]), one style sheet ([`STYLE`]), one palette ([`PALETTE`]) and the
//! inline SVG charts (box plots, bars with confidence intervals, grouped horizontal bars, radar,
//! line chart, Pareto scatter). Pages have no script and load nothing: everything is inline.
//!
//! # Escaping contexts
//!
//! Everything that does not come from this crate's own constants (a file, a CLI argument, a
//! broker message, a cipher name) goes through [`esc`] before it is written into a page.
//! [`esc`] makes a string safe in these contexts, and the kit writes untrusted text only there:
//!
//! - element text content in HTML and SVG (including `<title>`, `<textarea>`, `<option>`);
//! - attribute values in double quotes (`title="…"`) or in single quotes (`title='…'`);
//! - the same in a standalone SVG file read as XML: characters XML 1.0 forbids (C0 control
//!   characters other than tab, line feed and carriage return, U+FFFE, U+FFFF) are replaced by
//!   U+FFFD, so the file stays well formed.
//!
//! It is NOT enough for: unquoted attribute values (the kit always quotes), URL-valued
//! attributes (`href`, `src`: a `javascript:` scheme passes escaping; fragment links are built
//! from [`slug`], whose output is only `[a-z0-9-]`), event-handler attributes (`on…`), the
//! contents of `<script>` and `<style>`, and comments. The kit writes no untrusted text into
//! any of these.
mod axis;
mod charts;
mod line;
mod pareto;

pub use axis::tick_label;
pub use charts::{bars_ci, boxplot, hbars, radar, BoxStats};
pub use line::{line_chart, Line};
pub use pareto::{pareto, place_labels, Rect};

/// Okabe & Ito (2008) colour-blind-safe palette, black last: the one set of series colours of
/// every chart and page.
pub const PALETTE: [&str; 8] = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000"];

/// Background tint of a table row whose verdict is good (e.g. "B faster"): a light green.
pub const TINT_GOOD: &str = "#d8f0e4";
/// Background tint of a table row whose verdict is bad (e.g. "B slower"): a light orange.
pub const TINT_BAD: &str = "#fbe0d0";

/// The colour of series `i` (the palette repeats after eight series).
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// The style sheet of every page (headings and links in the palette's blue, notes in its
/// orange).
pub const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#222}\
h1{margin-bottom:.2rem}h2{border-bottom:2px solid #0072B2;padding-bottom:.2rem;margin-top:2.5rem}\
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:right}\
th{background:#f0f4f8}td.l,th.l{text-align:left}.fig{overflow-x:auto;margin:1rem 0}.note{background:#fff7e0;border-left:4px solid #E69F00;padding:.5rem 1rem}\
figcaption{font-size:.9rem;color:#444;margin:.3rem 0}details{margin:.5rem 0 1.5rem}summary{cursor:pointer;color:#0072B2}";

/// Escape text for HTML and SVG text content and quoted attribute values (see the crate docs
/// for the contexts this is and is not enough for): `&` `<` `>` `"` `'` become character
/// references, and characters XML forbids (see above) become U+FFFD.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            // XML 1.0 forbids these outright: one would make a standalone SVG file unreadable
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// An `id` attribute value or `#fragment` link target from any text: ASCII letters and digits
/// lower-cased, every other character `-`. Safe unescaped in any attribute, quoted or not.
pub fn slug(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}

/// The one page skeleton: doctype, UTF-8, viewport, `<title>` (`title` is plain text and is
/// escaped here), the kit's [`STYLE`], then `head_extra` and `body` as given (markup the caller
/// built, every untrusted piece already through [`esc`]).
pub fn page(title: &str, head_extra: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>{}</title><style>{STYLE}</style>{head_extra}</head><body>{body}</body></html>",
        esc(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected outputs below are written by hand, character by character.

    #[test]
    fn hostile_text_is_inert_in_text_content() {
        assert_eq!(
            esc("</title><script>alert('x')</script>&amp;"),
            "&lt;/title&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;"
        );
        assert_eq!(esc("plain µs ±"), "plain µs ±");
    }

    #[test]
    fn hostile_text_cannot_leave_a_quoted_attribute() {
        let dq = format!("<a title=\"{}\">", esc("x\" onmouseover=\"alert(1)"));
        assert_eq!(dq, "<a title=\"x&quot; onmouseover=&quot;alert(1)\">");
        let sq = format!("<a title='{}'>", esc("x' onmouseover='alert(1)"));
        assert_eq!(sq, "<a title='x&#39; onmouseover=&#39;alert(1)'>");
        // a character reference typed by the attacker stays text, not a quote
        assert_eq!(esc("&quot;"), "&amp;quot;");
    }

    #[test]
    fn characters_xml_forbids_become_the_replacement_character() {
        assert_eq!(esc("a\u{0}b\u{1}c\u{1b}d\u{FFFE}e\u{FFFF}"), "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e\u{FFFD}");
        // the whitespace XML allows is kept
        assert_eq!(esc("a\tb\nc\rd"), "a\tb\nc\rd");
    }

    #[test]
    fn slug_is_only_lowercase_alphanumerics_and_dashes() {
        assert_eq!(slug("AES-128/GCM \"x\"<y>'"), "aes-128-gcm--x--y--");
        assert_eq!(slug("javascript:alert(1)"), "javascript-alert-1-");
    }

    #[test]
    fn page_escapes_its_title_and_keeps_the_rest() {
        let p = page("r — </title><script>", "<meta name=\"x\">", "<p>b</p>");
        assert!(p.starts_with("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"), "{p}");
        assert!(p.contains("<title>r — &lt;/title&gt;&lt;script&gt;</title>"), "{p}");
        assert!(p.ends_with("<meta name=\"x\"></head><body><p>b</p></body></html>"), "{p}");
        assert_eq!(p.matches("<style>").count(), 1);
    }
}
