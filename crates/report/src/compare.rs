//! Comparison of two runs (two machines, versions or compiler settings), group by group.
use std::collections::BTreeMap;
use std::fmt::Write;

use lwcbench_engine::text::fmt_ns;
use lwcbench_stats::{bonferroni, decide, summarize, Shift, DEFAULT_MARGIN};

use lwcbench_page::{esc, page, TINT_BAD, TINT_GOOD};

use crate::Run;

/// One group present in A, B or both.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Cipher name.
    pub cipher: String,
    /// Implementation, with ` [payload]` where the payload is not `random`.
    pub implementation: String,
    /// Scenario (`full`, `keystream`, ...).
    pub scenario: String,
    /// Key/IV variant (`s,s`, `s,r`, ...).
    pub kiv: String,
    /// Payload bits (0 where the scenario has none).
    pub size_bits: u64,
    /// Median time per operation in run A (None: only in B).
    pub a_median_ns: Option<f64>,
    /// Median time per operation in run B (None: only in A).
    pub b_median_ns: Option<f64>,
    /// median(B) / median(A): > 1 means B is slower.
    pub ratio: Option<f64>,
    /// Bootstrap 95 % CI of the ratio: lower bound.
    pub ratio_lo: Option<f64>,
    /// Bootstrap 95 % CI of the ratio: upper bound.
    pub ratio_hi: Option<f64>,
    /// Two-sided Mann–Whitney U p-value (uncorrected; the verdict uses Bonferroni's α).
    pub p: Option<f64>,
    /// "B faster" / "B slower" (significant and outside ±margin), "no change", "only in A/B".
    pub verdict: String,
}

/// The verdict when a group is neither significantly nor practically different.
pub const NO_CHANGE: &str = "no change";

type Key = (String, String, String, String, u64);

/// Group-by-group comparison with the default ±5 % margin ([`compare_runs_with`]).
pub fn compare_runs(a: &Run, b: &Run) -> Vec<Row> {
    compare_runs_with(a, b, DEFAULT_MARGIN)
}

/// Group-by-group comparison. "B faster/slower" needs a two-sided Mann–Whitney U test at
/// α = 0.05, Bonferroni-corrected over the groups present in both runs, AND the bootstrap 95 %
/// CI of median(B)/median(A) wholly outside 1 ± `margin` ([`lwcbench_stats::decide`]).
pub fn compare_runs_with(a: &Run, b: &Run, margin: f64) -> Vec<Row> {
    let collect = |r: &Run| {
        let mut m: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
        for s in &r.samples {
            let imp = if s.payload == "random" {
                s.implementation.clone()
            } else {
                format!("{} [{}]", s.implementation, s.payload)
            };
            m.entry((s.cipher.clone(), imp, s.scenario.clone(), s.kiv.clone(), s.size_bits))
                .or_default()
                .push(s.ns_per_op);
        }
        m
    };
    let (ma, mb) = (collect(a), collect(b));
    let alpha = bonferroni(0.05, ma.keys().filter(|k| mb.contains_key(*k)).count());
    let mut keys: Vec<&Key> = ma.keys().chain(mb.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|k| {
            let (xa, xb) = (ma.get(k), mb.get(k));
            let (ratio, ci, p, verdict) = match (xa, xb) {
                (Some(x), Some(y)) => {
                    let c = decide(x, y, alpha, margin);
                    let v = match c.shift {
                        Shift::None => NO_CHANGE,
                        Shift::Slower => "B slower",
                        Shift::Faster => "B faster",
                    };
                    (Some(c.ratio), Some((c.ratio_lo, c.ratio_hi)), Some(c.p), v.to_string())
                }
                (Some(_), None) => (None, None, None, "only in A".into()),
                _ => (None, None, None, "only in B".into()),
            };
            Row {
                cipher: k.0.clone(),
                implementation: k.1.clone(),
                scenario: k.2.clone(),
                kiv: k.3.clone(),
                size_bits: k.4,
                a_median_ns: xa.map(|x| summarize(x).median),
                b_median_ns: xb.map(|x| summarize(x).median),
                ratio,
                ratio_lo: ci.map(|c| c.0),
                ratio_hi: ci.map(|c| c.1),
                p,
                verdict,
            }
        })
        .collect()
}

fn cell(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "–".into())
}

/// The rule, stated under every comparison table.
pub fn rule(margin: f64) -> String {
    format!(
        "verdict: B faster/slower only when significant (two-sided Mann–Whitney U, α = 0.05 Bonferroni-corrected over the groups in both runs) AND the bootstrap 95 % CI of B/A lies wholly outside 1 ± {} %; otherwise no change",
        margin * 100.0
    )
}

