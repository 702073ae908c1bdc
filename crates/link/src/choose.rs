//! `lwcbench choose`: from a board, a radio and a requirement to a ranked, explained answer and
//! the `lwcbench link` command that deploys it (docs/choose.md).
//!
//! Hard filters come first (status, security, integrity, an image on the board, flash, RAM,
//! counter space), each with its reason; the survivors are ranked on the board's figures with
//! the user's weights, and candidates whose score intervals overlap under the error model are
//! ties. Every figure comes from a data file: emulated cycles (data/emulated-cycles.csv), measured
//! image sizes (data/mcu-sizes.csv), the board's power (data/board-power.csv), the radio model
//! (data/radio-profiles.csv), the battery (data/battery-chemistries.csv), the status
//! (data/cipher-status.csv) and the emulator's error band (data/emulator-error.csv).
//! [`Options`] holds the request as strings: the CLI and the Python API resolve it the same way.
use std::collections::BTreeMap;

use lwcbench_engine::board::{Board, Cycles};
use serde::Serialize;

use crate::results::energy::{self, Battery, Radio};
use crate::wire::frame::{HEADER_LEN, MAX_COUNTER, MAX_FRAME};
use crate::wire::suite::{self, Kind, POLY_TAG, STREAM_SKIP};

pub use lwcbench_data::mcu::{
    parse_errors, parse_sizes, parse_status, ErrorBand, Size, Status, ERROR_CSV, SIZES_CSV, STATUS_CSV,
};

/// The JSON schema's name and version (docs/choose.md "JSON").
pub const SCHEMA: &str = "lwcbench-choose/1";

/// The request as given (CLI flags or Python keyword arguments), before checking.
#[derive(Clone, Debug)]
pub struct Options {
    pub board: String,
    pub radio: String,
    pub interval: String,
    pub payload: String,
    pub flash: Option<String>,
    pub ram: Option<String>,
    pub security: u32,
    pub require: Option<String>,
    pub weights: Option<String>,
    pub lifetime: String,
    pub allow_provisional: bool,
    pub chemistry: String,
    pub battery_mah: f64,
    pub battery_v: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            board: String::new(),
            radio: String::new(),
            interval: String::new(),
            payload: "16B".into(),
            flash: None,
            ram: None,
            security: 128,
            require: None,
            weights: None,
            lifetime: "10y".into(),
            allow_provisional: false,
            chemistry: "alkaline-AA".into(),
            battery_mah: 2400.0,
            battery_v: 3.0,
        }
    }
}

/// Weights of the ranking criteria (lower score is better).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Weights {
    pub energy: f64,
    pub battery: f64,
    pub latency: f64,
    pub flash: f64,
    pub ram: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights { energy: 3.0, battery: 0.0, latency: 1.0, flash: 1.0, ram: 1.0 }
    }
}

/// Longest prefix of a bad value an error line echoes (a long value would bury the message).
const SHOWN: usize = 24;

/// At most the first [`SHOWN`] characters of `s` for an error line, control characters escaped.
pub fn prefix(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(SHOWN)
        .map(|c| if c.is_control() { c.escape_unicode().to_string() } else { c.to_string() })
        .collect();
    if s.chars().count() > SHOWN {
        out.push('…');
    }
    out
}

/// A number given as a float option, short: `1e308` rather than its 309 digits.
fn shown_num(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-3..1e6).contains(&v.abs()) {
        prefix(&format!("{v:e}"))
    } else {
        prefix(&format!("{v}"))
    }
}

/// Range of one weight: 0 (criterion off) or [`MIN_WEIGHT`]..=[`MAX_WEIGHT`].
pub const MIN_WEIGHT: f64 = 0.001;
pub const MAX_WEIGHT: f64 = 1000.0;

/// `energy=3,flash=1,latency=1`: named criteria set, the others keep their default; a
/// criterion named twice is refused (which one was meant is not knowable).
pub fn parse_weights(s: &str) -> Result<Weights, String> {
    let mut w = Weights::default();
    let mut seen: Vec<&str> = Vec::new();
    for part in s.split(',') {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("--weights: '{}' is not NAME=NUMBER (e.g. energy=3,flash=1)", prefix(part)))?;
        let v: f64 = v
            .trim()
            .parse()
            .ok()
            .filter(|x: &f64| *x == 0.0 || (MIN_WEIGHT..=MAX_WEIGHT).contains(x))
            .ok_or_else(|| {
                format!("--weights: '{}': the weight is not 0 or a number in {MIN_WEIGHT}..={MAX_WEIGHT}", prefix(part))
            })?;
        let k = k.trim();
        let slot = match k {
            "energy" => &mut w.energy,
            "battery" => &mut w.battery,
            "latency" => &mut w.latency,
            "flash" => &mut w.flash,
            "ram" => &mut w.ram,
            other => {
                return Err(format!(
                    "--weights: '{}' is not one of energy, battery, latency, flash, ram",
                    prefix(other)
                ));
            }
        };
        if seen.contains(&k) {
            return Err(format!("--weights: '{k}' is given twice (name each criterion once)"));
        }
        seen.push(k);
        *slot = v;
    }
    if w.energy + w.battery + w.latency + w.flash + w.ram <= 0.0 {
        return Err("--weights: every weight is 0".into());
    }
    Ok(w)
}

/// Largest `--flash` and `--ram` budget (1 TiB: far above any microcontroller).
const MAX_BUDGET: u64 = 1 << 40;

/// Bytes from `16B`, `32KiB`, `1MiB` or a plain number of bytes, at most 1 TiB.
pub fn parse_bytes(s: &str, opt: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mul) = if let Some(n) = t.strip_suffix("KiB") {
        (n, 1024)
    } else if let Some(n) = t.strip_suffix("MiB") {
        (n, 1024 * 1024)
    } else if let Some(n) = t.strip_suffix('B') {
        (n, 1)
    } else {
        (t, 1)
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .filter(|&n| n <= MAX_BUDGET)
        .ok_or_else(|| format!("{opt}: '{}' is not a size in bytes up to 1 TiB (e.g. 16B, 32KiB)", prefix(s)))
}

const YEAR_S: f64 = 365.25 * 86_400.0;

/// Largest payload: the link's frame limit less the 16-byte header and a 16-byte tag.
pub const MAX_PAYLOAD: usize = MAX_FRAME - HEADER_LEN - POLY_TAG;

/// `--interval` range: a report every millisecond (a GOOSE-like cycle) to one a day (the link's
/// longest `--report-interval`).
pub const MIN_INTERVAL_S: f64 = 1e-3;
pub const MAX_INTERVAL_S: f64 = crate::input::MAX_INTERVAL_S;
const INTERVAL_RANGE: &str = "1 ms and 24 h";
/// `--lifetime` range.
pub const MIN_LIFETIME_S: f64 = 1.0;
pub const MAX_LIFETIME_S: f64 = 100.0 * YEAR_S;
const LIFETIME_RANGE: &str = "1 s and 100 y";
/// `--battery-mah` range: a 1 mAh cell to a 1000 Ah pack.
pub const BATTERY_MAH: (f64, f64) = (1.0, 1e6);
/// `--battery-v` range: half a volt (one cell under load) to 60 V (the safety extra-low voltage).
pub const BATTERY_V: (f64, f64) = (0.5, 60.0);

/// Seconds from `200ms`, `10s`, `10m` (or `10min`), `1h`, `2d`, `10y`; the number may have an
/// exponent (`1e3ms`). Outside `min..=max` it is refused with `range` in the message.
pub fn parse_duration_s(s: &str, opt: &str, (min, max): (f64, f64), range: &str) -> Result<f64, String> {
    let t = s.trim();
    // Longest unit first: `ms` ends in `s`, `min` would otherwise read as `mi` + `n`.
    let units: [(&str, f64); 7] =
        [("ms", 1e-3), ("min", 60.0), ("s", 1.0), ("m", 60.0), ("h", 3600.0), ("d", 86_400.0), ("y", YEAR_S)];
    let not_duration = || format!("{opt}: '{}' is not a duration (e.g. 200ms, 10m, 10y)", prefix(s));
    let Some((num, unit, mult)) = units.iter().find_map(|&(u, m)| t.strip_suffix(u).map(|n| (n.trim(), u, m))) else {
        return Err(if t.parse::<f64>().is_ok() {
            format!("{opt}: '{}' needs a unit (ms, s, m, h, d, y)", prefix(s))
        } else {
            not_duration()
        });
    };
    let v: f64 = num.parse().map_err(|_| not_duration())?;
    // Milliseconds divide by 1000 so that 300ms is the double nearest 0.3 s, as typed.
    let secs = if unit == "ms" { v / 1000.0 } else { v * mult };
    if !(secs.is_finite() && (min..=max).contains(&secs)) {
        return Err(format!("{opt}: '{}' is not between {range}", prefix(s)));
    }
    Ok(secs)
}

/// `find(name)`, its error echoing at most a prefix of `name`, control characters escaped.
fn short_echo<T>(name: &str, find: impl Fn(&str) -> Result<T, String>) -> Result<T, String> {
    find(name).map_err(|e| e.replacen(&format!("'{name}'"), &format!("'{}'", prefix(name)), 1))
}

/// `v` within `lo..=hi` (finite), else an error naming `opt` and the range.
fn bounded(v: f64, opt: &str, (lo, hi): (f64, f64), unit: &str) -> Result<f64, String> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{opt}: {} is not between {lo} and {hi} {unit}", shown_num(v)))
    }
}

/// `--require`: which integrity or status the user insists on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Require {
    /// Any integrity (an AEAD or the link's composition), any status but provisional.
    Any,
    /// The cipher's own AEAD (not this project's composition).
    Aead,
    /// Specified by a standards body (status `standard` in data/cipher-status.csv).
    Standard,
}

/// A checked request.
#[derive(Clone, Debug)]
pub struct Request {
    pub board: Board,
    pub radio: Radio,
    pub interval_s: f64,
    pub payload: usize,
    pub flash: Option<u64>,
    pub ram: Option<u64>,
    pub security: u32,
    pub require: Require,
    pub weights: Weights,
    pub lifetime_s: f64,
    pub allow_provisional: bool,
    pub battery: Battery,
}

impl Request {
    pub fn resolve(o: &Options) -> Result<Request, String> {
        let board = short_echo(&o.board, lwcbench_engine::board::find)?;
        let radio = short_echo(o.radio.trim(), energy::find_radio)?;
        let interval_s = parse_duration_s(&o.interval, "--interval", (MIN_INTERVAL_S, MAX_INTERVAL_S), INTERVAL_RANGE)?;
        let payload = parse_bytes(&o.payload, "--payload")?;
        let most = MAX_PAYLOAD as u64;
        if payload == 0 || payload > most {
            return Err(format!(
                "--payload: '{}' is not between 1 B and {most} B (the link's 256 KiB frame: 16-byte header + payload + 16-byte tag)",
                prefix(&o.payload)
            ));
        }
        let flash = o.flash.as_deref().map(|s| parse_bytes(s, "--flash")).transpose()?;
        let ram = o.ram.as_deref().map(|s| parse_bytes(s, "--ram")).transpose()?;
        if !(1..=512).contains(&o.security) {
            return Err(format!("--security: {} is not a key size in bits (1..=512)", o.security));
        }
        let require = match o.require.as_deref().map(str::trim) {
            None | Some("") => Require::Any,
            Some("aead") => Require::Aead,
            Some("standard") => Require::Standard,
            Some(other) => return Err(format!("--require: '{}' is not one of aead, standard", prefix(other))),
        };
        let weights = match &o.weights {
            Some(s) => parse_weights(s)?,
            None => Weights::default(),
        };
        let lifetime_s = parse_duration_s(&o.lifetime, "--lifetime", (MIN_LIFETIME_S, MAX_LIFETIME_S), LIFETIME_RANGE)?;
        let capacity_mah = bounded(o.battery_mah, "--battery-mah", BATTERY_MAH, "mAh")?;
        let volts = bounded(o.battery_v, "--battery-v", BATTERY_V, "V")?;
        let battery = Battery {
            capacity_mah,
            volts,
            // The board's sleep power, drawn from the battery at its voltage (as `lwcbench link --board`).
            sleep_ua: board.sleep_w() / volts * 1e6,
            interval_s,
            chemistry: short_echo(&o.chemistry, energy::find_chemistry)?,
        };
        Ok(Request {
            board,
            radio,
            interval_s,
            payload: payload as usize,
            flash,
            ram,
            security: o.security,
            require,
            weights,
            lifetime_s,
            allow_provisional: o.allow_provisional,
            battery,
        })
    }

