//! The study's Markdown section and its section of report.html, from the rows of
//! `stream_study.csv`.
use std::fmt::Write;

use super::{StreamStudyRow, LONG_BYTES};
use crate::board::Board;
use crate::html::{bars_ci, esc};
use crate::power::PowerProfile;

fn g(x: f64) -> String {
    if !x.is_finite() {
        "–".into()
    } else if x == 0.0 {
        "0".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3e}")
    }
}

/// Marker that starts the study's section in summary.md (the report keeps what follows it
/// when it rewrites summary.md).
pub const MD_MARKER: &str = "<!-- lwcbench:study -->";

/// The study's Markdown section: the table and how energy is modelled.
pub fn markdown(rows: &[StreamStudyRow], p: &PowerProfile, board: Option<&Board>) -> String {
    let energy_how = match board {
        Some(b) => format!(
            "from the emulated cycles of the cipher's image on {} (one init + the keystream over a frame) ÷ {} MHz × {} V × {} mA, else measured time × that power (energy source column)",
            b.id, b.clock_mhz, b.volts, b.active_ma
        ),
        None => format!("time × {} W, {}: {}", p.active_w, p.device, p.source),
    };
    let mut s = format!("\n{MD_MARKER}\n## Stream-cipher study (stream_study.csv)\n\n");
    let _ = writeln!(
        s,
        "Median with 95 % CI over independent repetitions (fresh random key and IV each). Throughput: `full` (keystream + XOR) on {} KiB messages; 1 MB = 10^6 bytes. \
Energy is **MODELLED** ({}), not measured. RAM = state + peak stack of init + keystream. \
Rank = throughput / (ROM + 2·RAM) in (MB/s)/B; E-Rank = Rank / energy per frame in (MB/s)/(B·µJ). Methods: docs/metrics.md.\n",
        LONG_BYTES / 1024,
        energy_how
    );
    let measured = rows.iter().any(|r| r.energy_measured_source.is_some());
    s += "| cipher | impl | MB/s (95 % CI) | cycles/B | init µs | frames/s | ROM B | state B | stack B | RSS B/B | µJ/frame (modelled) | energy source | Rank | E-Rank (modelled) |";
    s += if measured { " nJ/B (measured ± U, k = 2) |\n" } else { "\n" };
    s += "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|";
    s += if measured { "---:|\n" } else { "\n" };
    for r in rows {
        let _ = write!(
            s,
            "| {} | {} | {} ({}–{}) | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.cipher,
            r.implementation,
            g(r.throughput_mb_s),
            g(r.throughput_ci95_lo_mb_s),
            g(r.throughput_ci95_hi_mb_s),
            g(r.cycles_per_byte),
            g(r.init_us),
            g(r.frames_per_s),
            r.code_bytes,
            r.state_bytes,
            r.peak_stack_bytes,
            g(r.rss_growth_per_byte),
            g(r.energy_per_frame_uj_modelled),
            r.energy_source,
            g(r.rank_mb_s_per_byte),
            g(r.erank_mb_s_per_byte_uj_modelled)
        );
        if measured {
            s += &measured_cell(r);
            s += " |";
        }
        s.push('\n');
    }
    if let Some(r) = rows.first() {
        let _ = writeln!(s, "\nframes/s: {}. cycles: {}.", r.frames_source, r.cycle_source);
    }
    s
}

/// "e ± U" of a row's measured energy per byte (nJ), or "not measured".
fn measured_cell(r: &StreamStudyRow) -> String {
    match (r.energy_per_byte_nj_measured, r.energy_per_byte_u_nj_measured) {
        (Some(e), Some(u)) => format!(" {} ± {}", g(e), g(u)),
        _ => " not measured".into(),
    }
}

fn colour(r: &StreamStudyRow) -> usize {
    match r.language.as_str() {
        "C++" => 1,
        "C" => 2,
        _ => 0,
    }
}

/// One metric: (title, axis label, value/lo/hi per row).
type Metric = (&'static str, &'static str, fn(&StreamStudyRow) -> (f64, f64, f64));

