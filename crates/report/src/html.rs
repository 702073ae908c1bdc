//! The HTML report of one run. Figures follow the studies lwcbench reproduces: box plots per
//! `<k,iv | bits>` with implementations side by side, initialisation box plots, bars with 95 %
//! confidence intervals. Every figure has its numbers in a table. After them, each study's own
//! section, which the study draws ([`lwcbench_engine::studies::Study::html`]).
use std::collections::BTreeSet;
use std::fmt::Write;

use lwcbench_engine::results::{RunRecord, SampleRow, SummaryRow};
use lwcbench_engine::studies::{self, StudyRun};
use lwcbench_engine::text::fmt_ns;
use lwcbench_page::{bars_ci, boxplot, esc, page, slug, BoxStats};
use lwcbench_stats::quantile_sorted;

use crate::Run;

const KIV_ORDER: [&str; 4] = ["s,s", "s,r", "r,s", "r,r"];
const SCENARIO_ORDER: [&str; 6] = ["full", "keystream", "init", "keysetup", "encrypt", "decrypt"];

fn order<'a>(items: impl Iterator<Item = &'a str>, pref: &[&str]) -> Vec<String> {
    let set: BTreeSet<&str> = items.collect();
    let mut v: Vec<String> = pref.iter().filter(|p| set.contains(**p)).map(|s| s.to_string()).collect();
    v.extend(set.iter().filter(|s| !pref.contains(s)).map(|s| s.to_string()));
    v
}

fn kv_table(rows: &[(&str, String)]) -> String {
    let mut s = String::from("<table>");
    for (k, v) in rows {
        let _ = write!(s, "<tr><th class=\"l\">{}</th><td class=\"l\">{}</td></tr>", esc(k), esc(v));
    }
    s + "</table>"
}

fn summary_table(rows: &[&SummaryRow]) -> String {
    let mut s = String::from(
        "<table><tr><th class=\"l\">implementation</th><th class=\"l\">scenario</th><th>kiv</th><th>bits</th><th>n</th><th>median</th>\
<th>95 % CI median</th><th>mean</th><th>95 % CI mean</th><th>sd</th><th>min</th><th>max</th><th>p95</th><th>p99</th><th>outliers</th><th>batch</th><th>Mbit/s</th><th>cycles/bit</th></tr>",
    );
    for r in rows {
        let _ = write!(
            s,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} – {}</td><td>{}</td><td>{} – {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.implementation),
            esc(&r.scenario),
            esc(&r.kiv),
            if r.size_bits > 0 { r.size_bits.to_string() } else { "–".into() },
            r.n,
            fmt_ns(r.median_ns),
            fmt_ns(r.median_ci95_lo_ns),
            fmt_ns(r.median_ci95_hi_ns),
            fmt_ns(r.mean_ns),
            fmt_ns(r.ci95_lo_ns),
            fmt_ns(r.ci95_hi_ns),
            fmt_ns(r.sd_ns),
            fmt_ns(r.min_ns),
            fmt_ns(r.max_ns),
            fmt_ns(r.p95_ns),
            fmt_ns(r.p99_ns),
            r.outliers,
            r.batch,
            r.mbit_per_s.map(|x| format!("{x:.1}")).unwrap_or_else(|| "–".into()),
            r.cycles_per_bit.map(|x| format!("{x:.1}")).unwrap_or_else(|| "–".into()),
        );
    }
    s + "</table>"
}

/// Box-plot figure for one cipher and scenario; one series per implementation (and payload,
/// when dataset and random payloads were both measured).
fn scenario_boxplot(samples: &[&SampleRow], impls: &[String], scenario: &str) -> Option<String> {
    let rows: Vec<&&SampleRow> = samples.iter().filter(|r| r.scenario == scenario).collect();
    if rows.is_empty() {
        return None;
    }
    let payloads = order(rows.iter().map(|r| r.payload.as_str()), &[]);
    let mut series: Vec<(String, String, String)> = Vec::new();
    for im in impls {
        for p in &payloads {
            if rows.iter().any(|r| &r.implementation == im && &r.payload == p) {
                let label = if payloads.len() > 1 { format!("{im} · {p}") } else { im.clone() };
                series.push((im.clone(), p.clone(), label));
            }
        }
    }
    let kivs = order(rows.iter().map(|r| r.kiv.as_str()), &KIV_ORDER);
    let sizes: BTreeSet<u64> = rows.iter().map(|r| r.size_bits).collect();
    let uses_size = sizes.iter().any(|s| *s > 0);
    let mut cats = Vec::new();
    let mut data = Vec::new();
    for k in &kivs {
        for sz in &sizes {
            cats.push(if uses_size { format!("<{k} | {sz}>") } else { format!("<{k}>") });
            data.push(
                series
                    .iter()
                    .map(|(im, p, _)| {
                        let xs: Vec<f64> = rows
                            .iter()
                            .filter(|r| &r.implementation == im && &r.payload == p && &r.kiv == k && r.size_bits == *sz)
                            .map(|r| r.ns_per_op)
                            .collect();
                        BoxStats::from_samples(&xs, quantile_sorted)
                    })
                    .collect(),
            );
        }
    }
    let x_label = if uses_size {
        "<key, IV | payload bits>   (s = static, r = random)"
    } else {
        "<key, IV>   (s = static, r = random)"
    };
    let names: Vec<String> = series.into_iter().map(|s| s.2).collect();
    Some(boxplot(&cats, &names, &data, "time per operation", x_label))
}