    /// Reports the device sends over `--lifetime`.
    pub fn messages(&self) -> f64 {
        (self.lifetime_s / self.interval_s).ceil()
    }
}

/// The built-in tables.
pub struct Data {
    pub status: Vec<Status>,
    pub sizes: Vec<Size>,
    pub errors: Vec<ErrorBand>,
    pub cycles: &'static [Cycles],
}

impl Data {
    pub fn builtin() -> Data {
        Data {
            status: lwcbench_data::mcu::status(),
            sizes: lwcbench_data::mcu::sizes(),
            errors: lwcbench_data::mcu::errors(),
            cycles: lwcbench_engine::board::cycles_table(),
        }
    }
    fn size(&self, target: &str, cipher: &str, implementation: &str) -> Option<&Size> {
        self.sizes.iter().find(|s| s.target == target && s.cipher == cipher && s.implementation == implementation)
    }
}

/// One candidate's data-file facts, before any request.
#[derive(Clone, Debug)]
pub struct Facts {
    pub cipher: String,
    pub implementation: String,
    /// The link's frame cipher number (None: the link cannot carry it).
    pub link_id: Option<u8>,
    pub kind: Option<Kind>,
    /// True for a block cipher or mode (no integrity of its own, not on the link).
    pub block: bool,
    pub key_bits: u32,
    pub nonce_bytes: usize,
    /// Tag bytes on the link's frame.
    pub tag_bytes: usize,
    /// Random nonce bytes each link frame carries (XChaCha20-Poly1305: 24; the others 0).
    pub random_nonce_bytes: usize,
}

impl Facts {
    pub fn id(&self) -> String {
        format!("{}/{}", self.cipher, self.implementation)
    }
}

/// Every catalogue entry the link carries, and every entry with a microcontroller image.
pub fn catalogue_facts(data: &Data) -> Vec<Facts> {
    let reg = lwcbench_catalog::registry();
    let mut ids: Vec<String> = suite::offered().iter().map(|s| s.name()).collect();
    for c in data.cycles {
        let id = format!("{}/{}", c.cipher, c.implementation);
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let suites = suite::offered();
    let mut out = Vec::new();
    for id in ids {
        let Some(e) = reg.iter().find(|e| e.id() == id) else { continue };
        let s = suites.iter().find(|s| s.name() == id);
        let block = matches!(e.info.family, lwcbench_core::Family::Block | lwcbench_core::Family::Mode);
        out.push(Facts {
            cipher: e.info.name.to_string(),
            implementation: e.info.implementation.to_string(),
            link_id: s.map(|s| s.id),
            kind: s.map(|s| s.kind),
            block,
            key_bits: u32::from(e.info.key_bits),
            nonce_bytes: e.info.iv_bytes(),
            tag_bytes: s.map(|s| s.tag_len(false)).unwrap_or(0),
            random_nonce_bytes: s.map(|s| s.random_nonce_len()).unwrap_or(0),
        });
    }
    out
}

/// A value with its interval under the error model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Span {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Span {
    pub fn exact(v: f64) -> Span {
        Span { value: v, lo: v, hi: v }
    }
}

/// The figures of one candidate on the board, each with its source.
#[derive(Clone, Debug, Serialize)]
pub struct Figures {
    pub frame_bytes: usize,
    pub tag_bytes: usize,
    pub crypto_cycles: f64,
    pub crypto_uj: Span,
    pub radio_uj: f64,
    pub air_time_ms: f64,
    /// Radio packets the frame takes (the radio's largest payload each).
    pub packets: usize,
    pub energy_uj: Span,
    pub latency_ms: Span,
    pub battery_days: Span,
    pub battery_limited_by: String,
    pub flash_bytes: u64,
    pub ram_bytes: u64,
    /// Distinct nonces the link's counter gives this cipher under one device key.
    pub counter_space: f64,
    pub sources: BTreeMap<String, String>,
}

/// One candidate's verdict and figures.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    pub id: String,
    pub cipher: String,
    pub implementation: String,
    pub link_id: Option<u8>,
    pub status: String,
    pub status_document: String,
    pub key_bits: u32,
    pub protection: String,
    pub passed: bool,
    /// The filters that removed it (empty when it passed).
    pub removed_by: Vec<String>,
    /// One reason per filter that removed it, or why it passed.
    pub reasons: Vec<String>,
    pub figures: Option<Figures>,
    pub rank: Option<usize>,
    pub score: Option<Span>,
}

fn poly_share<'a>(data: &'a Data, b: &Board) -> Option<(&'a Cycles, &'a Cycles, &'a Size, &'a Size)> {
    Some((
        b.cycles("ChaCha20-Poly1305", "rustcrypto")?,
        b.cycles("ChaCha20", "rustcrypto")?,
        data.size(&b.target, "ChaCha20-Poly1305", "rustcrypto")?,
        data.size(&b.target, "ChaCha20", "rustcrypto")?,
    ))
}

/// The link's counter sits in the first 8 nonce bytes (crate::wire::frame::nonce): a shorter nonce
/// would drop its low bytes, so every counter value would repeat a nonce.
pub fn counter_space(nonce_bytes: usize) -> f64 {
    if nonce_bytes >= 8 {
        MAX_COUNTER as f64 + 1.0
    } else {
        1.0
    }
}

/// Packets of at most the radio's largest payload for a `frame`-byte frame (as
/// [`Radio::air_time`] splits it).
pub fn packets(r: &Radio, frame: usize) -> usize {
    frame.div_ceil(r.max_payload.max(1)).max(1)
}

/// The figures of `f` on the request's board and radio (None without an image on its core).
pub fn figures(req: &Request, data: &Data, f: &Facts) -> Option<Figures> {
    let b = &req.board;
    let c = b.cycles(&f.cipher, &f.implementation)?;
    let sz = data.size(&b.target, &f.cipher, &f.implementation)?;
    let band = data.errors.iter().find(|e| e.timing_model == c.timing_model)?;
    let e = band.error_pct / 100.0;
    let ad = HEADER_LEN as f64;
    let p = req.payload as f64;
    let mut sources = BTreeMap::new();
    let emulated = format!(
        "emulated on {} ({} model, {} MHz; data/emulated-cycles.csv image {}), ±{} % ({}), × datasheet active power {:.4} W (data/board-power.csv, {})",
        b.id, c.timing_model, b.clock_mhz, c.image, band.error_pct, band.source, b.active_w(), b.status
    );
    let (cycles, flash, ram, tag) = match f.kind {
        Some(Kind::StreamPoly1305) => {
            let (cp, cc, scp, scc) = poly_share(data, b)?;
            // Poly1305's share: the ChaCha20-Poly1305 image minus the ChaCha20 image over the
            // same keystream (its 64-byte key block plus the message).
            let poly = |n: f64| (cp.message(n) - cc.message(n + STREAM_SKIP as f64)).max(0.0);
            let cyc = c.init + c.message(STREAM_SKIP as f64 + p) + poly(ad + p);
            let flash = sz.flash + scp.flash.saturating_sub(scc.flash);
            let ram = sz.ram_static
                + sz.stack
                + scp.ram_static.saturating_sub(scc.ram_static)
                + scp.stack.saturating_sub(scc.stack);
            sources.insert(
                "crypto".into(),
                format!(
                    "{emulated}; modelled composition: init + keystream over {STREAM_SKIP} + payload bytes + Poly1305 over header + payload (the {} image minus the {} image)",
                    cp.image, cc.image
                ),
            );
            sources.insert(
                "flash_ram".into(),
                format!(
                    "measured here (data/mcu-sizes.csv: image {} on {}) + the Poly1305 share ({} minus {}), modelled",
                    sz.image, sz.target, scp.image, scc.image
                ),
            );
            (cyc, flash, ram, POLY_TAG)
        }
        _ => {
            // The AEAD's key schedule runs once per key: per message the encrypt phase, with the
            // 16-byte header as associated data counted like message bytes.
            let cyc = c.message(ad + p);
            sources.insert("crypto".into(), format!("{emulated}; encrypt + tag over header + payload bytes"));
            sources.insert(
                "flash_ram".into(),
                format!(
                    "measured here (data/mcu-sizes.csv: image {} on {}; RAM = static + stack)",
                    sz.image, sz.target
                ),
            );
            (cyc, sz.flash, sz.ram_static + sz.stack, f.tag_bytes)
        }
    };
    let frame = HEADER_LEN + f.random_nonce_bytes + req.payload + tag;
    let crypto_j = b.energy_j(cycles);
    let radio_j = req.radio.energy_j(frame);
    let air = req.radio.air_time(frame);
    let crypto_s = cycles / (b.clock_mhz * 1e6);
    sources.insert(
        "radio".into(),
        format!(
            "modelled: time on air of the {frame}-byte frame (16-byte header + {}payload + {tag}-byte tag) × transmit power, data/radio-profiles.csv {} ({}: {})",
            if f.random_nonce_bytes > 0 { format!("{}-byte random nonce + ", f.random_nonce_bytes) } else { String::new() },
            req.radio.name, req.radio.status, req.radio.source
        ),
    );
    sources.insert(
        "battery".into(),
        format!(
            "modelled: {} mAh at {} V, {} (data/battery-chemistries.csv, {}), sleep {:.1} µA from {}'s datasheet sleep power, one report every {} s",
            req.battery.capacity_mah,
            req.battery.volts,
            req.battery.chemistry.name,
            req.battery.chemistry.status,
            req.battery.sleep_ua,
            b.id,
            req.interval_s
        ),
    );
    let energy =
        Span { value: crypto_j + radio_j, lo: crypto_j * (1.0 - e) + radio_j, hi: crypto_j * (1.0 + e) + radio_j };
    let life = |j: f64| req.battery.life(j);
    let mid = life(energy.value);
    Some(Figures {
        frame_bytes: frame,
        tag_bytes: tag,
        crypto_cycles: cycles,
        crypto_uj: Span { value: crypto_j * 1e6, lo: crypto_j * (1.0 - e) * 1e6, hi: crypto_j * (1.0 + e) * 1e6 },
        radio_uj: radio_j * 1e6,
        air_time_ms: air * 1e3,
        packets: packets(&req.radio, frame),
        energy_uj: Span { value: energy.value * 1e6, lo: energy.lo * 1e6, hi: energy.hi * 1e6 },
        latency_ms: Span {
            value: (crypto_s + air) * 1e3,
            lo: (crypto_s * (1.0 - e) + air) * 1e3,
            hi: (crypto_s * (1.0 + e) + air) * 1e3,
        },
        battery_days: Span { value: mid.days, lo: life(energy.hi).days, hi: life(energy.lo).days },
        battery_limited_by: mid.limited_by.to_string(),
        flash_bytes: flash,
        ram_bytes: ram,
        counter_space: counter_space(f.nonce_bytes),
        sources,
    })
}

