//! The study's ciphers, file names, criteria and the weighted-scoring-model arithmetic: the facts
//! every step (model, tables, render) shares.

/// The preset name.
pub const NAME: &str = "lightweight-study";
/// Per-implementation metrics (times, throughput, RR%, energy, memory).
pub const METRICS_FILE: &str = "lightweight-metrics.csv";
/// Normalised criteria, WSM scores and ranks per weighting.
pub const SCORES_FILE: &str = "lightweight-scores.csv";
/// The weightings used.
pub const WEIGHTS_FILE: &str = "lightweight-weights.csv";

/// The study's eight ciphers, as catalogue selectors.
pub const CIPHERS: [&str; 8] =
    ["AES-128/rustcrypto", "LEA-128", "SPECK-64-128", "XTEA", "HIGHT", "SCHWAEMM256-128", "TinyJAMBU-128", "Xoodyak"];
/// Message sizes in bytes: 16 B (one AES block, a sensor-sized message) up to 1 KiB.
pub const SIZES_BYTES: [usize; 4] = [16, 64, 256, 1024];
/// The reference of RR%.
pub const REFERENCE: &str = "AES-128";
/// Message size for the energy and memory criteria (small messages are the battery case).
pub const SMALL: usize = 16;

/// The four WSM criteria, in column order.
pub const CRITERIA: [&str; 4] = ["energy_per_byte", "throughput", "key_schedule", "memory"];
/// Whether larger is better, per criterion.
pub const BENEFIT: [bool; 4] = [false, true, false, false];

/// A named weighting over [`CRITERIA`].
#[derive(Clone, Debug, PartialEq)]
pub struct Weighting {
    /// Its name in the tables (battery, speed, or from the file).
    pub name: String,
    /// Weights of energy/byte, throughput, key schedule, memory.
    pub w: [f64; 4],
}

/// Built-in weightings (this project's choice; the study's exact weights are not published
/// in a form we could find — see docs/rankings.md).
pub fn builtin_weightings() -> Vec<Weighting> {
    vec![
        Weighting { name: "battery".into(), w: [0.5, 0.1, 0.2, 0.2] },
        Weighting { name: "speed".into(), w: [0.1, 0.5, 0.3, 0.1] },
    ]
}

/// Parse a weights CSV: header `weighting,energy_per_byte,throughput,key_schedule,memory`,
/// one weighting per line, non-negative weights with a positive sum.
pub fn parse_weights(text: &str, origin: &str) -> Result<Vec<Weighting>, String> {
    let mut rd = csv::ReaderBuilder::new().comment(Some(b'#')).trim(csv::Trim::All).from_reader(text.as_bytes());
    let headers = rd.headers().map_err(|e| format!("{origin}: {e}"))?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("{origin}: line 1: missing column '{name}' (need weighting,{})", CRITERIA.join(",")))
    };
    let name_col = col("weighting")?;
    let cols: Vec<usize> = CRITERIA.iter().map(|c| col(c)).collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(|e| format!("{origin}: {e}"))?;
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        let mut w = [0.0; 4];
        for (i, &c) in cols.iter().enumerate() {
            let raw = rec.get(c).unwrap_or("");
            let v: f64 = raw
                .parse()
                .map_err(|_| format!("{origin}: line {line}, column '{}': '{raw}' is not a number", CRITERIA[i]))?;
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{origin}: line {line}, column '{}': weights must be ≥ 0, got {v}", CRITERIA[i]));
            }
            w[i] = v;
        }
        if w.iter().sum::<f64>() <= 0.0 {
            return Err(format!("{origin}: line {line}: the weights sum to 0"));
        }
        out.push(Weighting { name: rec.get(name_col).unwrap_or("").to_string(), w });
    }
    if out.is_empty() {
        return Err(format!("{origin}: no weightings"));
    }
    Ok(out)
}

/// `--weights`: None = both built-ins; "battery"/"speed" = that one; otherwise a CSV file.
pub fn resolve_weights(opt: Option<&str>) -> Result<Vec<Weighting>, String> {
    match opt {
        None => Ok(builtin_weightings()),
        Some(name) => {
            if let Some(w) = builtin_weightings().into_iter().find(|w| w.name.eq_ignore_ascii_case(name)) {
                return Ok(vec![w]);
            }
            let text = std::fs::read_to_string(name)
                .map_err(|e| format!("--weights: '{name}' is neither battery, speed nor a readable file ({e})"))?;
            parse_weights(&text, name)
        }
    }
}

/// Normalise one criterion over the alternatives: benefit x / max, cost min / x.
pub fn normalise(values: &[f64], benefit: bool) -> Vec<f64> {
    let max = values.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().cloned().fold(f64::INFINITY, f64::min);
    values.iter().map(|&x| if benefit { x / max } else { min / x }).collect()
}

/// WSM score of one alternative from its normalised scores.
pub fn wsm(scores: &[f64; 4], w: &[f64; 4]) -> f64 {
    scores.iter().zip(w).map(|(s, w)| s * w).sum::<f64>() / w.iter().sum::<f64>()
}

/// RR% = t / t_ref × 100.
pub fn rr_pct(t: f64, t_ref: f64) -> f64 {
    t / t_ref * 100.0
}

/// Ranks (1 = best) of scores, ties broken by input order.
pub fn ranks(scores: &[f64]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut r = vec![0; scores.len()];
    for (pos, &i) in idx.iter().enumerate() {
        r[i] = pos + 1;
    }
    r
}