/// Bars of mean throughput with 95 % CI (from the CI of the mean time) at the largest size.
/// Bars are ordered and coloured like the box plots' series (`impls`), so one implementation
/// keeps one colour across figures.
fn throughput_bars(summary: &[&SummaryRow], scenario: &str, impls: &[String]) -> Option<(String, u64)> {
    let mut rows: Vec<&&SummaryRow> =
        summary.iter().filter(|r| r.scenario == scenario && r.kiv == "all" && r.size_bits > 0).collect();
    let rank = |r: &SummaryRow| impls.iter().position(|i| i == &r.implementation).unwrap_or(usize::MAX);
    rows.sort_by_key(|r| (rank(r), r.payload.clone()));
    let size = rows.iter().map(|r| r.size_bits).max()?;
    let bars: Vec<(String, f64, f64, f64)> = rows
        .iter()
        .filter(|r| r.size_bits == size)
        .map(|r| {
            let name = if r.payload == "random" {
                format!("{}/{}", r.cipher, r.implementation)
            } else {
                format!("{}/{} · {}", r.cipher, r.implementation, r.payload)
            };
            let mbps = |ns: f64| size as f64 / ns * 1000.0;
            (name, mbps(r.mean_ns), mbps(r.ci95_hi_ns.max(1e-9)), mbps(r.ci95_lo_ns.max(1e-9)))
        })
        .collect();
    if bars.is_empty() {
        return None;
    }
    let colors: Vec<usize> = rows.iter().filter(|r| r.size_bits == size).map(|r| rank(r).min(impls.len())).collect();
    Some((bars_ci(&bars, &colors, "throughput, Mbit/s (mean, 95 % CI)", "implementation", &[]), size))
}

/// The HTML page of one run: its settings and environment, a section per cipher, then each
/// study's own section and the published figures of the study the preset reproduces.
pub fn render(run: &Run) -> Result<String, String> {
    let rec = &run.record;
    let mut h = header(rec);
    // One section per cipher, then the studies' sections; the contents list comes first.
    let ciphers = order(run.samples.iter().map(|r| r.cipher.as_str()), &["DRACO"]);
    let mut body = String::new();
    let mut fig = 0;
    for c in &ciphers {
        body += &cipher_section(run, c, &mut fig);
    }
    // Each study's own section, drawn by the study (Study::html) in the order of the study
    // list, where the run holds one of the study's files.
    let srun = StudyRun { dir: &run.dir, record: rec, samples: &run.samples, summary: &run.summary };
    let mut contents: Vec<(&str, &str)> = Vec::new();
    for s in studies::ALL.iter().filter(|s| srun.has_files_of(**s)) {
        let sec = s.html(&srun, &mut fig)?;
        if let (false, Some(link)) = (sec.is_empty(), s.html_contents()) {
            contents.push(link);
        }
        body += &sec;
    }
    h += "<h2>Contents</h2><ul>";
    for c in &ciphers {
        let _ = write!(h, "<li><a href=\"#c-{}\">{}</a></li>", slug(c), esc(c));
    }
    for (id, title) in contents {
        let _ = write!(h, "<li><a href=\"#{}\">{}</a></li>", esc(id), esc(title));
    }
    h += "</ul>";
    h += &body;
    // The reproduced study's published figures beside this run's (engine::published).
    h += &lwcbench_engine::study_sections::html_for_dir(rec.preset.as_deref(), &run.dir)?;
    let _ = write!(h, "<hr><p>Generated by lwcbench {} from the files in this directory (samples.csv, summary.csv, comparison.csv, run.json).</p>", esc(&rec.version));
    // the preset of a collected run is the board name from the log: page() escapes the title
    let title = format!("lwcbench report{}", rec.preset.as_deref().map(|p| format!(" — {p}")).unwrap_or_default());
    Ok(page(&title, "", &h))
}

