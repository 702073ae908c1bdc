//! The page of an `lwcbench link` directory (run.json with `"kind": "link"`): the run's
//! settings, an end-to-end latency chart per cipher from `link_summary.csv`, and the sections
//! of its `summary.md` (summary, energy, attack tally, and whatever later link tables add)
//! rendered as HTML — one source for the Markdown and the HTML tables.
use std::fmt::Write as _;
use std::path::Path;

use crate::mcu::md_to_html;
use lwcbench_engine::html::{color, esc};

/// True when `dir/run.json` was written by `lwcbench link`.
pub fn is_link_dir(dir: &Path) -> bool {
    crate::mcu::run_kind(dir).as_deref() == Some("link")
}

/// Latency percentiles of one cipher, in µs, from `link_summary.csv`.
#[derive(Debug, PartialEq)]
struct Lat {
    cipher: String,
    p50: f64,
    p90: f64,
    p99: f64,
}

/// Rows of `link_summary.csv` with finite, non-negative percentiles (the file is not trusted:
/// other rows are left out of the chart; the table below still shows them as written).
fn latencies(csv_text: &str) -> Vec<Lat> {
    let mut r = csv::ReaderBuilder::new().flexible(true).from_reader(csv_text.as_bytes());
    let Ok(h) = r.headers().cloned() else { return vec![] };
    let col = |n: &str| h.iter().position(|x| x == n);
    let (Some(c), Some(a), Some(b), Some(d)) = (col("cipher"), col("e2e_p50_us"), col("e2e_p90_us"), col("e2e_p99_us"))
    else {
        return vec![];
    };
    let num = |rec: &csv::StringRecord, i: usize| {
        rec.get(i).and_then(|s| s.parse::<f64>().ok()).filter(|v| v.is_finite() && *v >= 0.0)
    };
    r.records()
        .filter_map(Result::ok)
        .take(64)
        .filter_map(|rec| {
            Some(Lat { cipher: rec.get(c)?.to_string(), p50: num(&rec, a)?, p90: num(&rec, b)?, p99: num(&rec, d)? })
        })
        .collect()
}

/// Horizontal bars: p50, p90, p99 of the end-to-end latency per cipher (linear µs axis).
fn latency_svg(rows: &[Lat]) -> String {
    let row_h = 3.0 * 12.0 + 14.0;
    let (left, right, top) = (230.0, 90.0, 30.0);
    let w = 760.0;
    let h = top + rows.len() as f64 * row_h + 30.0;
    let mx = rows.iter().map(|r| r.p99.max(r.p90).max(r.p50)).fold(0.0f64, f64::max).max(1e-9);
    let px = |v: f64| left + (w - left - right) * v / mx;
    let mut s = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h:.0}" font-family="sans-serif" font-size="12"><text x="{left}" y="18">end-to-end latency (send → committed), µs</text>"##
    );
    for (k, name) in ["p50", "p90", "p99"].iter().enumerate() {
        let x = w - right + 10.0;
        let _ = write!(
            s,
            r##"<rect x="{x}" y="{:.0}" width="10" height="10" fill="{}"/><text x="{:.0}" y="{:.0}">{name}</text>"##,
            top + k as f64 * 16.0,
            color(k),
            x + 14.0,
            top + k as f64 * 16.0 + 9.0
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let y0 = top + i as f64 * row_h;
        let _ = write!(
            s,
            r##"<text x="{:.0}" y="{:.0}" text-anchor="end">{}</text>"##,
            left - 8.0,
            y0 + 22.0,
            esc(&r.cipher)
        );
        for (k, v) in [r.p50, r.p90, r.p99].iter().enumerate() {
            let y = y0 + k as f64 * 12.0;
            let _ = write!(
                s,
                r##"<rect x="{left}" y="{y:.0}" width="{:.1}" height="10" fill="{}"><title>{}: {} {:.1} µs</title></rect><text x="{:.1}" y="{:.0}">{:.1}</text>"##,
                (px(*v) - left).max(0.5),
                color(k),
                esc(&r.cipher),
                ["p50", "p90", "p99"][k],
                v,
                px(*v) + 4.0,
                y + 9.0,
                v
            );
        }
    }
    s + "</svg>"
}

