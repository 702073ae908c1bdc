//! The row types of the studies' result files that the published-figures section reads: plain
//! serde rows below both the studies (which write them) and `published` (which sets them beside
//! the published tables), so neither imports the other.

use serde::{Deserialize, Serialize};

/// One row of Table 1 (`table1_dataset_vs_random.csv`): one payload's statistics.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Table1Row {
    /// Cipher name.
    pub cipher: String,
    /// Implementation name.
    pub implementation: String,
    /// Scenario (full, reading).
    pub scenario: String,
    /// Message size in bits.
    pub size_bits: u64,
    /// Payload kind (random or dataset:NAME).
    pub payload: String,
    /// Samples.
    pub n: u64,
    /// Mean ns per operation.
    pub mean_ns: f64,
    /// Median ns per operation.
    pub median_ns: f64,
    /// Sample standard deviation, ns.
    pub sd_ns: f64,
    /// Fastest sample, ns.
    pub min_ns: f64,
    /// Slowest sample, ns.
    pub max_ns: f64,
    /// median(dataset) / median(random), on both rows of a pair.
    pub ratio_dataset_random: f64,
    /// Mann–Whitney U two-sided p-value, dataset vs random (pooled), on both rows of a pair.
    pub mann_whitney_p: f64,
    /// "dataset slower/faster" only when p < α AND the ratio's CI lies wholly outside
    /// 1 ± margin_pct %.
    pub verdict: String,
    /// Bootstrap 95 % CI of ratio_dataset_random.
    pub ratio_ci95_lo: f64,
    /// Upper end of the bootstrap 95 % CI of the ratio.
    pub ratio_ci95_hi: f64,
    /// Practical-equivalence margin of the verdict, in %.
    pub margin_pct: f64,
}

/// One row of Table 2: dataset against random per key/IV variant.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Table2Row {
    /// Cipher name.
    pub cipher: String,
    /// Implementation name.
    pub implementation: String,
    /// Scenario.
    pub scenario: String,
    /// Message size in bits.
    pub size_bits: u64,
    /// Key/IV variant.
    pub kiv: String,
    /// The dataset's name.
    pub dataset: String,
    /// Mean ns on the dataset payload.
    pub dataset_mean_ns: f64,
    /// Mean ns on the random payload.
    pub random_mean_ns: f64,
    /// (dataset − random) / random × 100.
    pub diff_pct: f64,
    /// Two-sided Mann-Whitney U p-value, dataset vs random.
    pub mann_whitney_p: f64,
}

/// One row of `stream_study.csv`; units are in the column names.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StreamStudyRow {
    /// Cipher name.
    pub cipher: String,
    /// Implementation name.
    pub implementation: String,
    /// Language of the implementation.
    pub language: String,
    /// Where the code comes from (own code, a crate).
    pub origin: String,
    /// Message size of the throughput rows (bytes).
    pub long_message_bytes: u64,
    /// Repetitions behind the throughput figure.
    pub n: u64,
    /// `full` throughput on the long message, MB/s (median).
    pub throughput_mb_s: f64,
    /// Lower end of its 95 % CI.
    pub throughput_ci95_lo_mb_s: f64,
    /// Upper end of its 95 % CI.
    pub throughput_ci95_hi_mb_s: f64,
    /// `keystream` throughput on the long message, MB/s.
    pub keystream_mb_s: f64,
    /// Lower end of its 95 % CI.
    pub keystream_ci95_lo_mb_s: f64,
    /// Upper end of its 95 % CI.
    pub keystream_ci95_hi_mb_s: f64,
    /// Cycles per byte of `full` on the long message.
    pub cycles_per_byte: f64,
    /// Lower end of its 95 % CI.
    pub cycles_per_byte_ci95_lo: f64,
    /// Upper end of its 95 % CI.
    pub cycles_per_byte_ci95_hi: f64,
    /// What the cycles count (TSC ticks, core cycles).
    pub cycle_source: String,
    /// Key and IV setup (`init`), µs.
    pub init_us: f64,
    /// Lower end of its 95 % CI.
    pub init_ci95_lo_us: f64,
    /// Upper end of its 95 % CI.
    pub init_ci95_hi_us: f64,
    /// Bytes of one video frame.
    pub frame_bytes: u64,
    /// Frames encrypted per second.
    pub frames_per_s: f64,
    /// Lower end of its 95 % CI.
    pub frames_per_s_ci95_lo: f64,
    /// Upper end of its 95 % CI.
    pub frames_per_s_ci95_hi: f64,
    /// Measured on frames or derived from throughput.
    pub frames_source: String,
    /// Machine code of the cipher in this binary, bytes.
    pub code_bytes: u64,
    /// Functions counted in code_bytes.
    pub code_functions: u64,
    /// Bytes of the keyed cipher object.
    pub state_bytes: u64,
    /// Peak stack of one operation, bytes (stack painting).
    pub peak_stack_bytes: u64,
    /// state_bytes + peak_stack_bytes: the RAM of Rank and E-Rank.
    pub ram_bytes: u64,
    /// Resident memory growth over the operation, bytes.
    pub rss_growth_bytes: u64,
    /// rss_growth_bytes per byte of message.
    pub rss_growth_per_byte: f64,
    /// Device of the power model.
    pub power_device: String,
    /// Active power of the model, W.
    pub power_w: f64,
    /// Modelled energy per frame, µJ.
    pub energy_per_frame_uj_modelled: f64,
    /// Lower end of its 95 % CI.
    pub energy_per_frame_ci95_lo_uj_modelled: f64,
    /// Upper end of its 95 % CI.
    pub energy_per_frame_ci95_hi_uj_modelled: f64,
    /// Modelled energy per byte, nJ.
    pub energy_per_byte_nj_modelled: f64,
    /// Where the energy columns come from: `emulated:<board> (…)` or `host-time×power (…)`.
    pub energy_source: String,
    /// Rank: throughput ÷ (code bytes + 2 × RAM bytes), (MB/s) per byte.
    pub rank_mb_s_per_byte: f64,
    /// Lower end of its 95 % CI.
    pub rank_ci95_lo: f64,
    /// Upper end of its 95 % CI.
    pub rank_ci95_hi: f64,
    /// E-Rank: Rank ÷ modelled energy per frame.
    pub erank_mb_s_per_byte_uj_modelled: f64,
    /// Lower end of its 95 % CI.
    pub erank_ci95_lo_modelled: f64,
    /// Upper end of its 95 % CI.
    pub erank_ci95_hi_modelled: f64,
    /// `--energy-from`: a collected run's `full` energy at this message size ÷ its bytes, with
    /// its expanded uncertainty (k = 2); empty without one.
    #[serde(default)]
    pub energy_per_byte_nj_measured: Option<f64>,
    /// Expanded uncertainty (k = 2) of the measured energy per byte, nJ.
    #[serde(default)]
    pub energy_per_byte_u_nj_measured: Option<f64>,
    /// Where the measured energy comes from.
    #[serde(default)]
    pub energy_measured_source: Option<String>,
}
