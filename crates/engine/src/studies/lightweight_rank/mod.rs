//! The eight-cipher lightweight study (ESP32 study: AES-128, LEA-128, SPECK-64/128, XTEA, HIGHT,
//! SCHWAEMM, TinyJAMBU, Xoodyak): time per block and per byte, throughput, modelled energy,
//! RR% against AES-128, memory per operation and a weighted-scoring-model (WSM) ranking under
//! a battery-priority and a speed-priority weighting. Definitions are in docs/rankings.md:
//! - RR% = median time of the cipher / median time of AES-128 (same scenario, message size,
//!   machine and run) × 100; below 100 the cipher is faster than AES-128.
//! - memory per operation = bytes of the live cipher object after the key schedule (measured
//!   with `size_of_val` on the boxed implementation: state + round keys it keeps) + the
//!   message buffer (operations are in place) + tag + nonce. Stack is not included.
//! - WSM: each criterion normalised to (0, 1] by its best value — benefit x / max x, cost
//!   min x / x — and the score is Σ wⱼ·sⱼ / Σ wⱼ; rank 1 = highest score.
//!
//! The study is computed in three steps: the model ([`model`]: medians, energy, ranking), the
//! tables as rows ([`tables`]) and their rendering ([`render`]: Markdown and report.html).
use super::study::{Study, StudyArgs, StudyInput, StudyOption, StudyOptions, StudyOutput, StudyRun};
use crate::plan::{Kiv, Scenario, Selection};
use crate::results::to_csv;

mod model;
mod render;
mod scoring;
mod tables;

pub use render::html;
// The study's facts and scoring, shared by the steps below (a child, so no step imports its parent).
pub use scoring::*;

/// The ESP32 lightweight-cipher study.
pub struct Lightweight;

impl Study for Lightweight {
    fn published(&self, _ours: &crate::published::Ours) -> Option<crate::published::Section> {
        Some(crate::published::lightweight())
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        "The ESP32 lightweight-cipher study: AES-128, LEA-128, SPECK-64/128, XTEA, HIGHT, SCHWAEMM256-128, TinyJAMBU-128, Xoodyak × {keysetup, encrypt, decrypt} × {16, 64, 256, 1024} B, static and random key; per-block/per-byte time, throughput, modelled energy (ESP32 profile unless --power-profile/--watts), RR% against AES-128, memory per operation, WSM rankings (battery/speed, --weights) and a radar chart"
    }
    fn selection(&self) -> Selection {
        Selection {
            ciphers: CIPHERS.iter().map(|s| s.to_string()).collect(),
            scenarios: vec![Scenario::Keysetup, Scenario::Encrypt, Scenario::Decrypt],
            sizes_bits: SIZES_BYTES.iter().map(|b| b * 8).collect(),
            kivs: vec![Kiv { random_key: false, random_iv: false }, Kiv { random_key: true, random_iv: false }],
            ..Default::default()
        }
    }
    fn reps(&self) -> usize {
        100
    }
    fn warmup(&self) -> usize {
        10
    }
    fn options(&self) -> &'static [StudyOption] {
        &[
            StudyOption::PowerProfile,
            StudyOption::Watts,
            StudyOption::Weights,
            StudyOption::Board,
            StudyOption::EnergyFrom,
        ]
    }
    fn take_options(&self, given: &StudyArgs, into: &mut StudyOptions) -> Result<(), String> {
        super::study::take_power_options(given, into)?;
        super::study::take_energy_from(given, into)?;
        if let Some(w) = &given.weights {
            resolve_weights(Some(w))?;
            into.weights = Some(w.clone());
        }
        Ok(())
    }
    fn files(&self) -> &'static [&'static str] {
        &[METRICS_FILE, SCORES_FILE, WEIGHTS_FILE]
    }
    fn derive(&self, input: &StudyInput) -> Result<StudyOutput, String> {
        study(input)
    }
    fn html(&self, run: &StudyRun, fig: &mut usize) -> Result<String, String> {
        Ok(html(run.dir, fig))
    }
}

/// Rows without a measurement listed one by one in the notes; the rest are counted.
const MISSES_LISTED: usize = 20;

/// The notes of run.json: how energy is modelled, a missing reference, measured energy.
fn notes(model: &model::Model, input: &StudyInput) -> Vec<String> {
    let profile = &model.profile;
    let mut notes = vec![match &model.board {
        Some(b) => format!(
            "lightweight-study: energy columns are MODELLED, not measured: keysetup and encrypt from the emulated cycles of the cipher's image on {} ({}, {} MHz, {} V × {} mA, {}), decrypt and ciphers without an image from host time × {} W; the energy_source column says which (docs/metrics.md)",
            b.id, b.core, b.clock_mhz, b.volts, b.active_ma, b.status, profile.active_w
        ),
        None => format!(
            "lightweight-study: energy columns are MODELLED (time × {} W, profile '{}': {}), not measured",
            profile.active_w, profile.device, profile.source
        ),
    }];
    if model.reference().is_none() {
        notes.push("lightweight-study: AES-128 was not measured, so RR% columns are empty".into());
    }
    if let Some(m) = &input.options.energy_from {
        notes.push(format!(
            "lightweight-study: energy_per_op_j_measured from {} (a collected run, docs/power.md): measured beside the modelled columns, k = 2 uncertainty; the WSM ranking stays on the modelled energy (the same model for every cipher)",
            m.path.display()
        ));
    }
    notes
}

/// The study's files, Markdown and notes from a run's samples: model → rows → text.
pub fn study(input: &StudyInput) -> Result<StudyOutput, String> {
    let model = model::Model::new(input)?;
    let measured = input.options.energy_from.as_ref();
    let mut notes = notes(&model, input);
    // Measured energy (--energy-from) beside the modelled: per row, matched by cipher,
    // implementation, scenario and message size; a row without one is listed in the notes.
    let (metrics, misses) = tables::metrics(&model, measured);
    let n_missed = misses.len();
    notes.extend(misses.into_iter().take(MISSES_LISTED));
    if n_missed > MISSES_LISTED {
        notes.push(format!("lightweight-metrics.csv: … and {} more rows not measured", n_missed - MISSES_LISTED));
    }
    let ranking = model.ranking()?;
    let md = render::markdown(&model, &ranking, measured, &input.record.machine.cpu_model);
    Ok(StudyOutput {
        files: vec![
            // Also on its own: `lwcbench report` rewrites summary.md from summary.csv alone.
            ("lightweight-rank.md".into(), md.clone().into_bytes()),
            (METRICS_FILE.into(), to_csv(&metrics)),
            (SCORES_FILE.into(), tables::scores_csv(&ranking, &model.weightings)?),
            (WEIGHTS_FILE.into(), to_csv(&tables::weights(&model.weightings))),
        ],
        markdown: md,
        notes,
    })
}

#[cfg(test)]
mod tests;
