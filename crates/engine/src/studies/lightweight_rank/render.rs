//! The study's Markdown section (from the model) and its section of report.html (from
//! `lightweight-scores.csv` and `lightweight-metrics.csv` in the run directory).
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use super::model::{Model, Ranking};
use super::scoring::{rr_pct, METRICS_FILE, SCORES_FILE, SMALL};
use crate::html::{col, esc, num, radar, read_table};
use crate::measured::MeasuredEnergy;
use crate::text::fmt_ns;

/// The Markdown table header: fixed columns, the measured column with `--energy-from`, and a
/// WSM column per weighting.
fn markdown_header(model: &Model, with_measured: bool) -> String {
    let mut md = String::from("| cipher | key schedule | enc/block | dec/block | enc RR% | dec RR% | key RR% | throughput MB/s | energy/block (modelled) | energy/byte (modelled) | energy source | memory B |");
    if with_measured {
        md += " energy/byte (measured ± U, k = 2) |";
    }
    for w in &model.weightings {
        let _ = write!(md, " WSM {0} (rank) |", w.name);
    }
    md += "\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|";
    if with_measured {
        md += "---:|";
    }
    md += &"---:|".repeat(model.weightings.len());
    md.push('\n');
    md
}

/// The study's Markdown: the eight-cipher table and the rankings.
pub(super) fn markdown(model: &Model, ranking: &Ranking, measured: Option<&MeasuredEnergy>, machine: &str) -> String {
    let mut md = String::from("\n## Lightweight ciphers: metrics, RR% and WSM ranking\n\n");
    let energy_how = match &model.board {
        Some(b) => format!(
            "energy **modelled** from emulated cycles on {} ÷ {} MHz × {} V × {} mA where the cipher has an image, else host time × that power (the energy source column)",
            b.id, b.clock_mhz, b.volts, b.active_ma
        ),
        None => format!("energy **modelled** as time × {} W ({})", model.profile.active_w, model.profile.device),
    };
    let _ = writeln!(
        md,
        "Medians over all samples; encrypt/decrypt per block at {SMALL} B; throughput = encrypt at the largest size; RR% = time / AES-128 time × 100 (same scenario and size); {energy_how}; memory = cipher object after key schedule + message + tag + nonce (bytes). Machine: {machine}.\n"
    );
    md += &markdown_header(model, measured.is_some());
    for (i, r) in ranking.used.iter().enumerate() {
        let sm = r.encrypt_sizes().map_or(SMALL, |s| s.0);
        let blocks = sm.div_ceil(r.block_bytes) as f64;
        let enc = r.encrypt_ns(sm);
        let dec = r.times.get(&("decrypt".into(), sm)).copied().unwrap_or(f64::NAN);
        let rr = |s: &str, t: f64| {
            model
                .ref_time(s, if s == "keysetup" { 0 } else { sm })
                .map(|x| format!("{:.1}", rr_pct(t, x)))
                .unwrap_or_else(|| "–".into())
        };
        let crit = ranking.crit[i];
        let _ = write!(
            md,
            "| {}/{} | {} | {} | {} | {} | {} | {} | {:.1} | {:.3e} J | {:.3e} J | {} | {} |",
            r.cipher,
            r.implementation,
            fmt_ns(r.keysetup_ns),
            fmt_ns(enc / blocks),
            fmt_ns(dec / blocks),
            rr("encrypt", enc),
            rr("decrypt", dec),
            rr("keysetup", r.keysetup_ns),
            crit[1],
            model.energy(&r.cipher, &r.implementation, "encrypt", sm, enc).0 / blocks,
            crit[0],
            ranking.sources[i],
            crit[3]
        );
        if let Some(m) = measured {
            md += &match m.find(&r.cipher, &r.implementation, "encrypt", sm as u64 * 8) {
                Some(x) => format!(" {:.3e} ± {:.1e} J |", x.e_op_j / sm as f64, x.u_op_j / sm as f64),
                None => " not measured |".to_string(),
            };
        }
        for k in 0..model.weightings.len() {
            let _ = write!(md, " {:.3} ({}) |", ranking.scores[k][i], ranking.ranks[k][i]);
        }
        md.push('\n');
    }
    md += "\nWeights (energy/byte, throughput, key schedule, memory): ";
    md += &model.weightings.iter().map(|w| format!("{} = {:?}", w.name, w.w)).collect::<Vec<_>>().join("; ");
    md += ". Normalisation: benefit x / max, cost min / x; score = Σ w·s / Σ w.\n";
    md
}

