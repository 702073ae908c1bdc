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
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use lwcbench_catalog::Make;

use super::study::{Study, StudyArgs, StudyInput, StudyOption, StudyOptions, StudyOutput, StudyRun};
use crate::board;
use crate::html::{col, esc, num, radar, read_table};
use crate::plan::{Kiv, Scenario, Selection};
use crate::power::{self, PowerProfile};
use crate::text::fmt_ns;

pub const NAME: &str = "lightweight-study";
/// Per-implementation metrics (times, throughput, RR%, energy, memory).
pub const METRICS_FILE: &str = "lightweight-metrics.csv";
/// Normalised criteria, WSM scores and ranks per weighting.
pub const SCORES_FILE: &str = "lightweight-scores.csv";
/// The weightings used.
pub const WEIGHTS_FILE: &str = "lightweight-weights.csv";

/// The ESP32 lightweight-cipher study.
pub struct Lightweight;

impl Study for Lightweight {
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
    pub name: String,
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

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    lwcbench_stats::quantile_sorted(v, 0.5)
}

/// Live bytes of the implementation's object after its key schedule, and its tag + nonce bytes.
fn object_bytes(cipher: &str, implementation: &str) -> Option<(usize, usize)> {
    let e = lwcbench_catalog::registry()
        .into_iter()
        .find(|e| e.info.name == cipher && e.info.implementation == implementation)?;
    let key = vec![0x5au8; e.info.key_bytes()];
    match e.make? {
        Make::Block(mk) => {
            let mut c = mk();
            c.set_key(&key).ok()?;
            Some((std::mem::size_of_val(&*c), 0))
        }
        Make::Aead(mk) => {
            let mut c = mk();
            c.set_key(&key).ok()?;
            Some((std::mem::size_of_val(&*c), e.info.tag_bytes() + e.info.iv_bytes()))
        }
        Make::Stream(_) | Make::Mode(_) => None,
    }
}

struct CipherRow {
    cipher: String,
    implementation: String,
    family: String,
    block_bytes: usize,
    object_bytes: usize,
    extra_bytes: usize,
    keysetup_ns: f64,
    /// (scenario, bytes) → median ns
    times: BTreeMap<(String, usize), f64>,
}

/// Rows without a measurement listed one by one in the notes; the rest are counted.
const MISSES_LISTED: usize = 20;