/// The page's heading, the run's settings and notes, and the environment table.
fn header(rec: &RunRecord) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<h1>lwcbench report</h1><p>{} · {} groups × {} repetitions (+{} excluded warm-up) · seed {} · {} · {:.1} s</p>",
        esc(rec.preset.as_deref().unwrap_or("custom selection")),
        rec.groups,
        rec.reps,
        rec.warmup,
        rec.seed,
        esc(&rec.started_utc),
        rec.duration_s
    );
    for n in &rec.notes {
        let _ = write!(h, "<p class=\"note\">{}</p>", esc(n));
    }
    let m = &rec.machine;
    let b = &rec.build;
    let mut env = vec![
        ("CPU", format!("{} ({} logical cores)", m.cpu_model, m.logical_cores)),
        ("CPU flags", m.cpu_flags.join(" ")),
        ("frequency governor", m.governor.clone()),
        ("OS / kernel", format!("{} / {}", m.os, m.kernel)),
        ("lwcbench", format!("{} (commit {})", b.tool_version, b.git_commit)),
        (
            "Rust",
            format!(
                "{} — profile {}, opt-level {}, target {}, RUSTFLAGS '{}'",
                b.rustc, b.profile, b.opt_level, b.target, b.rustflags
            ),
        ),
    ];
    for (n, v) in &b.other_compilers {
        env.push(("other compiler", format!("{n}: {v}")));
    }
    env.push(("time source", rec.clock.time_source.clone()));
    env.push(("cycle source", rec.clock.cycle_source.clone()));
    env.push((
        "clock",
        format!(
            "overhead {:.1} ns per start/stop, resolution {:.0} ns{}",
            rec.clock.overhead_ns,
            rec.clock.resolution_ns,
            rec.clock
                .cycles_per_ns
                .map(|c| {
                    // run.json files from before `counter` was recorded come from x86-64 (TSC).
                    let name = if rec.clock.counter.is_empty() { "TSC" } else { rec.clock.counter.as_str() };
                    format!(", {name} {c:.3} GHz")
                })
                .unwrap_or_default()
        ),
    ));
    env.push(("command", rec.args.join(" ")));
    env.push(("minimum sample", format!("{} (shorter operations are batched)", fmt_ns(rec.min_sample_ns))));
    h += "<h2>Environment and settings</h2>";
    h += &kv_table(&env);
    h
}

/// The section of one cipher: per scenario its box plot and throughput bars, each with its
/// numbers as a table. `fig` numbers the figures across the page.
fn cipher_section(run: &Run, c: &str, fig: &mut usize) -> String {
    let samples: Vec<&SampleRow> = run.samples.iter().filter(|r| r.cipher == c).collect();
    let summary: Vec<&SummaryRow> = run.summary.iter().filter(|r| r.cipher == c).collect();
    let impls =
        order(samples.iter().map(|r| r.implementation.as_str()), &["rust-ref", "cpp-ref", "rust-fast", "cpp-fast"]);
    let mut body = String::new();
    let _ = write!(body, "<h2 id=\"c-{}\">{}</h2>", slug(c), esc(c));
    if c == "DRACO" {
        body += "<p class=\"note\">DRACO (provisional reconstruction, not interoperable with the published cipher): the selection of the non-volatile bit, the initialisation and the bit order are this project's provisional choices (docs/draco.md). Costs per clock are faithful; outputs are not the published cipher's.</p>";
    }
    for sc in order(samples.iter().map(|r| r.scenario.as_str()), &SCENARIO_ORDER) {
        // the scenario comes from samples.csv: escaped like all text read from a file
        let sc_html = esc(&sc);
        if let Some(svg) = scenario_boxplot(&samples, &impls, &sc) {
            *fig += 1;
            let _ = write!(
                body,
                "<figure class=\"fig\">{svg}<figcaption>Figure {fig}. {} — <b>{sc_html}</b>: time per operation, box = quartiles, line = median, whiskers = 1.5 × IQR, circles = outliers; {} samples per box.</figcaption></figure>",
                esc(c),
                run.record.reps
            );
            let rows: Vec<&SummaryRow> =
                summary.iter().filter(|r| r.scenario == sc && r.kiv != "all").copied().collect();
            let _ =
                write!(body, "<details><summary>Figure {fig} as a table</summary>{}</details>", summary_table(&rows));
        }
        if let Some((svg, size)) = throughput_bars(&summary, &sc, &impls) {
            *fig += 1;
            let _ = write!(
                body,
                "<figure class=\"fig\">{svg}<figcaption>Figure {fig}. {} — <b>{sc_html}</b> at {size} bits, all key/IV variants pooled: mean throughput with 95 % confidence interval.</figcaption></figure>",
                esc(c)
            );
            let rows: Vec<&SummaryRow> =
                summary.iter().filter(|r| r.scenario == sc && r.kiv == "all").copied().collect();
            let _ = write!(body, "<details><summary>Figure {fig} as a table (the study's aggregate table: all four key/IV variants pooled)</summary>{}</details>", summary_table(&rows));
        }
    }
    body
}