/// Terminal table.
pub fn text_table(rows: &[Row]) -> String {
    text_table_with(rows, DEFAULT_MARGIN)
}

/// Terminal table, with the margin the verdicts used.
pub fn text_table_with(rows: &[Row], margin: f64) -> String {
    let mut s = format!(
        "{:<18} {:<14} {:<9} {:>4} {:>6} {:>11} {:>11} {:>7} {:>13} {:>8}  verdict\n",
        "cipher", "impl", "scenario", "kiv", "bits", "A median", "B median", "B/A", "B/A 95% CI", "p"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<18} {:<14} {:<9} {:>4} {:>6} {:>11} {:>11} {:>7} {:>13} {:>8}  {}",
            r.cipher,
            r.implementation,
            r.scenario,
            r.kiv,
            if r.size_bits > 0 { r.size_bits.to_string() } else { "-".into() },
            cell(r.a_median_ns, fmt_ns),
            cell(r.b_median_ns, fmt_ns),
            cell(r.ratio, |x| format!("{x:.3}")),
            match (r.ratio_lo, r.ratio_hi) {
                (Some(lo), Some(hi)) => format!("{lo:.3}–{hi:.3}"),
                _ => "–".into(),
            },
            cell(r.p, |x| format!("{x:.1e}")),
            r.verdict
        );
    }
    let count = |v: &str| rows.iter().filter(|r| r.verdict == v).count();
    let _ = writeln!(
        s,
        "\n{} groups: {} B faster, {} B slower, {} no change, {} only in A, {} only in B\n{}",
        rows.len(),
        count("B faster"),
        count("B slower"),
        count(NO_CHANGE),
        count("only in A"),
        count("only in B"),
        rule(margin)
    );
    s
}

/// Self-contained HTML page of the comparison.
pub fn html(a: &Run, b: &Run, a_name: &str, b_name: &str, rows: &[Row]) -> String {
    html_with(a, b, a_name, b_name, rows, DEFAULT_MARGIN)
}

/// [`html`] with the margin the verdicts used.
pub fn html_with(a: &Run, b: &Run, a_name: &str, b_name: &str, rows: &[Row], margin: f64) -> String {
    let mut h = String::from("<h1>lwcbench: comparison of two runs</h1><table><tr><th></th><th class=\"l\">directory</th><th class=\"l\">CPU</th><th class=\"l\">commit</th><th class=\"l\">rustc</th><th class=\"l\">started</th></tr>",
    );
    for (tag, name, r) in [("A", a_name, a), ("B", b_name, b)] {
        let _ = write!(
            h,
            "<tr><th>{tag}</th><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(name),
            esc(&r.record.machine.cpu_model),
            esc(&r.record.build.git_commit),
            esc(&r.record.build.rustc),
            esc(&r.record.started_utc)
        );
    }
    h += "</table><p>Ratio = median(B) / median(A); &gt; 1 means B is slower. </p>";
    let _ = write!(h, "<p>{}.</p>", esc(&rule(margin)));
    h += "<table><tr><th class=\"l\">cipher</th><th class=\"l\">implementation</th><th class=\"l\">scenario</th><th>kiv</th><th>bits</th><th>A median</th><th>B median</th><th>B/A</th><th>B/A 95 % CI</th><th>p</th><th class=\"l\">verdict</th></tr>";
    for r in rows {
        let colour = match r.verdict.as_str() {
            "B faster" => TINT_GOOD,
            "B slower" => TINT_BAD,
            _ => "#ffffff",
        };
        let _ = write!(
            h,
            "<tr style=\"background:{colour}\"><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            esc(&r.cipher),
            esc(&r.implementation),
            esc(&r.scenario),
            esc(&r.kiv),
            if r.size_bits > 0 { r.size_bits.to_string() } else { "–".into() },
            cell(r.a_median_ns, fmt_ns),
            cell(r.b_median_ns, fmt_ns),
            cell(r.ratio, |x| format!("{x:.3}")),
            match (r.ratio_lo, r.ratio_hi) {
                (Some(lo), Some(hi)) => format!("{lo:.3}–{hi:.3}"),
                _ => "–".into(),
            },
            cell(r.p, |x| format!("{x:.1e}")),
            esc(&r.verdict)
        );
    }
    h += "</table>";
    page("lwcbench compare", "", &h)
}
