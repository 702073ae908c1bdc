//! The typed answer every renderer reads, and [`choose`]: resolve, filter, rank, test
//! robustness and hand over — the one call behind the CLI and Python.
use serde::Serialize;

use crate::data::{Data, ErrorBand};
use crate::engines::{band_of, framed_facts};
use crate::evaluate::{evaluate, nothing_passes};
use crate::explain::{drain, Drain};
use crate::filter::Candidate;
use crate::handover::{handover, Handover};
use crate::options::{Options, Request, Require, Weights};
use crate::oscore::{auto_verdict, EdhocCost, Framing, FramingVerdict};
use crate::robust::{robustness, Robust};

/// The JSON schema's name and version (docs/choose.md "JSON").
pub const SCHEMA: &str = "lwcbench-choose/2";

/// The request as checked.
#[derive(Clone, Debug, Serialize)]
pub struct RequestView {
    /// Board id.
    pub board: String,
    /// Radio name.
    pub radio: String,
    /// Seconds between reports.
    pub interval_s: f64,
    /// Plaintext bytes per report.
    pub payload_bytes: usize,
    /// `--flash` (None: no budget).
    pub flash_bytes: Option<u64>,
    /// `--ram` (None: no budget).
    pub ram_bytes: Option<u64>,
    /// `--security`.
    pub security_bits: u32,
    /// `--tag`.
    pub tag_bits: u32,
    /// `--require`.
    pub require: Require,
    /// `--lifetime` in seconds.
    pub lifetime_s: f64,
    /// Reports over the lifetime.
    pub messages_over_lifetime: f64,
    /// `--allow-provisional`.
    pub allow_provisional: bool,
    /// `--allow-variable-time`.
    pub allow_variable_time: bool,
    /// `--chemistry`.
    pub chemistry: String,
    /// `--battery-mah`.
    pub battery_mah: f64,
    /// `--battery-v`.
    pub battery_v: f64,
    /// The board's sleep current at the battery voltage.
    pub sleep_ua: f64,
}

/// The board row used.
#[derive(Clone, Debug, Serialize)]
pub struct BoardView {
    /// Board id.
    pub id: String,
    /// Chip.
    pub chip: String,
    /// Core.
    pub core: String,
    /// Rust target triple.
    pub target: String,
    /// Clock in MHz.
    pub clock_mhz: f64,
    /// Active power in W.
    pub active_w: f64,
    /// Sleep power in W.
    pub sleep_w: f64,
    /// The row's status.
    pub status: String,
    /// The row's source.
    pub source: String,
}

/// The radio row used.
#[derive(Clone, Debug, Serialize)]
pub struct RadioView {
    /// Radio name.
    pub name: String,
    /// Transmit power in W.
    pub tx_w: f64,
    /// The row's status.
    pub status: String,
    /// The row's source.
    pub source: String,
}

/// The whole answer (`--json`; docs/choose.md "JSON").
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The checked request.
    pub request: RequestView,
    /// The board.
    pub board: BoardView,
    /// The radio.
    pub radio: RadioView,
    /// The chosen cipher's error band.
    pub error_model: ErrorBand,
    /// The weights in use (flash and RAM 0 without a budget).
    pub weights: Weights,
    /// Every candidate with its verdict.
    pub candidates: Vec<Candidate>,
    /// Passed candidates, best first.
    pub ranking: Vec<String>,
    /// The first place.
    pub chosen: String,
    /// The candidates tied with it.
    pub ties_with_chosen: Vec<String>,
    /// One-step changes.
    pub robustness: Vec<Robust>,
    /// True when a one-step change takes the chosen cipher out of the first place.
    pub flips: bool,
    /// Firmware build and link command.
    pub handover: Handover,
    /// What dominates the chosen candidate's energy and how far the cipher moves battery life.
    pub drain: Option<Drain>,
    /// `--framing`: link, oscore or auto.
    pub framing: Framing,
    /// Under `--framing auto`: which framing ranks first, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub framing_verdict: Option<FramingVerdict>,
    /// With `--edhoc`: the handshake's one-time cost on the board.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edhoc: Option<EdhocCost>,
}

