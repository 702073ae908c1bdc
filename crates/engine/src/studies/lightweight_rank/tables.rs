//! The study's tables as rows: `lightweight-metrics.csv` (one row per implementation × scenario
//! × size), `lightweight-scores.csv` (one per ranked implementation, a score and rank column per
//! weighting) and `lightweight-weights.csv`.
use std::cell::RefCell;

use serde::Serialize;

use super::model::{CipherRow, Model, Ranking};
use super::scoring::{rr_pct, Weighting};
use crate::measured::MeasuredEnergy;

/// A number as Rust prints it (`0.000005`, not `5e-6`): the text these files have always had.
fn shown<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(x)
}

/// [`shown`], or an empty cell.
fn shown_opt<S: serde::Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(v) => s.collect_str(v),
        None => s.serialize_none(),
    }
}

/// One row of `lightweight-metrics.csv` (docs/result-files.md).
#[derive(Serialize)]
pub(super) struct MetricsRow {
    cipher: String,
    implementation: String,
    family: String,
    scenario: String,
    message_bytes: usize,
    blocks: Option<usize>,
    block_bytes: usize,
    #[serde(serialize_with = "shown")]
    median_ns: f64,
    #[serde(serialize_with = "shown_opt")]
    ns_per_block: Option<f64>,
    #[serde(serialize_with = "shown_opt")]
    ns_per_byte: Option<f64>,
    #[serde(serialize_with = "shown_opt")]
    throughput_mb_s: Option<f64>,
    #[serde(serialize_with = "shown")]
    energy_per_op_j_modelled: f64,
    #[serde(serialize_with = "shown_opt")]
    energy_per_block_j_modelled: Option<f64>,
    #[serde(serialize_with = "shown_opt")]
    energy_per_byte_j_modelled: Option<f64>,
    #[serde(serialize_with = "shown_opt")]
    rr_pct_vs_aes128: Option<f64>,
    memory_bytes: usize,
    object_bytes: usize,
    power_profile: String,
    #[serde(serialize_with = "shown")]
    watts: f64,
    energy_source: String,
    #[serde(serialize_with = "shown_opt")]
    energy_per_op_j_measured: Option<f64>,
    #[serde(serialize_with = "shown_opt")]
    energy_per_op_u_j_measured: Option<f64>,
    energy_measured_source: Option<String>,
}

/// The metrics rows, and a note for each row `--energy-from` has no measurement for.
pub(super) fn metrics(model: &Model, measured: Option<&MeasuredEnergy>) -> (Vec<MetricsRow>, Vec<String>) {
    let misses = RefCell::new(Vec::new());
    let row = |r: &CipherRow, sc: &str, bytes: usize, t: f64| {
        let (e_op, energy_source) = model.energy(&r.cipher, &r.implementation, sc, bytes, t);
        let m = measured.and_then(|m| {
            let found = m.find(&r.cipher, &r.implementation, sc, bytes as u64 * 8);
            if found.is_none() {
                let note = m.miss_note("lightweight-metrics.csv", &r.cipher, &r.implementation, sc, bytes as u64 * 8);
                misses.borrow_mut().push(note);
            }
            found
        });
        // keysetup has no message: its per-block, per-byte and throughput cells stay empty.
        let blocks = (sc != "keysetup").then(|| bytes.div_ceil(r.block_bytes));
        let per = |d: Option<usize>, x: f64| d.map(|d| x / d as f64);
        MetricsRow {
            cipher: r.cipher.clone(),
            implementation: r.implementation.clone(),
            family: r.family.clone(),
            scenario: sc.to_string(),
            message_bytes: bytes,
            blocks,
            block_bytes: r.block_bytes,
            median_ns: t,
            ns_per_block: per(blocks, t),
            ns_per_byte: per(blocks.map(|_| bytes), t),
            throughput_mb_s: blocks.map(|_| bytes as f64 / t * 1000.0),
            energy_per_op_j_modelled: e_op,
            energy_per_block_j_modelled: per(blocks, e_op),
            energy_per_byte_j_modelled: per(blocks.map(|_| bytes), e_op),
            rr_pct_vs_aes128: model.ref_time(sc, bytes).map(|tr| rr_pct(t, tr)),
            memory_bytes: if blocks.is_some() { r.object_bytes + bytes + r.extra_bytes } else { r.object_bytes },
            object_bytes: r.object_bytes,
            power_profile: model.profile.device.clone(),
            watts: model.profile.active_w,
            energy_source,
            energy_per_op_j_measured: m.as_ref().map(|x| x.e_op_j),
            energy_per_op_u_j_measured: m.as_ref().map(|x| x.u_op_j),
            energy_measured_source: m.map(|x| x.source),
        }
    };
    let mut rows = Vec::new();
    for r in &model.rows {
        rows.push(row(r, "keysetup", 0, r.keysetup_ns));
        for ((sc, bytes), &t) in &r.times {
            rows.push(row(r, sc, *bytes, t));
        }
    }
    (rows, misses.into_inner())
}

/// `lightweight-scores.csv`: fixed columns, then `wsm_NAME,rank_NAME` per weighting.
pub(super) fn scores_csv(ranking: &Ranking, weightings: &[Weighting]) -> Result<Vec<u8>, String> {
    let mut header: Vec<String> = [
        "cipher",
        "implementation",
        "energy_per_byte_j_modelled",
        "throughput_mb_s",
        "key_schedule_ns",
        "memory_bytes",
        "score_energy_per_byte",
        "score_throughput",
        "score_key_schedule",
        "score_memory",
        "energy_source",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for w in weightings {
        header.push(format!("wsm_{}", w.name));
        header.push(format!("rank_{}", w.name));
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| format!("lightweight-scores.csv: {e}");
    w.write_record(&header).map_err(err)?;
    for (i, r) in ranking.used.iter().enumerate() {
        let mut cells = vec![r.cipher.clone(), r.implementation.clone()];
        cells.extend(ranking.crit[i].iter().chain(&ranking.norm[i]).map(f64::to_string));
        cells.push(ranking.sources[i].clone());
        for k in 0..weightings.len() {
            cells.push(ranking.scores[k][i].to_string());
            cells.push(ranking.ranks[k][i].to_string());
        }
        w.write_record(&cells).map_err(err)?;
    }
    w.into_inner().map_err(|e| format!("lightweight-scores.csv: {e}"))
}

/// One row of `lightweight-weights.csv`.
#[derive(Serialize)]
pub(super) struct WeightRow<'a> {
    weighting: &'a str,
    #[serde(serialize_with = "shown")]
    energy_per_byte: f64,
    #[serde(serialize_with = "shown")]
    throughput: f64,
    #[serde(serialize_with = "shown")]
    key_schedule: f64,
    #[serde(serialize_with = "shown")]
    memory: f64,
}

/// The weightings used, one row each.
pub(super) fn weights(weightings: &[Weighting]) -> Vec<WeightRow<'_>> {
    weightings
        .iter()
        .map(|w| WeightRow {
            weighting: &w.name,
            energy_per_byte: w.w[0],
            throughput: w.w[1],
            key_schedule: w.w[2],
            memory: w.w[3],
        })
        .collect()
}