/// A CSV text cell: quoted, inner quotes doubled.
fn csv_text(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

pub fn study(input: &StudyInput) -> Result<StudyOutput, String> {
    let opts = &input.options;
    // Default ESP32: the study ran on one. Modelled, never measured.
    let board = opts.board.as_deref().map(board::find).transpose()?;
    let profile: PowerProfile = match &board {
        Some(b) => b.fallback_profile(),
        None => power::resolve(Some(opts.power_profile.as_deref().unwrap_or("ESP32")), opts.watts)?,
    };
    // Joules of one operation and where they come from: the board's emulated cycles when the
    // cipher has an image (keysetup = init, encrypt = the message phase; decrypt has none),
    // else host time × power.
    let energy = |cipher: &str, imp: &str, scenario: &str, bytes: usize, host_ns: f64| -> (f64, String) {
        match &board {
            Some(b) => match (b.cycles(cipher, imp), scenario) {
                (Some(c), "keysetup") => (b.energy_j(c.init), b.label()),
                (Some(c), "encrypt") => (b.energy_j(c.message(bytes as f64)), b.label()),
                _ => (power::energy_j(&profile, host_ns), b.fallback_label()),
            },
            None => (power::energy_j(&profile, host_ns), board::host_label(&profile)),
        }
    };
    let weightings = resolve_weights(opts.weights.as_deref())?;

    // Medians per implementation × scenario × size, all key/IV variants together.
    let mut raw: BTreeMap<(String, String, String, u64), Vec<f64>> = BTreeMap::new();
    let mut family: BTreeMap<(String, String), String> = BTreeMap::new();
    for r in input.samples.iter().filter(|r| matches!(r.scenario.as_str(), "keysetup" | "encrypt" | "decrypt")) {
        raw.entry((r.cipher.clone(), r.implementation.clone(), r.scenario.clone(), r.size_bits))
            .or_default()
            .push(r.ns_per_op);
        family.insert((r.cipher.clone(), r.implementation.clone()), r.family.clone());
    }
    let mut rows: Vec<CipherRow> = Vec::new();
    for ((cipher, imp), fam) in &family {
        let info = lwcbench_catalog::registry()
            .into_iter()
            .find(|e| e.info.name == cipher.as_str() && e.info.implementation == imp.as_str())
            .map(|e| e.info);
        let Some(info) = info else { continue };
        let (object_bytes, extra_bytes) = object_bytes(cipher, imp).unwrap_or((0, 0));
        let mut times = BTreeMap::new();
        let mut keysetup_ns = f64::NAN;
        for ((_, _, sc, bits), v) in raw.iter_mut().filter(|((c, i, ..), _)| c == cipher && i == imp) {
            let m = median(v);
            if sc == "keysetup" {
                keysetup_ns = m;
            } else {
                times.insert((sc.clone(), (*bits / 8) as usize), m);
            }
        }
        rows.push(CipherRow {
            cipher: cipher.clone(),
            implementation: imp.clone(),
            family: fam.clone(),
            block_bytes: info.block_bytes().max(1),
            object_bytes,
            extra_bytes,
            keysetup_ns,
            times,
        });
    }
    if rows.is_empty() {
        return Err("lightweight-study: no keysetup/encrypt/decrypt samples of block ciphers or AEADs".into());
    }
    // Order as in the study, others after.
    let pos = |r: &CipherRow| {
        CIPHERS.iter().position(|c| c.split('/').next() == Some(r.cipher.as_str())).unwrap_or(usize::MAX)
    };
    rows.sort_by_key(|r| (pos(r), r.cipher.clone(), r.implementation.clone()));
    let reference = rows.iter().find(|r| r.cipher == REFERENCE);
    let ref_time = |sc: &str, bytes: usize| -> Option<f64> {
        let r = reference?;
        if sc == "keysetup" {
            Some(r.keysetup_ns)
        } else {
            r.times.get(&(sc.to_string(), bytes)).copied()
        }
    };
    let mut notes = vec![match &board {
        Some(b) => format!(
            "lightweight-study: energy columns are MODELLED, not measured: keysetup and encrypt from the emulated cycles of the cipher's image on {} ({}, {} MHz, {} V × {} mA, {}), decrypt and ciphers without an image from host time × {} W; the energy_source column says which (docs/metrics.md)",
            b.id, b.core, b.clock_mhz, b.volts, b.active_ma, b.status, profile.active_w
        ),
        None => format!(
            "lightweight-study: energy columns are MODELLED (time × {} W, profile '{}': {}), not measured",
            profile.active_w, profile.device, profile.source
        ),
    }];
    if reference.is_none() {
        notes.push("lightweight-study: AES-128 was not measured, so RR% columns are empty".into());
    }

    // Measured energy (--energy-from) beside the modelled: per row, matched by cipher,
    // implementation, scenario and message size; a row without one is listed in the notes.
    let misses = std::cell::RefCell::new(Vec::new());
    let measured = |cipher: &str, imp: &str, sc: &str, bytes: usize| -> Option<crate::measured::Measured> {
        let m = opts.energy_from.as_ref()?;
        let size_bits = bytes as u64 * 8;
        let found = m.find(cipher, imp, sc, size_bits);
        if found.is_none() {
            misses.borrow_mut().push(m.miss_note("lightweight-metrics.csv", cipher, imp, sc, size_bits));
        }
        found
    };
    let measured_cells = |cipher: &str, imp: &str, sc: &str, bytes: usize| -> String {
        match measured(cipher, imp, sc, bytes) {
            Some(x) => format!("{},{},{}", x.e_op_j, x.u_op_j, csv_text(&x.source)),
            None => ",,".into(),
        }
    };
    if let Some(m) = &opts.energy_from {
        notes.push(format!(
            "lightweight-study: energy_per_op_j_measured from {} (a collected run, docs/power.md): measured beside the modelled columns, k = 2 uncertainty; the WSM ranking stays on the modelled energy (the same model for every cipher)",
            m.path.display()
        ));
    }

    // Per-operation metrics table.
    let mut m = String::from("cipher,implementation,family,scenario,message_bytes,blocks,block_bytes,median_ns,ns_per_block,ns_per_byte,throughput_mb_s,energy_per_op_j_modelled,energy_per_block_j_modelled,energy_per_byte_j_modelled,rr_pct_vs_aes128,memory_bytes,object_bytes,power_profile,watts,energy_source,energy_per_op_j_measured,energy_per_op_u_j_measured,energy_measured_source\n");
    let fmt_opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    for r in &rows {
        let rr = ref_time("keysetup", 0).map(|t| rr_pct(r.keysetup_ns, t));
        let (e_key, src) = energy(&r.cipher, &r.implementation, "keysetup", 0, r.keysetup_ns);
        let _ = writeln!(
            m,
            "{},{},{},keysetup,0,,{},{},,,,{},,,{},{},{},\"{}\",{},\"{}\",{}",
            r.cipher,
            r.implementation,
            r.family,
            r.block_bytes,
            r.keysetup_ns,
            e_key,
            fmt_opt(rr),
            r.object_bytes,
            r.object_bytes,
            profile.device,
            profile.active_w,
            src,
            measured_cells(&r.cipher, &r.implementation, "keysetup", 0)
        );
        for ((sc, bytes), &t) in &r.times {
            let blocks = bytes.div_ceil(r.block_bytes);
            let rr = ref_time(sc, *bytes).map(|tr| rr_pct(t, tr));
            let (e_op, src) = energy(&r.cipher, &r.implementation, sc, *bytes, t);
            let _ = writeln!(
                m,
                "{},{},{},{sc},{bytes},{blocks},{},{t},{},{},{},{},{},{},{},{},{},\"{}\",{},\"{}\",{}",
                r.cipher,
                r.implementation,
                r.family,
                r.block_bytes,
                t / blocks as f64,
                t / *bytes as f64,
                *bytes as f64 / t * 1000.0,
                e_op,
                e_op / blocks as f64,
                e_op / *bytes as f64,
                fmt_opt(rr),
                r.object_bytes + bytes + r.extra_bytes,
                r.object_bytes,
                profile.device,
                profile.active_w,
                src,
                measured_cells(&r.cipher, &r.implementation, sc, *bytes)
            );
        }
    }
    let misses = misses.into_inner();
    let n_missed = misses.len();
    notes.extend(misses.into_iter().take(MISSES_LISTED));
    if n_missed > MISSES_LISTED {
        notes.push(format!("lightweight-metrics.csv: … and {} more rows not measured", n_missed - MISSES_LISTED));
    }

    // Criteria per cipher, then the WSM.
    let large = |r: &CipherRow| r.times.keys().filter(|(s, _)| s == "encrypt").map(|(_, b)| *b).max();
    let small = |r: &CipherRow| r.times.keys().filter(|(s, _)| s == "encrypt").map(|(_, b)| *b).min();
    let mut crit: Vec<[f64; 4]> = Vec::new();
    let mut used: Vec<&CipherRow> = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    for r in &rows {
        let (Some(sm), Some(lg)) = (small(r), large(r)) else { continue };
        let (e_sm, src) = energy(&r.cipher, &r.implementation, "encrypt", sm, r.times[&("encrypt".to_string(), sm)]);
        let e = e_sm / sm as f64;
        let thr = lg as f64 / r.times[&("encrypt".to_string(), lg)] * 1000.0;
        if !r.keysetup_ns.is_finite() {
            continue;
        }
        crit.push([e, thr, r.keysetup_ns, (r.object_bytes + sm + r.extra_bytes) as f64]);
        used.push(r);
        sources.push(src);
    }
    if used.is_empty() {
        return Err("lightweight-study: the ranking needs keysetup and encrypt samples".into());
    }
    let norm_cols: Vec<Vec<f64>> =
        (0..4).map(|j| normalise(&crit.iter().map(|c| c[j]).collect::<Vec<_>>(), BENEFIT[j])).collect();
    let norm: Vec<[f64; 4]> =
        (0..used.len()).map(|i| [norm_cols[0][i], norm_cols[1][i], norm_cols[2][i], norm_cols[3][i]]).collect();
    let scores: Vec<Vec<f64>> = weightings.iter().map(|w| norm.iter().map(|s| wsm(s, &w.w)).collect()).collect();
    let rank_v: Vec<Vec<usize>> = scores.iter().map(|s| ranks(s)).collect();

    let mut sc = String::from("cipher,implementation,energy_per_byte_j_modelled,throughput_mb_s,key_schedule_ns,memory_bytes,score_energy_per_byte,score_throughput,score_key_schedule,score_memory,energy_source");
    for w in &weightings {
        let _ = write!(sc, ",wsm_{0},rank_{0}", w.name);
    }
    sc.push('\n');
    for (i, r) in used.iter().enumerate() {
        let c = crit[i];
        let n = norm[i];
        let _ = write!(
            sc,
            "{},{},{},{},{},{},{},{},{},{},\"{}\"",
            r.cipher, r.implementation, c[0], c[1], c[2], c[3], n[0], n[1], n[2], n[3], sources[i]
        );
        for k in 0..weightings.len() {
            let _ = write!(sc, ",{},{}", scores[k][i], rank_v[k][i]);
        }
        sc.push('\n');
    }
    let mut wc = String::from("weighting,energy_per_byte,throughput,key_schedule,memory\n");
    for w in &weightings {
        let _ = writeln!(wc, "{},{},{},{},{}", w.name, w.w[0], w.w[1], w.w[2], w.w[3]);
    }

    // Markdown: the eight-cipher table and the rankings.
    let mut md = String::from("\n## Lightweight ciphers: metrics, RR% and WSM ranking\n\n");
    let energy_how = match &board {
        Some(b) => format!(
            "energy **modelled** from emulated cycles on {} ÷ {} MHz × {} V × {} mA where the cipher has an image, else host time × that power (the energy source column)",
            b.id, b.clock_mhz, b.volts, b.active_ma
        ),
        None => format!("energy **modelled** as time × {} W ({})", profile.active_w, profile.device),
    };
    let _ = writeln!(
        md,
        "Medians over all samples; encrypt/decrypt per block at {SMALL} B; throughput = encrypt at the largest size; RR% = time / AES-128 time × 100 (same scenario and size); {energy_how}; memory = cipher object after key schedule + message + tag + nonce (bytes). Machine: {}.\n",
        input.record.machine.cpu_model
    );
    let with_measured = opts.energy_from.is_some();
    md += "| cipher | key schedule | enc/block | dec/block | enc RR% | dec RR% | key RR% | throughput MB/s | energy/block (modelled) | energy/byte (modelled) | energy source | memory B |";
    if with_measured {
        md += " energy/byte (measured ± U, k = 2) |";
    }
    for w in &weightings {
        let _ = write!(md, " WSM {0} (rank) |", w.name);
    }
    md += "\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|";
    if with_measured {
        md += "---:|";
    }
    md += &"---:|".repeat(weightings.len());
    md.push('\n');
    for (i, r) in used.iter().enumerate() {
        let sm = small(r).unwrap_or(SMALL);
        let blocks = sm.div_ceil(r.block_bytes) as f64;
        let enc = r.times.get(&("encrypt".into(), sm)).copied().unwrap_or(f64::NAN);
        let dec = r.times.get(&("decrypt".into(), sm)).copied().unwrap_or(f64::NAN);
        let rr = |s: &str, t: f64| {
            ref_time(s, if s == "keysetup" { 0 } else { sm })
                .map(|x| format!("{:.1}", rr_pct(t, x)))
                .unwrap_or_else(|| "–".into())
        };
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
            crit[i][1],
            energy(&r.cipher, &r.implementation, "encrypt", sm, enc).0 / blocks,
            crit[i][0],
            sources[i],
            crit[i][3]
        );
        if with_measured {
            let cell = match opts
                .energy_from
                .as_ref()
                .and_then(|m| m.find(&r.cipher, &r.implementation, "encrypt", sm as u64 * 8))
            {
                Some(x) => format!(" {:.3e} ± {:.1e} J |", x.e_op_j / sm as f64, x.u_op_j / sm as f64),
                None => " not measured |".to_string(),
            };
            md += &cell;
        }
        for k in 0..weightings.len() {
            let _ = write!(md, " {:.3} ({}) |", scores[k][i], rank_v[k][i]);
        }
        md.push('\n');
    }
    md += "\nWeights (energy/byte, throughput, key schedule, memory): ";
    md += &weightings.iter().map(|w| format!("{} = {:?}", w.name, w.w)).collect::<Vec<_>>().join("; ");
    md += ". Normalisation: benefit x / max, cost min / x; score = Σ w·s / Σ w.\n";

    Ok(StudyOutput {
        files: vec![
            // Also on its own: `lwcbench report` rewrites summary.md from summary.csv alone.
            ("lightweight-rank.md".into(), md.clone().into_bytes()),
            (METRICS_FILE.into(), m.into_bytes()),
            (SCORES_FILE.into(), sc.into_bytes()),
            (WEIGHTS_FILE.into(), wc.into_bytes()),
        ],
        markdown: md,
        notes,
    })
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
    let cs: Vec<Option<usize>> = crit.iter().map(|c| col(&hd, &format!("score_{c}"))).collect();
    if cs.iter().all(Option::is_some) {
        let per: Vec<(String, Vec<f64>)> =
            rows.iter().map(|r| (r[ci].clone(), cs.iter().map(|c| num(&r[c.unwrap()])).collect())).collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_by_hand() {
        // cost: min / x → 2/2, 2/4, 2/8; benefit: x / max → 2/8, 4/8, 8/8
        assert_eq!(normalise(&[2.0, 4.0, 8.0], false), vec![1.0, 0.5, 0.25]);
        assert_eq!(normalise(&[2.0, 4.0, 8.0], true), vec![0.25, 0.5, 1.0]);
    }

    #[test]
    fn wsm_and_ranks_by_hand() {
        // Two alternatives, criteria already normalised.
        // A = [1, 0.5, 1, 0.25], B = [0.5, 1, 0.5, 1]
        // battery [0.5,0.1,0.2,0.2]: A = 0.5+0.05+0.2+0.05 = 0.80; B = 0.25+0.1+0.1+0.2 = 0.65
        // speed [0.1,0.5,0.3,0.1]:   A = 0.1+0.25+0.3+0.025 = 0.675; B = 0.05+0.5+0.15+0.1 = 0.80
        let a = [1.0, 0.5, 1.0, 0.25];
        let b = [0.5, 1.0, 0.5, 1.0];
        let bw = builtin_weightings();
        assert!((wsm(&a, &bw[0].w) - 0.80).abs() < 1e-12);
        assert!((wsm(&b, &bw[0].w) - 0.65).abs() < 1e-12);
        assert!((wsm(&a, &bw[1].w) - 0.675).abs() < 1e-12);
        assert!((wsm(&b, &bw[1].w) - 0.80).abs() < 1e-12);
        // Unnormalised weights are divided by their sum: [1,1,0,0] on A = (1 + 0.5) / 2.
        assert!((wsm(&a, &[1.0, 1.0, 0.0, 0.0]) - 0.75).abs() < 1e-12);
        assert_eq!(ranks(&[0.80, 0.65]), vec![1, 2]);
        assert_eq!(ranks(&[0.675, 0.80, 0.7]), vec![3, 1, 2]);
        assert_eq!(ranks(&[0.5, 0.5]), vec![1, 2], "ties keep input order");
    }

    #[test]
    fn rr_pct_by_hand() {
        // 150 ns against AES's 100 ns = 150 %; 50 ns = 50 %.
        assert_eq!(rr_pct(150.0, 100.0), 150.0);
        assert_eq!(rr_pct(50.0, 100.0), 50.0);
    }

    #[test]
    fn weights_files_parse_or_name_the_problem() {
        let w =
            parse_weights("weighting,energy_per_byte,throughput,key_schedule,memory\nmine,1,2,3,4\n", "w.csv").unwrap();
        assert_eq!(w, vec![Weighting { name: "mine".into(), w: [1.0, 2.0, 3.0, 4.0] }]);
        let e = parse_weights("weighting,energy_per_byte,throughput,key_schedule\nx,1,2,3\n", "w.csv").unwrap_err();
        assert!(e.contains("missing column 'memory'"), "{e}");
        let e = parse_weights("weighting,energy_per_byte,throughput,key_schedule,memory\nx,1,a,3,4\n", "w.csv")
            .unwrap_err();
        assert_eq!(e, "w.csv: line 2, column 'throughput': 'a' is not a number");
        let e = parse_weights("weighting,energy_per_byte,throughput,key_schedule,memory\nx,0,0,0,0\n", "w.csv")
            .unwrap_err();
        assert!(e.contains("sum to 0"), "{e}");
        assert!(parse_weights("weighting,energy_per_byte,throughput,key_schedule,memory\nx,-1,0,0,1\n", "w.csv")
            .unwrap_err()
            .contains("≥ 0"));
        assert_eq!(resolve_weights(Some("Speed")).unwrap()[0].name, "speed");
        assert!(resolve_weights(Some("/no/such/file")).unwrap_err().starts_with("--weights"));
    }

    /// The preset with few repetitions into a fresh temporary directory `tag`, with `given` options.
    fn run_preset(tag: &str, given: super::super::study::StudyArgs) -> (std::path::PathBuf, crate::results::RunRecord) {
        let p = crate::studies::find("lightweight-study").expect("preset");
        let mut req = crate::session::Request::from_preset(p);
        req.config.reps = 3;
        req.config.warmup = 1;
        req.config.min_sample_ns = 2_000.0;
        p.take_options(&given, &mut req.study_options).unwrap();
        let dir = std::env::temp_dir().join(format!("lwcbench-lw-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        req.out = Some(dir.clone());
        let out = crate::session::run(&req, |_, _, _| {}).expect("run");
        (dir, out.record)
    }

    #[test]
    fn preset_end_to_end_writes_every_column() {
        let (dir, record) = run_preset("e2e", Default::default());
        assert!(record.notes.iter().any(|n| n.contains("MODELLED")));
        // Every study cipher is in the scores, every cell filled.
        let (header, rows) = read_csv(&dir.join("lightweight-scores.csv"));
        let (header, rows): (Vec<&str>, Vec<Vec<&str>>) = (
            header.iter().map(|s| s.as_str()).collect(),
            rows.iter().map(|r| r.iter().map(|s| s.as_str()).collect()).collect(),
        );
        assert_eq!(header.len(), 11 + 2 * 2, "4 raw + 4 scores + energy source + 2 per weighting");
        assert_eq!(rows.len(), 8);
        for c in CIPHERS {
            let name = c.split('/').next().unwrap();
            assert!(rows.iter().any(|r| r[0] == name), "{name} missing");
        }
        for r in &rows {
            assert_eq!(r.len(), header.len());
            assert!(r.iter().all(|v| !v.is_empty()), "empty cell in {r:?}");
        }
        // Both weightings rank 1..=8.
        for w in ["rank_battery", "rank_speed"] {
            let c = header.iter().position(|h| *h == w).unwrap();
            let mut rk: Vec<usize> = rows.iter().map(|r| r[c].parse().unwrap()).collect();
            rk.sort();
            assert_eq!(rk, (1..=8).collect::<Vec<_>>());
        }
        // Metrics: 8 ciphers × (keysetup + 4 sizes × {encrypt, decrypt}) rows; AES-128's RR% is 100.
        let (mh, body) = read_csv(&dir.join("lightweight-metrics.csv"));
        let (mh, body): (Vec<&str>, Vec<Vec<&str>>) = (
            mh.iter().map(|s| s.as_str()).collect(),
            body.iter().map(|r| r.iter().map(|s| s.as_str()).collect()).collect(),
        );
        let rr = mh.iter().position(|h| *h == "rr_pct_vs_aes128").unwrap();
        let src = mh.iter().position(|h| *h == "energy_source").unwrap();
        assert!(body.iter().all(|r| r[src] == "host-time×power (ESP32, 0.2244 W)"), "no --board: host time × ESP32");
        assert_eq!(body.len(), 8 * 9);
        for r in &body {
            assert_eq!(r.len(), mh.len());
            assert!(!r[rr].is_empty(), "RR% for {r:?}");
            if r[0] == "AES-128" {
                assert_eq!(r[rr].parse::<f64>().unwrap(), 100.0);
            }
            // the measured columns are filled by --energy-from only
            let measured = |h: &str| h.ends_with("_measured") || h == "energy_measured_source";
            for (v, h) in r.iter().zip(&mh) {
                if measured(h) {
                    assert!(v.is_empty(), "{h} without --energy-from in {r:?}");
                } else if r[3] != "keysetup" {
                    assert!(!v.is_empty(), "empty {h} in {r:?}");
                }
            }
        }
        assert!(std::fs::read_to_string(dir.join("lightweight-rank.md")).unwrap().contains("WSM battery"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn read_csv(p: &Path) -> (Vec<String>, Vec<Vec<String>>) {
        let mut rd = csv::Reader::from_path(p).unwrap();
        let h = rd.headers().unwrap().iter().map(str::to_string).collect();
        (h, rd.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect())
    }

    /// `--board rp2040` (5 V × 25 mA at 125 MHz = 1 nJ per cycle, by hand): keysetup and
    /// encrypt rows of the eight ciphers from their images' emulated cycles, decrypt rows (no
    /// image of decryption) from host time × 0.125 W, each row labelled.
    #[test]
    fn board_labels_every_energy_row() {
        let given = super::super::study::StudyArgs { board: Some("rp2040".into()), ..Default::default() };
        let (dir, record) = run_preset("board", given);
        assert!(record.notes.iter().any(|n| n.contains("emulated cycles of the cipher's image on rp2040")));
        let (h, body) = read_csv(&dir.join("lightweight-metrics.csv"));
        let col = |n: &str| h.iter().position(|x| x == n).unwrap();
        let (sc, by, e, src) =
            (col("scenario"), col("message_bytes"), col("energy_per_op_j_modelled"), col("energy_source"));
        let b = crate::board::find("rp2040").unwrap();
        assert_eq!(body.len(), 8 * 9);
        for r in &body {
            let c = b.cycles(&r[0], &r[1]).unwrap_or_else(|| panic!("{}/{} has an M0+ image", r[0], r[1]));
            let j: f64 = r[e].parse().unwrap();
            match r[sc].as_str() {
                "keysetup" => {
                    assert_eq!(r[src], "emulated:rp2040 (M0+ model, 125 MHz)");
                    assert!((j - c.init * 1e-9).abs() < 1e-9 * c.init * 1e-9, "{r:?}");
                }
                "encrypt" => {
                    assert_eq!(r[src], "emulated:rp2040 (M0+ model, 125 MHz)");
                    let bytes: f64 = r[by].parse().unwrap();
                    assert!((j - c.message(bytes) * 1e-9).abs() < 1e-6 * j, "{r:?}");
                }
                _ => assert!(
                    r[src].starts_with("host-time×power (fallback: no Cortex-M0+ image; 0.125 W of rp2040)"),
                    "{r:?}"
                ),
            }
        }
        let (sh, srows) = read_csv(&dir.join("lightweight-scores.csv"));
        let s = sh.iter().position(|x| x == "energy_source").unwrap();
        assert!(srows.iter().all(|r| r[s] == "emulated:rp2040 (M0+ model, 125 MHz)"), "{srows:?}");
        let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert!(md.contains("| energy source |") && md.contains("emulated:rp2040"), "{md}");
        let page = html(&dir, &mut 0);
        assert!(page.contains("<td class=\"l\">emulated:rp2040 (M0+ model, 125 MHz)</td>"), "{page}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `--energy-from` with one measured row, XTEA encrypt at 16 B: 5 µJ per operation ± 0.08 µJ
    /// (k = 2) in the metrics file, 5e-6 / 16 = 3.125e-7 J per byte ± 5e-9 J in summary.md; every
    /// other row modelled only and listed (20, then a count).
    #[test]
    fn measured_energy_beside_modelled() {
        let xtea =
            lwcbench_catalog::registry().iter().find(|e| e.info.name == "XTEA").expect("XTEA").info.implementation;
        let file = std::env::temp_dir().join(format!("lwcbench-lw-energy-{}.csv", std::process::id()));
        std::fs::write(
            &file,
            format!("cipher,implementation,language,scenario,kiv,size_bits,payload,batches,operations,samples_min,energy_per_op_j_measured,energy_per_op_u_j,energy_per_byte_j_measured,energy_per_byte_u_j,energy_per_op_j_total,mean_power_w,baseline_power_w,energy_source\n\
                     XTEA,{xtea},rust,encrypt,\"s,s\",128,random,2,2000,20,5e-6,8e-8,3.125e-7,5e-9,9e-6,0.45,0.2,measured:ina219 (shunt 0.1 Ω ±1 %)\n"),
        )
        .unwrap();
        let given = super::super::study::StudyArgs { energy_from: Some(file.clone()), ..Default::default() };
        let (dir, record) = run_preset("measured", given);
        let (h, body) = read_csv(&dir.join("lightweight-metrics.csv"));
        let col = |n: &str| h.iter().position(|x| x == n).unwrap();
        let (sc, by, e, u, src) = (
            col("scenario"),
            col("message_bytes"),
            col("energy_per_op_j_measured"),
            col("energy_per_op_u_j_measured"),
            col("energy_measured_source"),
        );
        let mut hit = 0;
        for r in &body {
            if r[0] == "XTEA" && r[sc] == "encrypt" && r[by] == "16" {
                assert_eq!((r[e].as_str(), r[u].as_str()), ("0.000005", "0.00000008"), "{r:?}");
                assert_eq!(r[src], format!("measured:ina219 (shunt 0.1 Ω ±1 %) from {} line 2", file.display()));
                hit += 1;
            } else {
                assert!(r[e].is_empty() && r[u].is_empty() && r[src].is_empty(), "{r:?}");
            }
        }
        assert_eq!(hit, 1);
        let listed = record.notes.iter().filter(|n| n.contains(": not measured (")).count();
        assert_eq!(listed, MISSES_LISTED, "{:?}", record.notes);
        let more = format!("lightweight-metrics.csv: … and {} more rows not measured", body.len() - 1 - MISSES_LISTED);
        assert!(record.notes.contains(&more), "{:?}", record.notes);
        let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert!(md.contains("energy/byte (measured ± U, k = 2) |") && md.contains("| 3.125e-7 ± 5.0e-9 J |"), "{md}");
        assert_eq!(md.matches("| not measured |").count(), 7, "{md}");
        // The report's table: the same measured cell, 5e-6 / 16 B ± 8e-8 / 16 B.
        let mut fig = 0;
        let h = html(&dir, &mut fig);
        assert!(h.contains("<th>energy/byte (measured ± U, k = 2)</th>"), "{h}");
        assert!(h.contains("<td>3.125e-7 ± 5.0e-9 J (16 B)</td>"), "{h}");
        assert_eq!(h.matches("<td>not measured</td>").count(), 7, "{h}");
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(&file);
    }

    /// A bad --energy-from fails before anything is measured, naming file, line and column.
    #[test]
    fn bad_energy_from_is_refused_early() {
        let p = crate::studies::find("lightweight-study").expect("preset");
        let mut into = Default::default();
        let given = super::super::study::StudyArgs {
            energy_from: Some("/nonexistent/energy.csv".into()),
            ..Default::default()
        };
        let e = p.take_options(&given, &mut into).unwrap_err();
        assert!(e.starts_with("--energy-from: /nonexistent/energy.csv: "), "{e}");
    }

    /// The report section from a hand-written scores file: two radar figures, the table with
    /// one WSM and rank column per weighting.
    #[test]
    fn html_reads_the_scores_file() {
        let dir = std::env::temp_dir().join(format!("lwcbench-lw-html-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(html(&dir, &mut 0), "", "no file, no section");
        std::fs::write(
            dir.join(SCORES_FILE),
            "cipher,implementation,energy_per_byte_j_modelled,throughput_mb_s,key_schedule_ns,memory_bytes,score_energy_per_byte,score_throughput,score_key_schedule,score_memory,wsm_battery,rank_battery\nA,x,1e-9,100,10,64,1,1,1,1,1,1\nB<i>,y,2e-9,50,20,128,0.5,0.5,0.5,0.5,0.5,2\n",
        )
        .unwrap();
        let mut fig = 0;
        let lw = html(&dir, &mut fig);
        assert_eq!(fig, 2, "two radar figures");
        assert!(lw.contains("<th>WSM battery</th>") && lw.contains("<td>0.500</td><td>2</td>"), "{lw}");
        assert!(lw.contains("B&lt;i&gt;") && !lw.contains("B<i>"), "cells escaped");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