/// The whole page for an `lwcbench link` directory; `rec` is its run.json (passed in so the
/// page can be rendered before run.json is written, as one unit with the data it shows).
pub fn page(dir: &Path, rec: &serde_json::Value) -> Result<String, String> {
    let md_path = dir.join("summary.md");
    let md = std::fs::read_to_string(&md_path)
        .map_err(|e| format!("{}: {e} (incomplete lwcbench link run?)", md_path.display()))?;
    let lat = std::fs::read_to_string(dir.join("link_summary.csv")).map(|t| latencies(&t)).unwrap_or_default();
    let s = |k: &str| {
        rec.get(k).map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())).unwrap_or_default()
    };
    let cfg = |k: &str| {
        rec.pointer(&format!("/config/{k}"))
            .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
            .unwrap_or_default()
    };
    let args = rec
        .get("args")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let machine = rec.pointer("/machine/cpu_model").and_then(|v| v.as_str()).unwrap_or("unknown machine");
    let unsafe_banner = if rec.get("unsafe_no_integrity").and_then(|v| v.as_bool()) == Some(true) {
        "<p style=\"color:#b00;font-weight:bold\">UNSAFE: --unsafe-no-integrity — frames carried no tag; forged frames would be accepted.</p>"
    } else {
        ""
    };
    let chart = if lat.is_empty() { String::new() } else { latency_svg(&lat) };
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>lwcbench report — link {}</title><style>{}</style></head><body><h1>lwcbench report — link</h1>{unsafe_banner}\
<p>session {} · {} · {} · {} · started {}</p><p><code>{}</code></p>{chart}{}\
<hr><p>Generated by lwcbench {} from the files in this directory (summary.md, link_summary.csv, run.json).</p></body></html>",
        esc(&s("session")),
        crate::html::STYLE,
        esc(&s("session")),
        esc(&cfg("transport")),
        esc(&cfg("store")),
        esc(machine),
        esc(&s("started_utc")),
        esc(&args),
        md_to_html(&md),
        esc(&s("version")),
    );
    Ok(h)
}

/// The page of a link directory from its files (for `lwcbench report DIR`).
pub fn page_of_dir(dir: &Path) -> Result<String, String> {
    let rj = dir.join("run.json");
    let text = std::fs::read_to_string(&rj).map_err(|e| format!("{}: {e}", rj.display()))?;
    let rec: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}:{}:{}: {e}", rj.display(), e.line(), e.column()))?;
    page(dir, &rec)
}

/// For `lwcbench_link::results::PAGE_RENDERER`: the page as bytes.
pub fn render(dir: &Path, rec: &serde_json::Value) -> Result<Vec<u8>, String> {
    page(dir, rec).map(String::into_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_keep_only_sane_rows() {
        let csv = "cipher,e2e_p50_us,e2e_p90_us,e2e_p99_us\nA,1.5,2,3\nB,nan,1,1\nC,-1,1,1\nD,4,5,x\n";
        assert_eq!(latencies(csv), vec![Lat { cipher: "A".into(), p50: 1.5, p90: 2.0, p99: 3.0 }]);
        assert!(latencies("nonsense").is_empty());
    }

    #[test]
    fn page_escapes_everything_it_was_given() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("summary.md"), "## Link\n\n| cipher |\n|---|\n| <script>x</script> |\n").unwrap();
        std::fs::write(d.path().join("link_summary.csv"), "cipher,e2e_p50_us,e2e_p90_us,e2e_p99_us\n<b>,1,2,3\n")
            .unwrap();
        let rec = serde_json::json!({"kind": "link", "session": "</title><script>alert(1)</script>",
            "config": {"transport": "<i>", "store": "s"}, "args": ["lwcbench", "<x>"], "unsafe_no_integrity": true});
        let p = page(d.path(), &rec).unwrap();
        assert!(!p.contains("<script>"), "{p}");
        assert!(!p.contains("<b>") && !p.contains("<i>") && !p.contains("<x>"), "{p}");
        assert!(p.contains("&lt;script&gt;x&lt;/script&gt;"));
        assert!(p.contains("UNSAFE"));
        // the chart is there, with the cipher's percentiles
        assert!(p.contains("<svg") && p.contains("&lt;b&gt;: p99 3.0 µs"), "{p}");
    }

    #[test]
    fn a_directory_without_summary_is_an_error_naming_the_file() {
        let d = tempfile::tempdir().unwrap();
        let e = page(d.path(), &serde_json::json!({})).unwrap_err();
        assert!(e.contains("summary.md"), "{e}");
    }
}