/// The criteria the ranking reads (energy, latency: cost with interval; battery: benefit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Criteria {
    pub energy: Span,
    pub battery: Span,
    pub latency: Span,
    pub flash: f64,
    pub ram: f64,
}

/// A place in the ranking: `rank` is shared by ties (1, 1, 3, …).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placed {
    pub index: usize,
    pub rank: usize,
    pub score: Span,
}

/// Weighted score: every criterion as a ratio to the best nominal value (1 = the best; battery
/// as best ÷ value), weighted mean. The interval takes each criterion at its own interval ends.
/// Sorted by nominal score (index breaks exact equality); a candidate is tied with the leader of
/// the current group while its best case (lo) is not worse than the leader's worst case (hi).
pub fn rank(items: &[Criteria], w: &Weights) -> Vec<Placed> {
    if items.is_empty() {
        return Vec::new();
    }
    let min = |f: &dyn Fn(&Criteria) -> f64| items.iter().map(f).fold(f64::INFINITY, f64::min);
    let best_e = min(&|c| c.energy.value);
    let best_l = min(&|c| c.latency.value);
    let best_f = min(&|c| c.flash);
    let best_r = min(&|c| c.ram);
    let best_b = items.iter().map(|c| c.battery.value).fold(0.0, f64::max);
    let ratio = |v: f64, best: f64| if best > 0.0 { v / best } else { 1.0 };
    let total = w.energy + w.battery + w.latency + w.flash + w.ram;
    let score = |c: &Criteria, pick: &dyn Fn(&Span) -> f64, inv: &dyn Fn(&Span) -> f64| {
        (w.energy * ratio(pick(&c.energy), best_e)
            + w.latency * ratio(pick(&c.latency), best_l)
            + w.battery * if inv(&c.battery) > 0.0 { best_b / inv(&c.battery) } else { f64::INFINITY }
            + w.flash * ratio(c.flash, best_f)
            + w.ram * ratio(c.ram, best_r))
            / total
    };
    let mut placed: Vec<Placed> = items
        .iter()
        .enumerate()
        .map(|(i, c)| Placed {
            index: i,
            rank: 0,
            score: Span {
                value: score(c, &|s| s.value, &|s| s.value),
                lo: score(c, &|s| s.lo, &|s| s.hi),
                hi: score(c, &|s| s.hi, &|s| s.lo),
            },
        })
        .collect();
    placed.sort_by(|a, b| a.score.value.total_cmp(&b.score.value).then(a.index.cmp(&b.index)));
    let mut leader = 0;
    for i in 0..placed.len() {
        if i == 0 || placed[i].score.lo > placed[leader].score.hi {
            leader = i;
        }
        placed[i].rank = leader + 1;
    }
    placed
}

/// The option a filter answers to, for the error when nothing passes.
fn filter_option(f: &str) -> &'static str {
    match f {
        "status" => "--require/--allow-provisional",
        "security" => "--security",
        "integrity" => "--require",
        "flash" => "--flash",
        "ram" => "--ram",
        "counter" => "--lifetime",
        "schedule" => "--interval",
        _ => "--board",
    }
}

/// Filters, figures and ranking for one request.
#[derive(Clone, Debug, Serialize)]
pub struct Evaluation {
    pub candidates: Vec<Candidate>,
    /// Ids of the passed candidates, best first.
    pub ranking: Vec<String>,
}

impl Evaluation {
    pub fn top(&self) -> Option<&Candidate> {
        self.ranking.first().and_then(|id| self.candidates.iter().find(|c| &c.id == id))
    }
    /// Ids sharing the first place.
    pub fn top_group(&self) -> Vec<String> {
        self.ranking
            .iter()
            .filter_map(|id| self.candidates.iter().find(|c| &c.id == id))
            .filter(|c| c.rank == Some(1))
            .map(|c| c.id.clone())
            .collect()
    }
}

fn fmt_bytes(b: u64) -> String {
    if b >= 1024 && b.is_multiple_of(1024) {
        format!("{} KiB", b / 1024)
    } else {
        format!("{b} B")
    }
}

pub fn evaluate(req: &Request, data: &Data, facts: &[Facts]) -> Evaluation {
    let mut cands = Vec::new();
    for f in facts {
        let st = data.status.iter().find(|s| s.cipher == f.cipher);
        let (status, document) = st.map(|s| (s.status.clone(), s.document.clone())).unwrap_or_default();
        let figs = figures(req, data, f);
        let mut removed: Vec<(String, String)> = Vec::new();
        // 1. status
        match st {
            None => removed.push(("status".into(), "no row in data/cipher-status.csv: status unknown".into())),
            Some(s) if s.status == "provisional" && !req.allow_provisional => removed.push((
                "status".into(),
                format!("provisional ({}): not the published cipher; --allow-provisional shows it", s.document),
            )),
            Some(s) if req.require == Require::Standard && s.status != "standard" => removed.push((
                "status".into(),
                format!("--require standard: status {} ({}), not a standard", s.status, s.document),
            )),
            _ => {}
        }
        // 2. security
        if f.key_bits < req.security {
            removed.push(("security".into(), format!("{}-bit key is below --security {}", f.key_bits, req.security)));
        }
        // 3. integrity
        let protection = match (f.block, f.kind) {
            (true, _) => "none: a block cipher (needs a mode; not on the link)".to_string(),
            (false, Some(Kind::Aead)) => "the cipher's own AEAD".to_string(),
            (false, Some(Kind::StreamPoly1305)) => {
                "this project's composition: stream cipher + one-time Poly1305 (RFC 8439 style)".to_string()
            }
            (false, None) => "none: not on the link".to_string(),
        };
        match (f.block, f.kind) {
            (true, _) | (false, None) => removed.push(("integrity".into(), format!("no integrity: {protection}"))),
            (false, Some(Kind::StreamPoly1305)) if req.require == Require::Aead => removed.push((
                "integrity".into(),
                "--require aead: integrity only from this project's stream + Poly1305 composition".into(),
            )),
            _ => {}
        }
        // 4. an image on the board's core
        match &figs {
            None => removed.push((
                "image".into(),
                format!(
                    "no microcontroller image of this implementation for {} ({}) in data/emulated-cycles.csv and data/mcu-sizes.csv: no figures on the board",
                    req.board.id, req.board.target
                ),
            )),
            Some(g) => {
                // 5. flash, 6. RAM
                if let Some(max) = req.flash.filter(|&m| g.flash_bytes > m) {
                    removed.push((
                        "flash".into(),
                        format!("image {} B is above --flash {}", g.flash_bytes, fmt_bytes(max)),
                    ));
                }
                if let Some(max) = req.ram.filter(|&m| g.ram_bytes > m) {
                    removed.push(("ram".into(), format!("RAM {} B is above --ram {}", g.ram_bytes, fmt_bytes(max))));
                }
            }
        }
        // 7. counter space over the lifetime (of the nonce the link builds: link ciphers only)
        let space = counter_space(f.nonce_bytes);
        if f.link_id.is_some() && space < req.messages() {
            removed.push((
                "counter".into(),
                format!(
                    "{:.0} messages over --lifetime exceed the {space:.0} nonces of a {}-byte nonce under the link's 8-byte counter",
                    req.messages(),
                    f.nonce_bytes
                ),
            ));
        }
        // 8. the schedule: one report (crypto, then every packet on air) ends before the next
        if let Some(g) = figs.as_ref().filter(|g| g.latency_ms.value > req.interval_s * 1e3) {
            let why =
                format!("one report {}, longer than --interval {}", report_time(g, req), fmt_secs(req.interval_s));
            removed.push(("schedule".into(), why));
        }
        let passed = removed.is_empty();
        let reasons = if passed {
            let mut why = vec![format!(
                "passed: {} ({}), {}-bit key ≥ {}, {}, {}-bit tag",
                if status.is_empty() { "no status" } else { &status },
                document,
                f.key_bits,
                req.security,
                protection,
                f.tag_bytes * 8
            )];
            if status == "provisional" {
                why.push("PROVISIONAL reconstruction: not the published cipher, must not protect data".into());
            }
            // A short tag's forgery bound: about q/2^t for q attempts (docs/security.md).
            let t = f.tag_bytes * 8;
            if t > 0 && t < 128 {
                let budget = crate::gateway::checks::default_max_failed_tags(f.tag_bytes);
                why.push(format!(
                    "forgery bound ({t}-bit tag): about q/2^{t} after q forged frames; one per message over the \
                     lifetime (q = {:.0}): {:.1e}; the link's failed-tag budget per device (--max-failed-tags, \
                     {budget}): {:.1e} (docs/security.md)",
                    req.messages(),
                    req.messages() / 2f64.powi(t as i32),
                    budget as f64 / 2f64.powi(t as i32)
                ));
            }
            why
        } else {
            removed.iter().map(|(k, r)| format!("{k}: {r}")).collect()
        };
        cands.push(Candidate {
            id: f.id(),
            cipher: f.cipher.clone(),
            implementation: f.implementation.clone(),
            link_id: f.link_id,
            status,
            status_document: document,
            key_bits: f.key_bits,
            protection,
            passed,
            removed_by: removed.into_iter().map(|(k, _)| k).collect(),
            reasons,
            figures: figs,
            rank: None,
            score: None,
        });
    }
    let passed: Vec<usize> = (0..cands.len()).filter(|&i| cands[i].passed).collect();
    let crit: Vec<Criteria> = passed
        .iter()
        .map(|&i| {
            let g = cands[i].figures.as_ref().expect("a passed candidate has figures");
            Criteria {
                energy: g.energy_uj,
                battery: g.battery_days,
                latency: g.latency_ms,
                flash: g.flash_bytes as f64,
                ram: g.ram_bytes as f64,
            }
        })
        .collect();
    let mut ranking = Vec::new();
    for p in rank(&crit, &req.weights) {
        let c = &mut cands[passed[p.index]];
        c.rank = Some(p.rank);
        c.score = Some(p.score);
        ranking.push(c.id.clone());
    }
    Evaluation { candidates: cands, ranking }
}

/// `v` seconds for a message: milliseconds below one second.
fn fmt_secs(v: f64) -> String {
    if v < 1.0 {
        format!("{} ms", fmt_num(v * 1e3))
    } else {
        format!("{} s", fmt_num(v))
    }
}

/// How long one report of `g` takes: its time on air over all packets, and the crypto.
fn report_time(g: &Figures, req: &Request) -> String {
    let air_s = g.air_time_ms / 1e3;
    format!(
        "takes {} ({} on air in {} packet{} of {} for the {}-byte frame + {} crypto)",
        fmt_secs(g.latency_ms.value / 1e3),
        fmt_secs(air_s),
        g.packets,
        if g.packets == 1 { "" } else { "s" },
        req.radio.name,
        g.frame_bytes,
        fmt_secs((g.latency_ms.value - g.air_time_ms) / 1e3)
    )
}

