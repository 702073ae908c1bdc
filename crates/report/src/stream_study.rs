//! The stream-cipher study's section of report.html: one bar chart per metric with its 95 %
//! confidence interval (as the study drew them) and the full table, from `stream_study.csv`.
use std::fmt::Write;
use std::path::Path;

use lwcbench_engine::html::{bars_ci, esc};
use lwcbench_engine::studies::stream_study::{StreamStudyRow, FILE};

/// Rows of `stream_study.csv` in `dir`, or none if the run had no stream study.
pub fn load(dir: &Path) -> Result<Vec<StreamStudyRow>, String> {
    let p = dir.join(FILE);
    if !p.exists() {
        return Ok(Vec::new());
    }
    let mut r = csv::Reader::from_path(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    r.deserialize()
        .map(|row| {
            row.map_err(|e| {
                format!("{}{}: {e}", p.display(), e.position().map(|q| format!(":{}", q.line())).unwrap_or_default())
            })
        })
        .collect()
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

const METRICS: &[Metric] = &[
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

/// The HTML section; empty when there are no rows.
pub fn html(rows: &[StreamStudyRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h2 id=\"stream-study\">Stream-cipher study</h2>");
    let r0 = &rows[0];
    let _ = write!(
        h,
        "<p>From stream_study.csv (methods: docs/metrics.md). Throughput on {} B messages, {} repetitions with a fresh random key/IV each; bars are medians with distribution-free 95 % CIs. \
<b>Energy and E-Rank are MODELLED</b>: measured time × {} W ({}), not measured. Frames: {}. Cycles: {}. Colours: Rust, C++.</p>",
        r0.long_message_bytes,
        r0.n,
        r0.power_w,
        esc(&r0.power_device),
        esc(&r0.frames_source),
        esc(&r0.cycle_source)
    );
    let labels: Vec<String> = rows.iter().map(|r| format!("{}/{}", r.cipher, r.implementation)).collect();
    let colors: Vec<usize> = rows.iter().map(colour).collect();
    for (title, axis, f) in METRICS {
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
    h += "<table><tr><th class=\"l\">cipher</th><th class=\"l\">impl</th><th>MB/s</th><th>95 % CI</th><th>cycles/B</th><th>init µs</th><th>frames/s</th><th>ROM B</th><th>state B</th><th>stack B</th><th>RSS B/B</th><th>µJ/frame (modelled)</th><th>nJ/B (modelled)</th><th>Rank</th><th>E-Rank (modelled)</th></tr>";
    for r in rows {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.1}</td><td>{:.1}–{:.1}</td><td>{:.2}</td><td>{:.2}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.1}</td><td>{:.3}</td><td>{:.3e}</td><td>{:.3e}</td></tr>",
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
            r.rank_mb_s_per_byte,
            r.erank_mb_s_per_byte_uj_modelled
        );
    }
    h += "</table>";
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, lang: &str, thr: f64) -> StreamStudyRow {
        StreamStudyRow {
            cipher: name.into(),
            implementation: "rust".into(),
            language: lang.into(),
            origin: "own code".into(),
            long_message_bytes: 65536,
            n: 30,
            throughput_mb_s: thr,
            throughput_ci95_lo_mb_s: thr * 0.9,
            throughput_ci95_hi_mb_s: thr * 1.1,
            keystream_mb_s: thr,
            keystream_ci95_lo_mb_s: thr,
            keystream_ci95_hi_mb_s: thr,
            cycles_per_byte: 3.0,
            cycles_per_byte_ci95_lo: 2.9,
            cycles_per_byte_ci95_hi: 3.1,
            cycle_source: "TSC".into(),
            init_us: 1.0,
            init_ci95_lo_us: 0.9,
            init_ci95_hi_us: 1.1,
            frame_bytes: 921600,
            frames_per_s: 1000.0,
            frames_per_s_ci95_lo: 900.0,
            frames_per_s_ci95_hi: 1100.0,
            frames_source: "derived".into(),
            code_bytes: 2000,
            code_functions: 5,
            state_bytes: 36,
            peak_stack_bytes: 200,
            ram_bytes: 236,
            rss_growth_bytes: 921600,
            rss_growth_per_byte: 1.0,
            power_device: "Raspberry Pi Zero W".into(),
            power_w: 0.75,
            energy_per_frame_uj_modelled: 750.0,
            energy_per_frame_ci95_lo_uj_modelled: 700.0,
            energy_per_frame_ci95_hi_uj_modelled: 800.0,
            energy_per_byte_nj_modelled: 0.8,
            rank_mb_s_per_byte: 0.4,
            rank_ci95_lo: 0.35,
            rank_ci95_hi: 0.45,
            erank_mb_s_per_byte_uj_modelled: 5e-4,
            erank_ci95_lo_modelled: 4e-4,
            erank_ci95_hi_modelled: 6e-4,
        }
    }

    #[test]
    fn one_chart_per_metric_and_round_trip() {
        let rows = vec![row("Trivium", "Rust", 1000.0), row("DRACO", "C++", 200.0)];
        let h = html(&rows);
        assert_eq!(h.matches("<svg").count(), METRICS.len());
        assert!(h.contains("MODELLED") && h.contains("Trivium/rust: 1000.000 (95 % CI 900.000–1100.000)"), "{h}");
        let dir = std::env::temp_dir().join(format!("lwcbench-ss-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(FILE), lwcbench_engine::results::to_csv(&rows)).unwrap();
        assert_eq!(load(&dir).unwrap(), rows);
        std::fs::write(dir.join(FILE), "cipher\nx\n").unwrap();
        assert!(load(&dir).unwrap_err().contains(FILE));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(html(&[]).is_empty());
    }
}
