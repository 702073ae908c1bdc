//! The study's model: one row per implementation with its medians, the energy model (a board's
//! emulated cycles or host time × power) and the WSM ranking over the four criteria.
use std::collections::BTreeMap;

use lwcbench_catalog::Make;

use super::scoring::{normalise, ranks, resolve_weights, wsm, Weighting, BENEFIT, CIPHERS, REFERENCE};
use crate::board::{self, Board};
use crate::power::{self, PowerProfile};
use crate::studies::study::StudyInput;

/// One implementation's medians and memory.
pub(super) struct CipherRow {
    pub cipher: String,
    pub implementation: String,
    pub family: String,
    pub block_bytes: usize,
    pub object_bytes: usize,
    pub extra_bytes: usize,
    pub keysetup_ns: f64,
    /// (scenario, bytes) → median ns
    pub times: BTreeMap<(String, usize), f64>,
}

impl CipherRow {
    /// Median ns of encrypting `bytes` (NaN when not measured).
    pub fn encrypt_ns(&self, bytes: usize) -> f64 {
        self.times.get(&("encrypt".to_string(), bytes)).copied().unwrap_or(f64::NAN)
    }
    /// The smallest and largest encrypt message sizes measured.
    pub fn encrypt_sizes(&self) -> Option<(usize, usize)> {
        let sizes = || self.times.keys().filter(|(s, _)| s == "encrypt").map(|(_, b)| *b);
        Some((sizes().min()?, sizes().max()?))
    }
}

/// Everything the tables are computed from.
pub(super) struct Model {
    pub rows: Vec<CipherRow>,
    pub board: Option<Board>,
    pub profile: PowerProfile,
    pub weightings: Vec<Weighting>,
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

/// One row per measured implementation (medians over all key/IV variants), in study order.
fn cipher_rows(input: &StudyInput) -> Vec<CipherRow> {
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
    // Order as in the study, others after.
    let pos = |r: &CipherRow| {
        CIPHERS.iter().position(|c| c.split('/').next() == Some(r.cipher.as_str())).unwrap_or(usize::MAX)
    };
    rows.sort_by_key(|r| (pos(r), r.cipher.clone(), r.implementation.clone()));
    rows
}

impl Model {
    /// The model of a run's samples and the study's options.
    pub fn new(input: &StudyInput) -> Result<Model, String> {
        let opts = &input.options;
        // Default ESP32: the study ran on one. Modelled, never measured.
        let board = opts.board.as_deref().map(board::find).transpose()?;
        let profile: PowerProfile = match &board {
            Some(b) => b.fallback_profile(),
            None => power::resolve(Some(opts.power_profile.as_deref().unwrap_or("ESP32")), opts.watts)?,
        };
        let weightings = resolve_weights(opts.weights.as_deref())?;
        let rows = cipher_rows(input);
        if rows.is_empty() {
            return Err("lightweight-study: no keysetup/encrypt/decrypt samples of block ciphers or AEADs".into());
        }
        Ok(Model { rows, board, profile, weightings })
    }

    /// Joules of one operation and where they come from: the board's emulated cycles when the
    /// cipher has an image (keysetup = init, encrypt = the message phase; decrypt has none),
    /// else host time × power.
    pub fn energy(&self, cipher: &str, imp: &str, scenario: &str, bytes: usize, host_ns: f64) -> (f64, String) {
        match &self.board {
            Some(b) => match (b.cycles(cipher, imp), scenario) {
                (Some(c), "keysetup") => (b.energy_j(c.init), b.label()),
                (Some(c), "encrypt") => (b.energy_j(c.message(bytes as f64)), b.label()),
                _ => (power::energy_j(&self.profile, host_ns), b.fallback_label()),
            },
            None => (power::energy_j(&self.profile, host_ns), board::host_label(&self.profile)),
        }
    }

    /// The AES-128 row RR% is relative to.
    pub fn reference(&self) -> Option<&CipherRow> {
        self.rows.iter().find(|r| r.cipher == REFERENCE)
    }

    /// The reference's median for a scenario and size.
    pub fn ref_time(&self, sc: &str, bytes: usize) -> Option<f64> {
        let r = self.reference()?;
        if sc == "keysetup" {
            Some(r.keysetup_ns)
        } else {
            r.times.get(&(sc.to_string(), bytes)).copied()
        }
    }

    /// The WSM ranking of the rows with keysetup and encrypt medians.
    pub fn ranking(&self) -> Result<Ranking<'_>, String> {
        let mut crit: Vec<[f64; 4]> = Vec::new();
        let mut used: Vec<&CipherRow> = Vec::new();
        let mut sources: Vec<String> = Vec::new();
        for r in &self.rows {
            let Some((sm, lg)) = r.encrypt_sizes() else { continue };
            let (e_sm, src) = self.energy(&r.cipher, &r.implementation, "encrypt", sm, r.encrypt_ns(sm));
            let e = e_sm / sm as f64;
            let thr = lg as f64 / r.encrypt_ns(lg) * 1000.0;
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
        let scores: Vec<Vec<f64>> =
            self.weightings.iter().map(|w| norm.iter().map(|s| wsm(s, &w.w)).collect()).collect();
        let ranks = scores.iter().map(|s| ranks(s)).collect();
        Ok(Ranking { used, crit, norm, sources, scores, ranks })
    }
}

/// The ranked rows: criteria, normalised scores, energy source, WSM score and rank per weighting.
pub(super) struct Ranking<'a> {
    pub used: Vec<&'a CipherRow>,
    /// energy/byte, throughput, key schedule, memory.
    pub crit: Vec<[f64; 4]>,
    pub norm: Vec<[f64; 4]>,
    pub sources: Vec<String>,
    /// `[weighting][row]`.
    pub scores: Vec<Vec<f64>>,
    /// `[weighting][row]`.
    pub ranks: Vec<Vec<usize>>,
}