impl Report {
    /// The candidate with `id`.
    pub fn candidate(&self, id: &str) -> Option<&Candidate> {
        self.candidates.iter().find(|c| c.id == id)
    }
    /// The ranked candidates, best first.
    pub fn ranked(&self) -> impl Iterator<Item = &Candidate> {
        self.ranking.iter().filter_map(|id| self.candidate(id))
    }
}

/// Resolve, filter, rank, test robustness and hand over; `out` is the directory the hand-over
/// names (DIR when None).
pub fn choose(o: &Options, out: Option<&str>) -> Result<Report, String> {
    let req = Request::resolve(o)?;
    let data = Data::builtin();
    let facts = framed_facts(&data, &req);
    if let Some(n) = req.ciphers.iter().find(|n| !facts.iter().any(|f| crate::oscore::named(f, n))) {
        return Err(format!(
            "--cipher: '{}' names no candidate under --framing {} on {}",
            crate::fmt::prefix(n),
            req.framing.name(),
            req.board.id
        ));
    }
    let ev = evaluate(&req, &data, &facts);
    let Some(chosen) = ev.top().cloned() else { return Err(nothing_passes(&req, &ev)) };
    let rob = robustness(&req, &data, &facts, &chosen.id);
    let flips = rob.iter().any(|r| !r.same);
    let f = facts.iter().find(|f| f.id() == chosen.id).ok_or("the chosen candidate has no facts")?;
    let hand = handover(&req, &chosen, f, &data, out);
    let band: ErrorBand = band_of(&req, &data, f).ok_or("the chosen candidate has no error band")?;
    let drain = chosen.figures.as_ref().map(|g| drain(&req, g));
    let framing_verdict = (req.framing == Framing::Auto).then(|| {
        let ranked: Vec<&crate::filter::Candidate> =
            ev.ranking.iter().filter_map(|id| ev.candidates.iter().find(|c| &c.id == id)).collect();
        auto_verdict(&ranked)
    });
    let b = &req.board;
    let r = &req.radio;
    Ok(Report {
        schema: SCHEMA,
        request: RequestView {
            board: b.id.clone(),
            radio: r.name.clone(),
            interval_s: req.interval_s,
            payload_bytes: req.payload,
            flash_bytes: req.flash,
            ram_bytes: req.ram,
            security_bits: req.security,
            tag_bits: req.tag_bits,
            require: req.require,
            lifetime_s: req.lifetime_s,
            messages_over_lifetime: req.messages(),
            allow_provisional: req.allow_provisional,
            allow_variable_time: req.allow_variable_time,
            chemistry: req.battery.chemistry.name.clone(),
            battery_mah: req.battery.capacity_mah,
            battery_v: req.battery.volts,
            sleep_ua: req.battery.sleep_ua,
        },
        board: BoardView {
            id: b.id.clone(),
            chip: b.chip.clone(),
            core: b.core.clone(),
            target: b.target.clone(),
            clock_mhz: b.clock_mhz,
            active_w: b.active_w(),
            sleep_w: b.sleep_w(),
            status: b.status.clone(),
            source: b.source.clone(),
        },
        radio: RadioView { name: r.name.clone(), tx_w: r.tx_w, status: r.status.clone(), source: r.source.clone() },
        error_model: band,
        weights: req.weights.clone(),
        ties_with_chosen: ev.top_group().into_iter().filter(|id| id != &chosen.id).collect(),
        candidates: ev.candidates,
        ranking: ev.ranking,
        chosen: chosen.id.clone(),
        robustness: rob,
        flips,
        handover: hand,
        drain,
        framing: req.framing,
        framing_verdict,
        edhoc: req.edhoc.clone(),
    })
}
