//! The video study: every stream cipher and AEAD encrypts whole frames of a real clip (the
//! `frame` scenario, [`crate::video`] reads the clip). Its `summary.md` section — frames per
//! second and MB/s — follows from any run's frame groups, so [`Video`] derives it for every run.
use super::study::{Study, StudyInput, StudyOutput};
use crate::plan::{Scenario, Selection};
use crate::results::SummaryRow;
use crate::text::fmt_ns;

/// The preset name.
pub const NAME: &str = "video-study";

/// The stream-cipher study's video workload.
pub struct Video;

impl Study for Video {
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        "The stream-cipher study's video workload: every stream cipher and AEAD encrypts whole frames of a real clip (default data/video/bigbuckbunny.y4m from ./scripts/setup.sh, or --video FILE.y4m), one frame per operation with a fresh counter IV, init included; every frame round-trips bit-exactly before timing; frames/s and MB/s with 95 % CIs over 30 repetitions per <k,iv>"
    }
    fn selection(&self) -> Selection {
        Selection { all_stream_and_aead: true, scenarios: vec![Scenario::Frame], ..Default::default() }
    }
    fn reps(&self) -> usize {
        30
    }
    fn warmup(&self) -> usize {
        3
    }
    fn every_run(&self) -> bool {
        true
    }
    fn derive(&self, input: &StudyInput) -> Result<StudyOutput, String> {
        Ok(StudyOutput { markdown: frames_markdown(input.summary), ..Default::default() })
    }
}

/// The `summary.md` section for frame groups: frames per second (1e9 / median ns per frame,
/// its 95 % interval from the median's) and throughput (frame bytes / median time). Empty when
/// the run has no frame groups.
pub fn frames_markdown(summary: &[SummaryRow]) -> String {
    let rows: Vec<_> = summary.iter().filter(|r| r.scenario == "frame" && r.size_bits > 0).collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n## Video frames\n\nOne operation = one whole frame: next counter IV, frame copied into the output buffer, init + encrypt (stream) or encrypt + tag (AEAD). ");
    s.push_str("Before timing, every frame of the clip was encrypted and decrypted with each cipher and compared bit for bit. ");
    s.push_str("frames/s = 10⁹ / median ns per frame (95 % interval from the median's); MB/s = frame bytes / median time (10⁶ bytes).\n\n");
    s.push_str("| cipher | implementation | kiv | payload | frame bytes | median per frame | frames/s | 95 % CI of frames/s | MB/s |\n|---|---|---|---|---:|---:|---:|---|---:|\n");
    for r in rows {
        let fps = |ns: f64| if ns > 0.0 { 1e9 / ns } else { f64::NAN };
        let bytes = r.size_bits / 8;
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.1} | {:.1} – {:.1} | {:.1} |\n",
            r.cipher,
            r.implementation,
            r.kiv,
            r.payload,
            bytes,
            fmt_ns(r.median_ns),
            fps(r.median_ns),
            fps(r.median_ci95_hi_ns),
            fps(r.median_ci95_lo_ns),
            bytes as f64 / r.median_ns * 1e3
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_section_by_hand() {
        let row = |scenario: &str, med: f64| SummaryRow {
            cipher: "X".into(),
            implementation: "i".into(),
            language: "Rust".into(),
            family: "stream".into(),
            scenario: scenario.into(),
            kiv: "all".into(),
            size_bits: 8_000_000,
            payload: "video:v".into(),
            batch: 1,
            n: 10,
            mean_ns: med,
            sd_ns: 0.0,
            median_ns: med,
            round_spread_pct: None,
            min_ns: med,
            max_ns: med,
            p95_ns: med,
            p99_ns: med,
            ci95_lo_ns: med,
            ci95_hi_ns: med,
            median_ci95_lo_ns: med / 2.0,
            median_ci95_hi_ns: med * 2.0,
            outliers: 0,
            median_cycles: None,
            ns_per_bit: None,
            mbit_per_s: None,
            cycles_per_bit: None,
        };
        assert_eq!(frames_markdown(&[row("full", 1e6)]), "");
        // 1,000,000-byte frame in 2 ms: 500 frames/s (interval 250 – 1000), 500 MB/s
        let md = frames_markdown(&[row("frame", 2e6)]);
        assert!(
            md.ends_with("| X | i | all | video:v | 1000000 | 2.00 ms | 500.0 | 250.0 – 1000.0 | 500.0 |\n"),
            "{md}"
        );
    }
}