/// The study's section of report.html: WSM radar, criterion radar and the ranking table, from
/// `lightweight-scores.csv` in `dir` (empty without it).
pub fn html(dir: &Path, fig: &mut usize) -> String {
    let Some((hd, rows)) = read_table(&dir.join(SCORES_FILE)) else { return String::new() };
    let (Some(ci), Some(ii)) = (col(&hd, "cipher"), col(&hd, "implementation")) else { return String::new() };
    let weightings: Vec<String> = hd.iter().filter_map(|h| h.strip_prefix("wsm_").map(str::to_string)).collect();
    let names: Vec<String> = rows.iter().map(|r| r[ci].clone()).collect();
    let mut h = String::from("<h2 id=\"lightweight\">Lightweight ciphers: WSM ranking</h2><p>Weighted scoring model over four criteria normalised by their best value (benefit x / max, cost min / x): modelled energy per byte at 16 B, encrypt throughput at the largest size, key-schedule time, memory per operation. Energy is <b>modelled</b>, not measured: emulated cycles on a board (<code>--board</code>) or host time × device power, as the energy source column says. Details: docs/rankings.md; numbers: lightweight-scores.csv, lightweight-metrics.csv.</p>");
    let series: Vec<(String, Vec<f64>)> = weightings
        .iter()
        .filter_map(|w| col(&hd, &format!("wsm_{w}")).map(|c| (w.clone(), rows.iter().map(|r| num(&r[c])).collect())))
        .collect();
    *fig += 1;
    let _ = write!(
        h,
        "<figure class=\"fig\">{}<figcaption>Figure {fig}. WSM score per cipher (1 = best on every criterion), one polygon per weighting.</figcaption></figure>",
        radar(&names, &series, "WSM score per cipher")
    );
    let crit = ["energy_per_byte", "throughput", "key_schedule", "memory"];
    let cs: Option<Vec<usize>> = crit.iter().map(|c| col(&hd, &format!("score_{c}"))).collect();
    if let Some(cs) = cs {
        let per: Vec<(String, Vec<f64>)> =
            rows.iter().map(|r| (r[ci].clone(), cs.iter().map(|&c| num(&r[c])).collect())).collect();
        *fig += 1;
        let axes: Vec<String> =
            ["energy/byte", "throughput", "key schedule", "memory"].iter().map(|s| s.to_string()).collect();
        let _ = write!(
            h,
            "<figure class=\"fig\">{}<figcaption>Figure {fig}. Normalised criterion scores per cipher (outer ring = best of the eight).</figcaption></figure>",
            radar(&axes, &per, "criterion scores")
        );
    }
    let measured = measured_per_byte(dir);
    h += "<table><tr><th class=\"l\">cipher</th><th class=\"l\">implementation</th><th>energy/byte (modelled)</th><th class=\"l\">energy source</th>";
    if !measured.is_empty() {
        h += "<th>energy/byte (measured ± U, k = 2)</th>";
    }
    h += "<th>throughput MB/s</th><th>key schedule</th><th>memory B</th>";
    for w in &weightings {
        let _ = write!(h, "<th>WSM {0}</th><th>rank {0}</th>", esc(w));
    }
    h += "</tr>";
    for r in &rows {
        let g = |n: &str| col(&hd, n).map(|c| r[c].clone()).unwrap_or_default();
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.3e} J</td><td class=\"l\">{}</td>",
            esc(&r[ci]),
            esc(&r[ii]),
            num(&g("energy_per_byte_j_modelled")),
            esc(&g("energy_source")),
        );
        if !measured.is_empty() {
            let cell = match measured.get(&(r[ci].clone(), r[ii].clone())) {
                Some((bytes, e, u)) => format!("{e:.3e} ± {u:.1e} J ({bytes} B)"),
                None => "not measured".into(),
            };
            let _ = write!(h, "<td>{}</td>", esc(&cell));
        }
        let _ = write!(
            h,
            "<td>{:.1}</td><td>{}</td><td>{}</td>",
            num(&g("throughput_mb_s")),
            fmt_ns(num(&g("key_schedule_ns"))),
            esc(&g("memory_bytes"))
        );
        for w in &weightings {
            let _ = write!(h, "<td>{:.3}</td><td>{}</td>", num(&g(&format!("wsm_{w}"))), esc(&g(&format!("rank_{w}"))));
        }
        h += "</tr>";
    }
    h + "</table>"
}

/// Measured encrypt energy per byte by (cipher, implementation) from the metrics file
/// (`--energy-from`), at the smallest message size measured: (bytes, J/B, U J/B).
fn measured_per_byte(dir: &Path) -> BTreeMap<(String, String), (u64, f64, f64)> {
    let mut out = BTreeMap::new();
    let Some((hd, rows)) = read_table(&dir.join(METRICS_FILE)) else { return out };
    let cols = [
        "cipher",
        "implementation",
        "scenario",
        "message_bytes",
        "energy_per_op_j_measured",
        "energy_per_op_u_j_measured",
    ];
    let Some(c) = cols.iter().map(|n| col(&hd, n)).collect::<Option<Vec<usize>>>() else { return out };
    for r in &rows {
        let (Ok(bytes), Ok(e), Ok(u)) = (r[c[3]].parse::<u64>(), r[c[4]].parse::<f64>(), r[c[5]].parse::<f64>()) else {
            continue;
        };
        if r[c[2]] != "encrypt" || bytes == 0 || !e.is_finite() || !u.is_finite() {
            continue;
        }
        let key = (r[c[0]].clone(), r[c[1]].clone());
        let cell = (bytes, e / bytes as f64, u / bytes as f64);
        match out.get(&key) {
            Some(&(b, _, _)) if b <= bytes => {}
            _ => {
                out.insert(key, cell);
            }
        }
    }
    out
}