pub(super) const HTML_METRICS: &[Metric] = &[
    ("Throughput", "MB/s (median, 95 % CI)", |r| {
        (r.throughput_mb_s, r.throughput_ci95_lo_mb_s, r.throughput_ci95_hi_mb_s)
    }),
    ("Cycles per byte", "cycles/byte (median, 95 % CI)", |r| {
        (r.cycles_per_byte, r.cycles_per_byte_ci95_lo, r.cycles_per_byte_ci95_hi)
    }),
    ("Init time", "µs (median, 95 % CI)", |r| (r.init_us, r.init_ci95_lo_us, r.init_ci95_hi_us)),
    ("Frames per second", "frames/s (median, 95 % CI)", |r| {
        (r.frames_per_s, r.frames_per_s_ci95_lo, r.frames_per_s_ci95_hi)
    }),
    ("Code size (ROM)", "bytes of machine code", |r| (r.code_bytes as f64, r.code_bytes as f64, r.code_bytes as f64)),
    ("RAM (state + peak stack)", "bytes", |r| (r.ram_bytes as f64, r.ram_bytes as f64, r.ram_bytes as f64)),
    ("Memory footprint", "RSS growth, bytes per byte encrypted", |r| {
        (r.rss_growth_per_byte, r.rss_growth_per_byte, r.rss_growth_per_byte)
    }),
    ("Energy per frame (MODELLED)", "µJ per frame, modelled (95 % CI)", |r| {
        (r.energy_per_frame_uj_modelled, r.energy_per_frame_ci95_lo_uj_modelled, r.energy_per_frame_ci95_hi_uj_modelled)
    }),
    ("Rank", "(MB/s) per byte of ROM + 2·RAM (95 % CI)", |r| (r.rank_mb_s_per_byte, r.rank_ci95_lo, r.rank_ci95_hi)),
    ("E-Rank (MODELLED energy)", "(MB/s) per byte per µJ (95 % CI)", |r| {
        (r.erank_mb_s_per_byte_uj_modelled, r.erank_ci95_lo_modelled, r.erank_ci95_hi_modelled)
    }),
];

/// The study's section of report.html: one bar chart per metric with its 95 % confidence
/// interval (as the study drew them) and the full table; empty when there are no rows.
pub fn html(rows: &[StreamStudyRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h2 id=\"stream-study\">Stream-cipher study</h2>");
    let r0 = &rows[0];
    let _ = write!(
        h,
        "<p>From stream_study.csv (methods: docs/metrics.md). Throughput on {} B messages, {} repetitions with a fresh random key/IV each; bars are medians with distribution-free 95 % CIs. \
<b>Energy and E-Rank are MODELLED</b>, not measured: {} (energy source column). Frames: {}. Cycles: {}. Colours: Rust, C++.</p>",
        r0.long_message_bytes,
        r0.n,
        if r0.energy_source.starts_with("emulated:") || rows.iter().any(|r| r.energy_source.starts_with("emulated:")) {
            "emulated cycles on a board × its datasheet power, host time × that power where the cipher has no image".to_string()
        } else {
            format!("measured time × {} W ({})", r0.power_w, esc(&r0.power_device))
        },
        esc(&r0.frames_source),
        esc(&r0.cycle_source)
    );
    let labels: Vec<String> = rows.iter().map(|r| format!("{}/{}", r.cipher, r.implementation)).collect();
    let colors: Vec<usize> = rows.iter().map(colour).collect();
    for (title, axis, f) in HTML_METRICS {
        let bars: Vec<(String, f64, f64, f64)> = rows
            .iter()
            .zip(&labels)
            .filter_map(|(r, l)| {
                let (v, lo, hi) = f(r);
                v.is_finite().then(|| (l.clone(), v, lo.min(v), hi.max(v)))
            })
            .collect();
        if bars.is_empty() {
            continue;
        }
        let _ = write!(h, "<h3>{}</h3>{}", esc(title), bars_ci(&bars, &colors, axis, "cipher/implementation", &[]));
    }
    h += "<table><tr><th class=\"l\">cipher</th><th class=\"l\">impl</th><th>MB/s</th><th>95 % CI</th><th>cycles/B</th><th>init µs</th><th>frames/s</th><th>ROM B</th><th>state B</th><th>stack B</th><th>RSS B/B</th><th>µJ/frame (modelled)</th><th>nJ/B (modelled)</th><th class=\"l\">energy source</th><th>Rank</th><th>E-Rank (modelled)</th>";
    let measured = rows.iter().any(|r| r.energy_measured_source.is_some());
    h += if measured {
        "<th>nJ/B (measured ± U, k = 2)</th><th class=\"l\">measured source</th></tr>"
    } else {
        "</tr>"
    };
    for r in rows {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.1}</td><td>{:.1}–{:.1}</td><td>{:.2}</td><td>{:.2}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.1}</td><td>{:.3}</td><td class=\"l\">{}</td><td>{:.3e}</td><td>{:.3e}</td>",
            esc(&r.cipher),
            esc(&r.implementation),
            r.throughput_mb_s,
            r.throughput_ci95_lo_mb_s,
            r.throughput_ci95_hi_mb_s,
            r.cycles_per_byte,
            r.init_us,
            r.frames_per_s,
            r.code_bytes,
            r.state_bytes,
            r.peak_stack_bytes,
            r.rss_growth_per_byte,
            r.energy_per_frame_uj_modelled,
            r.energy_per_byte_nj_modelled,
            esc(&r.energy_source),
            r.rank_mb_s_per_byte,
            r.erank_mb_s_per_byte_uj_modelled
        );
        if measured {
            let _ = write!(
                h,
                "<td>{}</td><td class=\"l\">{}</td>",
                esc(measured_cell(r).trim()),
                esc(r.energy_measured_source.as_deref().unwrap_or(""))
            );
        }
        h += "</tr>";
    }
    h += "</table>";
    h
}