/// The error when nothing passes: `--interval` when candidates fail only on the schedule (with
/// the shortest report), the budget options when candidates fail only on them (with the
/// smallest figure that would fit), else the options whose filters removed the rest.
pub fn nothing_passes(req: &Request, ev: &Evaluation) -> String {
    let quickest = ev
        .candidates
        .iter()
        .filter(|c| c.removed_by.iter().all(|f| f == "schedule") && !c.removed_by.is_empty())
        .filter_map(|c| c.figures.as_ref().map(|g| (c, g)))
        .min_by(|a, b| a.1.latency_ms.value.total_cmp(&b.1.latency_ms.value));
    if let Some((c, g)) = quickest {
        return format!(
            "--interval: {} is shorter than the quickest report: {} {}",
            fmt_secs(req.interval_s),
            c.id,
            report_time(g, req)
        );
    }
    let budget_only: Vec<&Candidate> = ev
        .candidates
        .iter()
        .filter(|c| !c.removed_by.is_empty() && c.removed_by.iter().all(|f| f == "flash" || f == "ram"))
        .collect();
    if !budget_only.is_empty() {
        let mut parts = Vec::new();
        for (f, opt) in [("flash", "--flash"), ("ram", "--ram")] {
            let least = budget_only
                .iter()
                .filter(|c| c.removed_by.iter().any(|x| x == f))
                .filter_map(|c| c.figures.as_ref())
                .map(|g| if f == "flash" { g.flash_bytes } else { g.ram_bytes })
                .min();
            if let Some(b) = least {
                parts.push(format!(
                    "{opt}: no candidate fits (the smallest that passes every other filter needs {b} B)"
                ));
            }
        }
        return parts.join("; ");
    }
    let tunable = ["security", "status", "integrity", "counter", "schedule"];
    let mut opts: Vec<&str> = Vec::new();
    for c in &ev.candidates {
        if !c.removed_by.is_empty() && c.removed_by.iter().all(|f| tunable.contains(&f.as_str())) {
            for f in &c.removed_by {
                let o = filter_option(f);
                if !opts.contains(&o) {
                    opts.push(o);
                }
            }
        }
    }
    if opts.is_empty() {
        opts.push("--board");
    }
    format!("{}: no candidate passes the filters", opts.join(", "))
}

/// One row of the robustness table.
#[derive(Clone, Debug, Serialize)]
pub struct Robust {
    pub change: String,
    pub setting: String,
    pub top: Option<String>,
    pub top_group: Vec<String>,
    /// False when the chosen cipher is not in the first place under the change.
    pub same: bool,
}

/// The request with one setting moved one step: interval and payload halved/doubled, the radio
/// the next slower/faster one for this frame (time on air of the request's frame).
pub fn robustness(req: &Request, data: &Data, facts: &[Facts], chosen: &str) -> Vec<Robust> {
    let mut variants: Vec<(String, String, Request)> = Vec::new();
    for (label, k) in [("interval ÷ 2", 0.5), ("interval × 2", 2.0)] {
        let mut r = req.clone();
        r.interval_s = req.interval_s * k;
        r.battery.interval_s = r.interval_s;
        variants.push(("interval".into(), format!("{label} = {} s", fmt_num(r.interval_s)), r));
    }
    for (label, k) in [("payload ÷ 2", 0.5), ("payload × 2", 2.0)] {
        let mut r = req.clone();
        r.payload = ((req.payload as f64 * k).round() as usize).clamp(1, MAX_PAYLOAD);
        variants.push(("payload".into(), format!("{label} = {} B", r.payload), r));
    }
    let frame = HEADER_LEN + req.payload + POLY_TAG;
    let mut radios = energy::builtin();
    radios.sort_by(|a, b| b.air_time(frame).total_cmp(&a.air_time(frame)));
    if let Some(pos) = radios.iter().position(|r| r.name == req.radio.name) {
        for (label, j) in [("radio one step slower", pos.checked_sub(1)), ("radio one step faster", Some(pos + 1))] {
            if let Some(r2) = j.and_then(|j| radios.get(j)) {
                let mut r = req.clone();
                r.radio = r2.clone();
                variants.push(("radio".into(), format!("{label} = {}", r2.name), r));
            }
        }
    }
    variants
        .into_iter()
        .map(|(change, setting, r)| {
            let ev = evaluate(&r, data, facts);
            let group = ev.top_group();
            Robust {
                change,
                setting,
                top: ev.top().map(|c| c.id.clone()),
                same: group.iter().any(|g| g == chosen),
                top_group: group,
            }
        })
        .collect()
}

/// `v` for people: whole numbers as such, three decimals from 1 up, six below (so that half of
/// a 1 ms interval does not print as 0).
fn fmt_num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        let s = if v.abs() < 1.0 { format!("{v:.6}") } else { format!("{v:.3}") };
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The `lwcbench link` command and the firmware build that deploy the choice.
#[derive(Clone, Debug, Serialize)]
pub struct Handover {
    pub link_command: Vec<String>,
    pub link_command_line: String,
    pub firmware_build: String,
    /// A dataset CSV whose readings are the request's payload (None: the built-in readings are).
    pub dataset: Option<DatasetSpec>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DatasetSpec {
    pub file: String,
    pub channels: usize,
    pub reading_bytes: usize,
}

/// Bytes of one reading of the link's built-in dataset (one float32 per channel).
pub fn builtin_reading_bytes() -> usize {
    lwcbench_engine::dataset::Dataset::builtin().channels.len() * 4
}

/// A dataset with `channels` float32 channels and a few rows: readings of `channels × 4` bytes.
pub fn dataset_csv(channels: usize) -> String {
    let mut s = String::from("time");
    for i in 0..channels {
        s.push_str(&format!(",c{i}"));
    }
    s.push('\n');
    for row in 0..4 {
        s.push_str(&format!("2026-01-01T00:00:0{row}Z"));
        for i in 0..channels {
            s.push_str(&format!(",{}", (row * 7 + i) % 1000));
        }
        s.push('\n');
    }
    s
}

fn shell_word(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:+,".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

pub fn handover(req: &Request, chosen: &Candidate, data: &Data, out: Option<&str>) -> Handover {
    let builtin = builtin_reading_bytes();
    let dataset = (req.payload != builtin).then(|| {
        let channels = req.payload.div_ceil(4);
        let dir = out.unwrap_or("DIR");
        DatasetSpec { file: format!("{dir}/choose-dataset.csv"), channels, reading_bytes: channels * 4 }
    });
    let mut cmd: Vec<String> = ["lwcbench", "link", "--cipher"].iter().map(|s| s.to_string()).collect();
    cmd.push(chosen.id.clone());
    // A gated suite runs on the link only with its flag (docs/security.md "Gated ciphers").
    if let Ok(s) = crate::wire::suite::find(&chosen.id) {
        cmd.extend(crate::wire::gate::flags(&s).iter().map(|f| f.to_string()));
    }
    for (k, v) in [
        ("--devices", "1".to_string()),
        ("--messages", "20".to_string()),
        ("--interval", "10ms".to_string()),
        ("--board", req.board.id.clone()),
        ("--radio", req.radio.name.clone()),
        // The shortest decimal that reads back as the same double: the link gets the request's
        // exact values, not a rounded copy.
        ("--report-interval", format!("{}s", req.interval_s)),
        ("--chemistry", req.battery.chemistry.name.clone()),
        ("--battery-mah", format!("{}", req.battery.capacity_mah)),
        ("--battery-v", format!("{}", req.battery.volts)),
    ] {
        cmd.push(k.into());
        cmd.push(v);
    }
    if let Some(d) = &dataset {
        cmd.push("--dataset".into());
        cmd.push(d.file.clone());
    }
    cmd.push("--out".into());
    cmd.push(format!("{}/link-run", out.unwrap_or("DIR")));
    let line = cmd.iter().map(|w| shell_word(w)).collect::<Vec<_>>().join(" ");
    let firmware = match data.size(&req.board.target, &chosen.cipher, &chosen.implementation) {
        Some(s) => format!(
            "cd mcu/images && cargo build --profile release --bin {} --target {}   # the measured image (Os); artifact target/mcu/{}/release/{}",
            s.image, s.target, s.target, s.image
        ),
        None => "no microcontroller image".into(),
    };
    Handover { link_command: cmd, link_command_line: line, firmware_build: firmware, dataset }
}

/// The whole answer (`--json`; docs/choose.md "JSON").
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub request: serde_json::Value,
    pub board: serde_json::Value,
    pub radio: serde_json::Value,
    pub error_model: ErrorBand,
    pub weights: Weights,
    pub candidates: Vec<Candidate>,
    pub ranking: Vec<String>,
    pub chosen: String,
    pub ties_with_chosen: Vec<String>,
    pub robustness: Vec<Robust>,
    /// True when a one-step change takes the chosen cipher out of the first place.
    pub flips: bool,
    pub handover: Handover,
}

/// Resolve, filter, rank, test robustness and hand over: the one call behind the CLI and Python.
pub fn choose(o: &Options, out: Option<&str>) -> Result<Report, String> {
    let req = Request::resolve(o)?;
    let data = Data::builtin();
    let facts = catalogue_facts(&data);
    let ev = evaluate(&req, &data, &facts);
    let Some(chosen) = ev.top().cloned() else { return Err(nothing_passes(&req, &ev)) };
    let rob = robustness(&req, &data, &facts, &chosen.id);
    let flips = rob.iter().any(|r| !r.same);
    let hand = handover(&req, &chosen, &data, out);
    let timing =
        req.board.cycles(&chosen.cipher, &chosen.implementation).map(|c| c.timing_model.clone()).unwrap_or_default();
    let band = data.errors.iter().find(|e| e.timing_model == timing).cloned().expect("a passed candidate has a band");
    let b = &req.board;
    let r = &req.radio;
    Ok(Report {
        schema: SCHEMA,
        request: serde_json::json!({
            "board": b.id, "radio": r.name, "interval_s": req.interval_s, "payload_bytes": req.payload,
            "flash_bytes": req.flash, "ram_bytes": req.ram, "security_bits": req.security,
            "require": req.require, "lifetime_s": req.lifetime_s, "messages_over_lifetime": req.messages(),
            "allow_provisional": req.allow_provisional, "chemistry": req.battery.chemistry.name,
            "battery_mah": req.battery.capacity_mah, "battery_v": req.battery.volts,
            "sleep_ua": req.battery.sleep_ua,
        }),
        board: serde_json::json!({
            "id": b.id, "chip": b.chip, "core": b.core, "target": b.target, "clock_mhz": b.clock_mhz,
            "active_w": b.active_w(), "sleep_w": b.sleep_w(), "status": b.status, "source": b.source,
        }),
        radio: serde_json::json!({ "name": r.name, "tx_w": r.tx_w, "status": r.status, "source": r.source }),
        error_model: band,
        weights: req.weights.clone(),
        ties_with_chosen: ev.top_group().into_iter().filter(|id| id != &chosen.id).collect(),
        candidates: ev.candidates,
        ranking: ev.ranking,
        chosen: chosen.id.clone(),
        robustness: rob,
        flips,
        handover: hand,
    })
}

/// The first place of a robustness row; under some changes (a slower radio for a large frame)
/// no candidate passes.
fn first_place(r: &Robust) -> String {
    if r.top_group.is_empty() {
        "none passes".into()
    } else {
        r.top_group.join(" = ")
    }
}

fn rank_label(c: &Candidate, all: &[Candidate]) -> String {
    match c.rank {
        Some(r) if all.iter().filter(|o| o.rank == Some(r)).count() > 1 => format!("{r}="),
        Some(r) => r.to_string(),
        None => "-".into(),
    }
}

/// The text answer (stdout without `--json`).
pub fn text(rep: &Report) -> String {
    let mut s = String::new();
    let q = &rep.request;
    let w = &rep.weights;
    s.push_str(&format!(
        "lwcbench choose: board {} ({}, {} MHz), radio {}, one {} B reading every {} s, {} messages over the lifetime\n",
        rep.board["id"].as_str().unwrap_or(""),
        rep.board["core"].as_str().unwrap_or(""),
        rep.board["clock_mhz"],
        rep.radio["name"].as_str().unwrap_or(""),
        q["payload_bytes"],
        fmt_num(q["interval_s"].as_f64().unwrap_or(0.0)),
        fmt_num(q["messages_over_lifetime"].as_f64().unwrap_or(0.0)),
    ));
    s.push_str(&format!(
        "weights: energy {} battery {} latency {} flash {} ram {} (score = weighted mean of value ÷ best; 1.00 = best on every criterion)\n",
        w.energy, w.battery, w.latency, w.flash, w.ram
    ));
    s.push_str(&format!(
        "error model: emulated cycles ±{} % ({} timing model: {}); radio, flash and RAM exact under their models; overlapping score intervals are ties (rank n=)\n\n",
        rep.error_model.error_pct, rep.error_model.timing_model, rep.error_model.source
    ));
    s.push_str(&format!(
        "{:<5} {:<30} {:>17} {:>12} {:>10} {:>11} {:>7} {:>6} {:>6}\n",
        "rank", "cipher", "score [lo–hi]", "energy µJ", "battery d", "latency ms", "flash", "RAM", "frame"
    ));
    for id in &rep.ranking {
        let c = rep.candidates.iter().find(|c| &c.id == id).expect("ranked id");
        let (g, sc) = (c.figures.as_ref().expect("figures"), c.score.expect("score"));
        s.push_str(&format!(
            "{:<5} {:<30} {:>17} {:>12.1} {:>10.0} {:>11.2} {:>7} {:>6} {:>6}\n",
            rank_label(c, &rep.candidates),
            c.id,
            format!("{:.3} [{:.3}–{:.3}]", sc.value, sc.lo, sc.hi),
            g.energy_uj.value,
            g.battery_days.value,
            g.latency_ms.value,
            g.flash_bytes,
            g.ram_bytes,
            g.frame_bytes
        ));
    }
    s.push_str("\ncandidates:\n");
    for c in &rep.candidates {
        let tag = if c.passed { "PASS" } else { "OUT " };
        s.push_str(&format!("  {tag} {:<30} {}\n", c.id, c.reasons.join("; ")));
    }
    if let Some(c) = rep.candidates.iter().find(|c| c.id == rep.chosen) {
        if let Some(g) = &c.figures {
            s.push_str(&format!("\nsources ({}):\n", c.id));
            for (k, v) in &g.sources {
                s.push_str(&format!("  {k}: {v}\n"));
            }
        }
    }
    s.push_str("\nrobustness (one step either way):\n");
    s.push_str(&format!("  {:<10} {:<40} {:<34} {}\n", "change", "setting", "first place", "chosen still first?"));
    for r in &rep.robustness {
        s.push_str(&format!(
            "  {:<10} {:<40} {:<34} {}\n",
            r.change,
            r.setting,
            first_place(r),
            if r.same { "yes" } else { "NO: the decision flips" }
        ));
    }
    s.push_str(&format!(
        "\nchoice: {}{}{}\n",
        rep.chosen,
        if rep.ties_with_chosen.is_empty() {
            String::new()
        } else {
            format!(" (tied within the error model with {})", rep.ties_with_chosen.join(", "))
        },
        if rep.flips { "; the decision flips on a one-step change (table above)" } else { "" }
    ));
    let h = &rep.handover;
    s.push_str(&format!("firmware: {}\n", h.firmware_build));
    if let Some(d) = &h.dataset {
        s.push_str(&format!(
            "dataset: {} ({} float32 channels = {} B per reading){}\n",
            d.file,
            d.channels,
            d.reading_bytes,
            if d.reading_bytes != rep.request["payload_bytes"].as_u64().unwrap_or(0) as usize {
                " (the payload rounded up to whole float32 readings)"
            } else {
                ""
            }
        ));
    }
    s.push_str(&format!("deploy:   {}\n", h.link_command_line));
    s
}

/// The files of an answer in `--out DIR`; an earlier answer is these and nothing else.
pub const OUT_FILES: [&str; 4] = ["choose.json", "choose.txt", "choose.html", "choose-dataset.csv"];

/// Check `dir` before anything is written: an earlier answer (choose.json) is replaced only with
/// `force`, and only when the directory holds nothing but answer files (a link run made from
/// its hand-over, DIR/link-run, is not choose's to delete); a non-empty directory without an
/// answer is refused.
pub fn check_out(dir: &std::path::Path, force: bool) -> Result<(), String> {
    let shown = dir.display().to_string();
    crate::input::no_control("--out", &shown)?;
    let meta = match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("--out: {shown}: {e}")),
        Ok(m) => m,
    };
    if !meta.is_dir() {
        return Err(format!("--out: {shown} exists and is not a directory"));
    }
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("--out: {shown}: {e}"))? {
        let e = e.map_err(|e| format!("--out: {shown}: {e}"))?;
        names.push(e.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    if names.is_empty() {
        return Ok(());
    }
    if !names.iter().any(|n| n == "choose.json") {
        return Err(format!(
            "--out: {shown} is not empty and holds no answer (no choose.json): choose a new directory"
        ));
    }
    if !force {
        return Err(format!("--out: {shown} already holds an answer (use --force to replace it)"));
    }
    if let Some(other) = names.iter().find(|n| !OUT_FILES.contains(&n.as_str())) {
        return Err(format!(
            "--out: {shown} holds '{}', which choose did not write: --force replaces an answer only in a directory of its own",
            prefix(other)
        ));
    }
    Ok(())
}

/// Write choose.json, choose.txt, choose.html (and choose-dataset.csv when the handover needs
/// it) into `dir` as one unit (the engine's run directory writer): a kill or a full disk at any
/// step leaves the earlier answer, the new one, or nothing; never a mix. Returns the file names.
pub fn write_out(dir: &std::path::Path, rep: &Report, force: bool) -> Result<Vec<&'static str>, String> {
    check_out(dir, force)?;
    let shown = dir.display();
    let json = serde_json::to_string_pretty(rep).expect("the report serialises");
    let mut files = vec![
        ("choose.json", json.into_bytes()),
        ("choose.txt", text(rep).into_bytes()),
        ("choose.html", html(rep).into_bytes()),
    ];
    if let Some(d) = &rep.handover.dataset {
        files.push(("choose-dataset.csv", dataset_csv(d.channels).into_bytes()));
    }
    let mut w = lwcbench_engine::results::RunDirWriter::begin(dir)
        .map_err(|e| format!("--out: {shown}: cannot start the answer: {e}"))?;
    let mut names = Vec::new();
    for (name, bytes) in files {
        w.add(name, &bytes).map_err(|e| format!("--out: {shown}: cannot write {name}: {e}"))?;
        names.push(name);
    }
    w.commit().map_err(|e| format!("--out: {shown}: cannot put the answer in place: {e}"))?;
    Ok(names)
}

fn esc(s: &str) -> String {
    lwcbench_engine::html::esc(s)
}

/// Pareto chart (energy per message against flash) of the passed candidates; the front (no
/// other candidate has less energy and less flash) is drawn filled.
pub fn pareto_svg(points: &[(String, f64, f64)]) -> String {
    let (w, h, l, r, t, b) = (720.0, 420.0, 80.0, 20.0, 20.0, 50.0);
    let xmax = points.iter().map(|p| p.1).fold(1.0, f64::max) * 1.1;
    let ymin = points.iter().map(|p| p.2).fold(f64::INFINITY, f64::min);
    let ymax = points.iter().map(|p| p.2).fold(0.0, f64::max);
    let (y0, y1) = if ymax > ymin {
        (ymin - (ymax - ymin) * 0.1, ymax + (ymax - ymin) * 0.1)
    } else {
        (ymin * 0.9, ymin * 1.1 + 1e-9)
    };
    let sx = |x: f64| l + x / xmax * (w - l - r);
    let sy = |y: f64| h - b - (y - y0) / (y1 - y0) * (h - t - b);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"energy per message against flash\">\n\
<line x1=\"{l}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/><line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{}\" stroke=\"#333\"/>\n\
<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">flash (bytes)</text>\n\
<text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">energy per message (µJ)</text>\n",
        h - b,
        w - r,
        h - b,
        h - b,
        (w + l) / 2.0,
        h - 10.0,
        (h - b + t) / 2.0,
        (h - b + t) / 2.0
    );
    for i in 0..=4 {
        let xv = xmax * i as f64 / 4.0;
        let yv = y0 + (y1 - y0) * i as f64 / 4.0;
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{:.0}</text><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">{:.1}</text>\n",
            sx(xv), h - b + 16.0, xv, l - 4.0, sy(yv) + 4.0, yv
        ));
    }
    for (i, (name, x, y)) in points.iter().enumerate() {
        let front = !points.iter().any(|(_, x2, y2)| x2 <= x && y2 <= y && (x2 < x || y2 < y));
        let fill = if front { "#1f77b4" } else { "none" };
        s.push_str(&format!(
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{fill}\" stroke=\"#1f77b4\"><title>{}: {:.0} B, {:.2} µJ{}</title></circle>\
<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text>\n",
            sx(*x),
            sy(*y),
            esc(name),
            x,
            y,
            if front { " (Pareto front)" } else { "" },
            sx(*x) + 7.0,
            sy(*y) - 6.0 - (i % 3) as f64 * 9.0,
            esc(name)
        ));
    }
    s.push_str("</svg>\n");
    s
}

/// The HTML page (`--out DIR/choose.html`): no script, no network.
pub fn html(rep: &Report) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>lwcbench choose</title>\n\
<style>body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px}td.n{text-align:right}.out{color:#777}</style></head><body>\n",
    );
    let text = text(rep);
    let first = text.lines().next().unwrap_or("");
    s.push_str(&format!("<h1>lwcbench choose</h1>\n<p>{}</p>\n", esc(first)));
    s.push_str(&format!(
        "<p><b>Choice: {}</b>{}{}</p>\n",
        esc(&rep.chosen),
        if rep.ties_with_chosen.is_empty() {
            String::new()
        } else {
            esc(&format!(" — tied within the error model with {}", rep.ties_with_chosen.join(", ")))
        },
        if rep.flips { " — <b>the decision flips on a one-step change</b> (robustness below)" } else { "" }
    ));
    let w = &rep.weights;
    s.push_str(&format!(
        "<p>Weights: energy {} · battery {} · latency {} · flash {} · RAM {}. Error model: emulated cycles ±{} % ({}); overlapping score intervals are ties.</p>\n",
        w.energy, w.battery, w.latency, w.flash, w.ram, rep.error_model.error_pct, esc(&rep.error_model.source)
    ));
    let pts: Vec<(String, f64, f64)> = rep
        .ranking
        .iter()
        .filter_map(|id| rep.candidates.iter().find(|c| &c.id == id))
        .filter_map(|c| c.figures.as_ref().map(|g| (c.id.clone(), g.flash_bytes as f64, g.energy_uj.value)))
        .collect();
    s.push_str("<h2>Energy per message against flash (passed candidates; filled = Pareto front)</h2>\n");
    s.push_str(&pareto_svg(&pts));
    s.push_str("<h2>Ranking</h2>\n<table><tr><th>rank</th><th>cipher</th><th>score</th><th>lo</th><th>hi</th><th>energy µJ</th><th>crypto µJ</th><th>radio µJ</th><th>battery days</th><th>latency ms</th><th>flash B</th><th>RAM B</th><th>frame B</th><th>status</th><th>protection</th></tr>\n");
    for id in &rep.ranking {
        let c = rep.candidates.iter().find(|c| &c.id == id).expect("ranked id");
        let (g, sc) = (c.figures.as_ref().expect("figures"), c.score.expect("score"));
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td class=n>{:.3}</td><td class=n>{:.3}</td><td class=n>{:.3}</td><td class=n>{:.1}</td><td class=n>{:.2}</td><td class=n>{:.1}</td><td class=n>{:.0}</td><td class=n>{:.2}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&rank_label(c, &rep.candidates)), esc(&c.id), sc.value, sc.lo, sc.hi, g.energy_uj.value, g.crypto_uj.value,
            g.radio_uj, g.battery_days.value, g.latency_ms.value, g.flash_bytes, g.ram_bytes, g.frame_bytes,
            esc(&format!("{} ({})", c.status, c.status_document)), esc(&c.protection)
        ));
    }
    s.push_str("</table>\n<h2>Every candidate</h2>\n<table><tr><th>cipher</th><th>verdict</th></tr>\n");
    for c in &rep.candidates {
        s.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{}</td></tr>\n",
            if c.passed { "in" } else { "out" },
            esc(&c.id),
            esc(&c.reasons.join("; "))
        ));
    }
    s.push_str("</table>\n<h2>Sources of the chosen cipher's figures</h2>\n<ul>\n");
    if let Some(g) = rep.candidates.iter().find(|c| c.id == rep.chosen).and_then(|c| c.figures.as_ref()) {
        for (k, v) in &g.sources {
            s.push_str(&format!("<li><b>{}</b>: {}</li>\n", esc(k), esc(v)));
        }
    }
    s.push_str("</ul>\n<h2>Robustness: one step either way</h2>\n<table><tr><th>change</th><th>setting</th><th>first place</th><th>chosen still first?</th></tr>\n");
    for r in &rep.robustness {
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&r.change),
            esc(&r.setting),
            esc(&first_place(r)),
            if r.same { "yes" } else { "<b>no: flips</b>" }
        ));
    }
    s.push_str(&format!(
        "</table>\n<h2>Deploy</h2>\n<p>Firmware: <code>{}</code></p>\n<p>Link: <code>{}</code></p>\n</body></html>\n",
        esc(&rep.handover.firmware_build),
        esc(&rep.handover.link_command_line)
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(board: &str, radio: &str, interval: &str) -> Options {
        Options { board: board.into(), radio: radio.into(), interval: interval.into(), ..Options::default() }
    }

    fn eval(o: &Options) -> Evaluation {
        let req = Request::resolve(o).unwrap();
        let data = Data::builtin();
        let facts = catalogue_facts(&data);
        evaluate(&req, &data, &facts)
    }

    fn by<'a>(ev: &'a Evaluation, id: &str) -> &'a Candidate {
        ev.candidates.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("{id} is a candidate"))
    }

    /// (image flash, static RAM + stack) per cipher/implementation on a target, read from
    /// data/mcu-sizes.csv with this test's own line splitting (no quoted fields in that file).
    fn sizes_by_hand(target: &str) -> BTreeMap<String, (u64, u64)> {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/mcu-sizes.csv")).unwrap();
        let mut lines = text.lines().filter(|l| !l.starts_with('#'));
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
        let (ci, ii, ti, fi, ri, si) = (
            col("cipher"),
            col("implementation"),
            col("target"),
            col("flash_bytes"),
            col("ram_static_bytes"),
            col("stack_bytes"),
        );
        lines
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|f| f[ti] == target)
            .map(|f| {
                let n = |i: usize| f[i].parse::<u64>().unwrap();
                (format!("{}/{}", f[ci], f[ii]), (n(fi), n(ri) + n(si)))
            })
            .collect()
    }

    /// Flash of a candidate as the rule in docs/choose.md states it: its own image, plus for the
    /// stream + Poly1305 composition the ChaCha20-Poly1305 image minus the ChaCha20 image.
    fn flash_by_hand(c: &Candidate, sizes: &BTreeMap<String, (u64, u64)>) -> u64 {
        let own = sizes[&c.id].0;
        if c.protection.starts_with("this project's composition") {
            own + sizes["ChaCha20-Poly1305/rustcrypto"].0 - sizes["ChaCha20/rustcrypto"].0
        } else {
            own
        }
    }

    #[test]
    fn flash_budget_removes_exactly_the_larger_images() {
        let sizes = sizes_by_hand("thumbv6m-none-eabi");
        let free = eval(&opts("rp2040", "LoRa-SF9", "10m"));
        let mut o = opts("rp2040", "LoRa-SF9", "10m");
        o.flash = Some("3KiB".into());
        let tight = eval(&o);
        let before: Vec<&Candidate> = free.candidates.iter().filter(|c| c.passed).collect();
        assert!(before.len() >= 5, "enough candidates pass without a budget: {}", before.len());
        let want: Vec<String> =
            before.iter().filter(|c| flash_by_hand(c, &sizes) > 3072).map(|c| c.id.clone()).collect();
        let got: Vec<String> = tight
            .candidates
            .iter()
            .filter(|c| c.removed_by.iter().any(|f| f == "flash"))
            .filter(|c| before.iter().any(|b| b.id == c.id))
            .map(|c| c.id.clone())
            .collect();
        assert_eq!(got, want);
        assert!(!want.is_empty() && want.len() < before.len(), "3 KiB splits the field: {want:?}");
        // Nothing else changes: the others still pass.
        for b in &before {
            assert_eq!(by(&tight, &b.id).passed, !want.contains(&b.id), "{}", b.id);
        }
    }

    #[test]
    fn ram_budget_removes_exactly_the_larger_footprints() {
        let sizes = sizes_by_hand("thumbv7em-none-eabihf");
        let free = eval(&opts("nrf52840", "BLE-1M", "1s"));
        let mut o = opts("nrf52840", "BLE-1M", "1s");
        o.ram = Some("512B".into());
        let tight = eval(&o);
        for b in free.candidates.iter().filter(|c| c.passed) {
            let (_, ram) = sizes[&b.id];
            let ram = if b.protection.starts_with("this project's composition") {
                let (cp, cc) = (sizes["ChaCha20-Poly1305/rustcrypto"].1, sizes["ChaCha20/rustcrypto"].1);
                // static and stack shares separately may each be clamped at 0; the sum bounds it below
                ram + cp.saturating_sub(cc)
            } else {
                ram
            };
            let c = by(&tight, &b.id);
            if !b.protection.starts_with("this project's composition") {
                assert_eq!(c.passed, ram <= 512, "{}: RAM {ram}", b.id);
            } else if ram > 512 {
                assert!(!c.passed, "{}: RAM at least {ram}", b.id);
            }
        }
    }

    #[test]
    fn provisional_draco_only_with_allow_provisional_and_labelled() {
        let ev = eval(&opts("rp2040", "LoRa-SF9", "10m"));
        let d = by(&ev, "DRACO/rust-fast");
        assert_eq!(d.removed_by, vec!["status".to_string()]);
        assert!(d.reasons[0].contains("--allow-provisional"), "{:?}", d.reasons);
        let mut o = opts("rp2040", "LoRa-SF9", "10m");
        o.allow_provisional = true;
        let ev = eval(&o);
        let d = by(&ev, "DRACO/rust-fast");
        assert!(d.passed && d.rank.is_some());
        assert_eq!(d.status, "provisional");
        assert!(d.reasons.iter().any(|r| r.starts_with("PROVISIONAL")), "{:?}", d.reasons);
    }

    #[test]
    fn security_removes_the_80_bit_keys() {
        // Trivium, Grain v1 and MICKEY 2.0 take 80-bit keys (their eSTREAM specifications).
        let ev = eval(&opts("rp2040", "LoRa-SF9", "10m"));
        let mut low: Vec<&str> = ev
            .candidates
            .iter()
            .filter(|c| c.removed_by.iter().any(|f| f == "security"))
            .map(|c| c.id.as_str())
            .collect();
        low.sort_unstable();
        assert_eq!(low, ["Grain-v1/rust", "MICKEY-2.0/rust", "Trivium/rust"]);
        let mut o = opts("rp2040", "LoRa-SF9", "10m");
        o.security = 80;
        let ev = eval(&o);
        assert!(by(&ev, "Trivium/rust").passed);
    }

    #[test]
    fn require_aead_removes_the_composition_and_standard_keeps_standards() {
        let mut o = opts("rp2040", "LoRa-SF9", "10m");
        o.require = Some("aead".into());
        let ev = eval(&o);
        for c in &ev.candidates {
            let comp = c.protection.starts_with("this project's composition");
            if comp {
                assert!(c.removed_by.contains(&"integrity".to_string()), "{}", c.id);
            }
        }
        assert!(ev.candidates.iter().filter(|c| c.passed).all(|c| c.protection == "the cipher's own AEAD"));
        // The statuses, read with this test's own parsing of data/cipher-status.csv.
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/cipher-status.csv")).unwrap();
        let standard: Vec<String> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .skip(1)
            .filter(|l| l.split(',').nth(1) == Some("standard"))
            .map(|l| l.split(',').next().unwrap().to_string())
            .collect();
        o.require = Some("standard".into());
        let ev = eval(&o);
        let passed: Vec<&Candidate> = ev.candidates.iter().filter(|c| c.passed).collect();
        assert!(!passed.is_empty());
        assert!(
            passed.iter().all(|c| standard.contains(&c.cipher)),
            "{:?}",
            passed.iter().map(|c| &c.id).collect::<Vec<_>>()
        );
        assert!(by(&ev, "TinyJAMBU-128/rust-ref").removed_by.contains(&"status".to_string()));
    }

    #[test]
    fn a_short_nonce_fails_the_counter_filter() {
        let req = Request::resolve(&opts("rp2040", "LoRa-SF9", "10m")).unwrap();
        let data = Data::builtin();
        let mut f = catalogue_facts(&data).into_iter().find(|f| f.id() == "Ascon-AEAD128/rustcrypto").unwrap();
        assert!(evaluate(&req, &data, std::slice::from_ref(&f)).candidates[0].passed);
        // A 4-byte nonce would take only the counter's top 4 bytes: counters 0..2^32 share nonce 0.
        f.nonce_bytes = 4;
        let c = &evaluate(&req, &data, &[f]).candidates[0];
        assert_eq!(c.removed_by, vec!["counter".to_string()]);
        // 10 years every 10 minutes: 3652.5 days × 144 = 525,960 reports.
        assert_eq!(req.messages(), 525_960.0);
    }

    #[test]
    fn energy_of_ascon_on_rp2040_lora_sf9_by_hand() {
        // Hand computation from the data files' rows:
        // frame 16 + 16 + 16 = 48 B; LoRa packet 48 + 13 = 61 B. SF9, 125 kHz: T_sym = 4.096 ms;
        // (8·61 − 36 + 28 + 16) / 36 = 13.78 → 14 × 5 = 70 + 8 = 78 payload symbols + 12.25
        // preamble = 90.25 × 4.096 ms = 369.664 ms; × 0.0957 W = 35,376.845 µJ.
        // Crypto: rc_ascon_aead128 on thumbv6m, 20,898 + (32 − 16) × (38,762 − 20,898) / 112
        // = 23,450 cycles / 125 MHz × 0.125 W (25 mA × 5 V) = 23.45 µJ.
        let ev = eval(&opts("rp2040", "LoRa-SF9", "10m"));
        let g = by(&ev, "Ascon-AEAD128/rustcrypto").figures.clone().unwrap();
        assert_eq!(g.frame_bytes, 48);
        assert!((g.air_time_ms - 369.664).abs() < 1e-6, "{}", g.air_time_ms);
        assert!((g.radio_uj - 35_376.844_8).abs() < 1e-3, "{}", g.radio_uj);
        assert!((g.crypto_cycles - 23_450.0).abs() < 1e-6, "{}", g.crypto_cycles);
        assert!((g.crypto_uj.value - 23.45).abs() < 1e-9, "{}", g.crypto_uj.value);
        // ±5.5 % (m0plus band) on the crypto share only.
        assert!((g.crypto_uj.hi - 23.45 * 1.055).abs() < 1e-9);
        assert!((g.energy_uj.value - (35_376.844_8 + 23.45)).abs() < 1e-3);
    }

    fn crit(e: f64, elo: f64, ehi: f64, flash: f64) -> Criteria {
        Criteria {
            energy: Span { value: e, lo: elo, hi: ehi },
            battery: Span::exact(1.0),
            latency: Span::exact(1.0),
            flash,
            ram: 1.0,
        }
    }

    #[test]
    fn tie_rule_on_hand_made_inputs() {
        let w = Weights { energy: 1.0, battery: 0.0, latency: 0.0, flash: 0.0, ram: 0.0 };
        // Scores are energy / 100: A 1.00 [0.95, 1.05], B 1.04 [1.00, 1.08] overlaps A → tied;
        // C 1.20 [1.18, 1.22] starts a new group (its lo 1.18 > A's hi 1.05), D 1.21 overlaps C
        // (lo 1.19 ≤ C's hi 1.22), E 1.30 [1.29, 1.31] is above C's hi → alone.
        let items = [
            crit(104.0, 100.0, 108.0, 1.0), // B
            crit(100.0, 95.0, 105.0, 1.0),  // A
            crit(121.0, 119.0, 123.0, 1.0), // D
            crit(120.0, 118.0, 122.0, 1.0), // C
            crit(130.0, 129.0, 131.0, 1.0), // E
        ];
        let p = rank(&items, &w);
        let order: Vec<usize> = p.iter().map(|x| x.index).collect();
        let ranks: Vec<usize> = p.iter().map(|x| x.rank).collect();
        assert_eq!(order, [1, 0, 3, 2, 4]);
        assert_eq!(ranks, [1, 1, 3, 3, 5]);
        assert!((p[0].score.hi - 1.05).abs() < 1e-12 && (p[1].score.lo - 1.0).abs() < 1e-12);
        // A group is measured from its leader: X overlaps Y (1.06 ≤ 1.08) but not the leader
        // A (1.06 > 1.05), so it starts rank 3; chaining through Y would have tied it.
        let chain = [crit(100.0, 95.0, 105.0, 1.0), crit(104.0, 100.0, 108.0, 1.0), crit(107.0, 106.0, 110.0, 1.0)];
        assert_eq!(rank(&chain, &w).iter().map(|x| x.rank).collect::<Vec<_>>(), [1, 1, 3]);
        let exact = [crit(100.0, 100.0, 100.0, 1.0), crit(100.5, 100.5, 100.5, 1.0)];
        assert_eq!(rank(&exact, &w).iter().map(|x| x.rank).collect::<Vec<_>>(), [1, 2]);
        // Weighted: energy 1, flash 1; scores (1 + 1)/2 = 1 and (1.02 + 2)/2 = 1.51.
        let w2 = Weights { energy: 1.0, battery: 0.0, latency: 0.0, flash: 1.0, ram: 0.0 };
        let p = rank(&[crit(100.0, 99.0, 101.0, 1000.0), crit(102.0, 101.0, 103.0, 2000.0)], &w2);
        assert!((p[0].score.value - 1.0).abs() < 1e-12 && (p[1].score.value - 1.51).abs() < 1e-12);
        assert_eq!(p[1].rank, 2);
    }

    #[test]
    fn bad_input_names_the_option() {
        let check = |o: Options, needle: &str| {
            let e = Request::resolve(&o).unwrap_err();
            assert!(e.starts_with(needle), "{e}");
            assert!(!e.contains('\n'));
        };
        check(opts("uno", "LoRa-SF9", "10m"), "--board");
        check(opts("rp2040", "LoRa-SF10", "10m"), "--radio");
        check(opts("rp2040", "LoRa-SF9", "10"), "--interval");
        check(opts("rp2040", "LoRa-SF9", "25h"), "--interval");
        check(opts("rp2040", "LoRa-SF9", "-1s"), "--interval");
        check(Options { payload: "16 bytes".into(), ..opts("rp2040", "LoRa-SF9", "10m") }, "--payload");
        check(Options { payload: "0B".into(), ..opts("rp2040", "LoRa-SF9", "10m") }, "--payload");
        check(Options { flash: Some("32kb".into()), ..opts("rp2040", "LoRa-SF9", "10m") }, "--flash");
        check(Options { ram: Some("99999999999999KiB".into()), ..opts("rp2040", "LoRa-SF9", "10m") }, "--ram");
        check(Options { lifetime: "10 years".into(), ..opts("rp2040", "LoRa-SF9", "10m") }, "--lifetime");
        check(Options { require: Some("fips".into()), ..opts("rp2040", "LoRa-SF9", "10m") }, "--require");
        check(Options { weights: Some("speed=1".into()), ..opts("rp2040", "LoRa-SF9", "10m") }, "--weights");
        check(
            Options { weights: Some("energy=0,flash=0,latency=0,ram=0".into()), ..opts("rp2040", "LoRa-SF9", "10m") },
            "--weights",
        );
        check(Options { security: 0, ..opts("rp2040", "LoRa-SF9", "10m") }, "--security");
        let e = choose(&Options { flash: Some("100B".into()), ..opts("rp2040", "LoRa-SF9", "10m") }, None).unwrap_err();
        assert!(e.starts_with("--flash: no candidate fits (the smallest that passes every other filter needs "), "{e}");
    }

    #[test]
    fn data_tables_refuse_bad_rows() {
        assert!(parse_status("cipher,status,document,checked,source\nX,great,d,c,s\n", "f")
            .unwrap_err()
            .contains("line 2"));
        assert!(parse_status("cipher,status,document,checked,source\nX,none,d,c,\n", "f")
            .unwrap_err()
            .contains("no source"));
        assert!(parse_sizes(
            "cipher,implementation,image,target,flash_bytes,ram_static_bytes,stack_bytes\na,b,c,d,1,x,3\n",
            "f"
        )
        .unwrap_err()
        .contains("ram_static_bytes 'x'"));
        assert!(parse_errors("timing_model,error_pct,source\nm0plus,-1,s\n", "f").is_err());
        // Every candidate the link carries on a board has a status row.
        let data = Data::builtin();
        for f in catalogue_facts(&data) {
            if f.link_id.is_some() || data.cycles.iter().any(|c| c.cipher == f.cipher) {
                assert!(data.status.iter().any(|s| s.cipher == f.cipher), "{} has no status row", f.cipher);
            }
        }
    }

    #[test]
    fn robustness_moves_one_step_and_reports_the_first_place() {
        let req = Request::resolve(&opts("rp2040", "LoRa-SF9", "10m")).unwrap();
        let data = Data::builtin();
        let facts = catalogue_facts(&data);
        let rows = robustness(&req, &data, &facts, "none/such");
        let settings: Vec<&str> = rows.iter().map(|r| r.setting.as_str()).collect();
        assert_eq!(
            settings[..4],
            ["interval ÷ 2 = 300 s", "interval × 2 = 1200 s", "payload ÷ 2 = 8 B", "payload × 2 = 32 B"]
        );
        // LoRa SF9 sits between SF12 (slower) and SF7 (faster) for this frame.
        assert_eq!(settings[4..], ["radio one step slower = LoRa-SF12", "radio one step faster = LoRa-SF7"]);
        assert!(rows.iter().all(|r| !r.same && r.top.is_some()));
    }

    // A report that cannot end before the next one, and every float option's range (issue 36).

    #[test]
    fn a_report_longer_than_the_interval_is_refused_naming_both() {
        // Hand computation (the SX1276 formula, as in energy_of_ascon_on_rp2040_lora_sf9_by_hand):
        // SF12, 125 kHz: T_sym = 4096 / 125,000 s = 32.768 ms, low data rate optimisation on.
        // The smallest frame has an 8-byte tag: 16 + 262,112 + 8 = 262,136 B = 5,139 packets of
        // 51 B + one of 47 B, each with 13 B of LoRaWAN overhead.
        // 64 B: (512 − 48 + 28 + 16) / 40 = 12.7 → 13 × 5 + 8 = 73 + 12.25 = 85.25 symbols = 2,793.472 ms;
        // 60 B: (480 − 48 + 28 + 16) / 40 = 11.9 → 12 × 5 + 8 = 68 + 12.25 = 80.25 symbols = 2,629.632 ms;
        // 5,139 × 2,793.472 + 2,629.632 = 14,358,282.24 ms: 14,358.282 s (4 h) in 5,140 packets.
        let o = Options { payload: "262112B".into(), ..opts("rp2040", "LoRa-SF12", "200ms") };
        let e = choose(&o, None).unwrap_err();
        assert!(e.starts_with("--interval: 200 ms is shorter than the quickest report: "), "{e}");
        assert!(e.contains("14358.282 s on air in 5140 packets of LoRa-SF12 for the 262136-byte frame"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    /// A 64-bit-tag candidate states its forgery bound: 100 days at one message per 10 minutes
    /// is 14,400 messages; 14,400 / 2^64 = 7.8e-16, the default budget 2^16 / 2^64 = 2^-48 =
    /// 3.6e-15. A 128-bit tag gets no such line.
    #[test]
    fn a_64_bit_tag_candidate_states_its_forgery_bound() {
        let ev = eval(&Options { lifetime: "100d".into(), ..opts("rp2040", "LoRa-SF9", "10m") });
        let (mut short, mut long) = (0, 0);
        for c in ev.candidates.iter().filter(|c| c.passed) {
            let line = c.reasons.iter().find(|r| r.starts_with("forgery bound"));
            match c.figures.as_ref().unwrap().tag_bytes {
                8 => {
                    let l = line.unwrap_or_else(|| panic!("{}: {:?}", c.id, c.reasons));
                    assert!(l.contains("(q = 14400): 7.8e-16") && l.contains("65536): 3.6e-15"), "{l}");
                    short += 1;
                }
                _ => {
                    assert!(line.is_none(), "{}: {:?}", c.id, c.reasons);
                    long += 1;
                }
            }
        }
        assert!(short > 0 && long > 0, "{short} 64-bit and {long} 128-bit candidates");
    }

    #[test]
    fn the_schedule_removes_exactly_the_reports_longer_than_the_interval() {
        // LoRa SF9 (T_sym 4.096 ms), 16 B: an 8-byte tag gives a 39-byte frame in one 52-byte
        // packet: (416 − 36 + 28 + 16) / 36 = 11.78 → 12 × 5 + 8 = 68 + 12.25 = 80.25 symbols
        // = 328.704 ms; a 16-byte tag 47 → 60 B: 369.664 ms. The crypto adds under 10 ms on
        // the RP2040 (MICKEY-128 2.0, the slowest: 1,029 µJ at 0.125 W = 8.2 ms), so at 350 ms
        // the 8-byte tags fit and every 16-byte tag does not.
        let free = eval(&opts("rp2040", "LoRa-SF9", "10m"));
        let ev = eval(&opts("rp2040", "LoRa-SF9", "350ms"));
        let (mut fit, mut late) = (0, 0);
        for b in free.candidates.iter().filter(|c| c.passed) {
            let c = by(&ev, &b.id);
            match b.figures.as_ref().unwrap().tag_bytes {
                8 => {
                    assert!(c.passed, "{}: {:?}", c.id, c.reasons);
                    fit += 1;
                }
                16 => {
                    assert_eq!(c.removed_by, ["schedule"], "{}", c.id);
                    assert!(
                        c.reasons[0].contains("369.664 ms on air in 1 packet of LoRa-SF9 for the 48-byte frame")
                            && c.reasons[0].ends_with("longer than --interval 350 ms"),
                        "{:?}",
                        c.reasons
                    );
                    late += 1;
                }
                t => panic!("{}: a {t}-byte tag", b.id),
            }
        }
        assert!(fit >= 2 && late >= 5, "{fit} fit, {late} late");
        // The crypto counts too: MICKEY-128 2.0 on the ESP32-C3 needs about a second for a
        // 28,800-byte frame (74 mJ at 0.066 W), far above the 4.4 ms on air over Wi-Fi.
        let cam = eval(&Options { payload: "28800B".into(), ..opts("esp32c3", "WiFi-n-MCS7", "200ms") });
        let m = by(&cam, "MICKEY-128-2.0/rust");
        assert_eq!(m.removed_by, ["schedule"], "{:?}", m.reasons);
        assert!(m.figures.as_ref().unwrap().air_time_ms < 5.0);
        // One step slower is BLE-1M: a 28,831-byte frame is 118 packets of 244 B + one of 39 B,
        // each + 17 B at 1 Mb/s + 140 µs: 118 × 2,228 µs + 588 µs = 263.5 ms on air, above
        // 200 ms for every candidate, so nothing passes there and the row says so.
        let o = Options { payload: "28800B".into(), ..opts("esp32c3", "WiFi-n-MCS7", "200ms") };
        let rep = choose(&o, None).unwrap();
        let slower = rep.robustness.iter().find(|r| r.setting == "radio one step slower = BLE-1M").unwrap();
        assert!(slower.top.is_none() && slower.top_group.is_empty() && !slower.same && rep.flips);
        assert!(text(&rep).lines().any(|l| l.contains("= BLE-1M") && l.contains("none passes")), "{}", text(&rep));
    }

    #[test]
    fn intervals_and_lifetimes_are_bounded_and_read_with_exponents() {
        let base = opts("nrf52840", "BLE-1M", "1s");
        let err = |o: Options| Request::resolve(&o).unwrap_err();
        for bad in ["0.0000001ms", "0.999ms", "1e-300s", "24.001h", "2d", "1e300s", "NaNs", "infs", "-1s", "0s"] {
            let e = err(Options { interval: bad.into(), ..base.clone() });
            assert_eq!(e, format!("--interval: '{bad}' is not between 1 ms and 24 h"));
        }
        let interval = |v: &str| Request::resolve(&Options { interval: v.into(), ..base.clone() }).unwrap().interval_s;
        assert_eq!(interval("1ms"), 0.001);
        assert_eq!(interval("24h"), 86_400.0);
        assert_eq!(interval("1e3ms"), 1.0);
        assert_eq!(interval("300ms"), 0.3);
        assert_eq!(interval("1.5min"), 90.0);
        for bad in ["1e9y", "101y", "0.5s", "1e-9s", "-1y"] {
            let e = err(Options { lifetime: bad.into(), ..base.clone() });
            assert_eq!(e, format!("--lifetime: '{bad}' is not between 1 s and 100 y"));
        }
        let life = |v: &str| Request::resolve(&Options { lifetime: v.into(), ..base.clone() }).unwrap().lifetime_s;
        assert_eq!(life("1s"), 1.0);
        assert_eq!(life("100y"), 100.0 * 365.25 * 86_400.0);
        assert_eq!(
            err(Options { interval: "10".into(), ..base.clone() }),
            "--interval: '10' needs a unit (ms, s, m, h, d, y)"
        );
        let e = err(Options { lifetime: "10 years".into(), ..base.clone() });
        assert!(e.starts_with("--lifetime: '10 years' is not a duration"), "{e}");
    }

    #[test]
    fn battery_options_are_bounded_and_echoed_short() {
        let base = opts("nrf52840", "BLE-1M", "1s");
        let with = |mah: f64, v: f64| Request::resolve(&Options { battery_mah: mah, battery_v: v, ..base.clone() });
        for (mah, v, want) in [
            (1e308, 3.0, "--battery-mah: 1e308 is not between 1 and 1000000 mAh"),
            (0.5, 3.0, "--battery-mah: 0.5 is not between 1 and 1000000 mAh"),
            (1_000_001.0, 3.0, "--battery-mah: 1.000001e6 is not between 1 and 1000000 mAh"),
            (f64::NAN, 3.0, "--battery-mah: NaN is not between 1 and 1000000 mAh"),
            (2400.0, 1e-320, "--battery-v: 1e-320 is not between 0.5 and 60 V"),
            (2400.0, 0.0, "--battery-v: 0 is not between 0.5 and 60 V"),
            (2400.0, f64::INFINITY, "--battery-v: inf is not between 0.5 and 60 V"),
            (2400.0, -3.0, "--battery-v: -3 is not between 0.5 and 60 V"),
            (2400.0, 60.5, "--battery-v: 60.5 is not between 0.5 and 60 V"),
        ] {
            assert_eq!(with(mah, v).unwrap_err(), want);
        }
        // The ends are in range. data/board-power.csv: the nRF52840 sleeps at 1.5 µA × 3.0 V
        // = 4.5 µW, which is 9 µA from a 0.5 V battery.
        for (mah, v) in [(1.0, 0.5), (1e6, 60.0)] {
            let r = with(mah, v).unwrap();
            assert!(r.battery.sleep_ua.is_finite() && r.battery.sleep_ua > 0.0);
        }
        assert!((with(2400.0, 0.5).unwrap().battery.sleep_ua - 9.0).abs() < 1e-9);
    }

    #[test]
    fn weights_name_each_criterion_once_within_range() {
        let base = opts("nrf52840", "BLE-1M", "1s");
        let w = |s: &str| Request::resolve(&Options { weights: Some(s.into()), ..base.clone() });
        assert_eq!(
            w("energy=1,energy=2").unwrap_err(),
            "--weights: 'energy' is given twice (name each criterion once)"
        );
        assert_eq!(
            w("energy=1e-9").unwrap_err(),
            "--weights: 'energy=1e-9': the weight is not 0 or a number in 0.001..=1000"
        );
        assert!(w("energy=1001").is_err() && w("energy=inf").is_err() && w("energy=NaN").is_err());
        let r = w("energy=0.001,flash=1000,ram=0").unwrap();
        assert_eq!((r.weights.energy, r.weights.flash, r.weights.ram, r.weights.latency), (0.001, 1000.0, 0.0, 1.0));
    }

    #[test]
    fn errors_echo_a_short_prefix_of_the_value_on_one_line() {
        let base = opts("nrf52840", "BLE-1M", "1s");
        let long = "9".repeat(400);
        let cases = [
            Options { payload: format!("{long}B"), ..base.clone() },
            Options { interval: format!("{long}s"), ..base.clone() },
            Options { lifetime: format!("{long}y"), ..base.clone() },
            Options { flash: Some(format!("{long}B")), ..base.clone() },
            Options { weights: Some(format!("energy={long}")), ..base.clone() },
            Options { weights: Some(format!("{long}=1")), ..base.clone() },
            Options { require: Some(long.clone()), ..base.clone() },
            Options { board: long.clone(), ..base.clone() },
            Options { radio: long.clone(), ..base.clone() },
            Options { chemistry: long.clone(), ..base.clone() },
            Options { board: "rp\n2040\u{1b}[2J".into(), ..base.clone() },
        ];
        for o in cases {
            let e = Request::resolve(&o).unwrap_err();
            assert!(e.starts_with("--") && !e.contains('\n') && !e.contains('\u{1b}'), "{e:?}");
            assert!(!e.contains(&"9".repeat(30)), "{e}");
        }
    }

    /// Paths of the JSON (array elements as `[]`) where docs/choose.md's schema allows null.
    const NULLABLE: &[&str] = &[
        "request.flash_bytes",
        "request.ram_bytes",
        "candidates[].link_id",
        "candidates[].figures",
        "candidates[].rank",
        "candidates[].score",
        "robustness[].top",
        "handover.dataset",
    ];

    /// Every null outside [`NULLABLE`] (serde_json writes NaN and infinity as null).
    fn nulls(v: &serde_json::Value, path: &str, found: &mut Vec<String>) {
        match v {
            serde_json::Value::Null if !NULLABLE.contains(&path) => found.push(path.to_string()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| nulls(x, &format!("{path}[]"), found)),
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                    // sources are text keyed by name: no number lives below
                    nulls(x, &p, found);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn json_holds_no_null_where_the_schema_says_number_at_the_ends_of_every_range() {
        let mut answers = 0;
        for board in lwcbench_engine::board::boards().iter().map(|b| b.id.as_str()) {
            for radio in ["LoRa-SF7", "LoRa-SF12", "BLE-1M", "802.15.4", "WiFi-n-MCS7"] {
                for (interval, payload, mah, v, life) in [
                    ("1ms", "1B", 1.0, 0.5, "1s"),
                    ("24h", "262112B", 1e6, 60.0, "100y"),
                    ("10m", "16B", 2400.0, 3.0, "10y"),
                    ("1s", "1KiB", 1.0, 60.0, "1d"),
                ] {
                    let o = Options {
                        payload: payload.into(),
                        battery_mah: mah,
                        battery_v: v,
                        lifetime: life.into(),
                        weights: Some("energy=1,battery=1,latency=0.001,flash=1000,ram=0".into()),
                        ..opts(board, radio, interval)
                    };
                    match choose(&o, None) {
                        Ok(rep) => {
                            let mut found = Vec::new();
                            nulls(&serde_json::to_value(&rep).unwrap(), "", &mut found);
                            assert!(found.is_empty(), "{board} {radio} {interval} {payload}: null at {found:?}");
                            answers += 1;
                        }
                        Err(e) => assert!(e.starts_with("--interval: ") && !e.contains('\n'), "{e}"),
                    }
                }
            }
        }
        assert!(answers >= 60, "{answers} answers");
    }
}
