//! The request: [`Options`] as given (CLI flags or Python keyword arguments, strings), checked
//! into a typed [`Request`]; every bad value is one line naming the option and its range.
use lwcbench_data::battery::{find_chemistry, Battery};
use lwcbench_data::board::{Board, Cycles};
use lwcbench_data::radio::Radio;
use lwcbench_data::receive::Figure;
use lwcbench_data::region::Region;
use serde::Serialize;

use crate::fmt::{prefix, shown_num};
use crate::link_facts::{HEADER_LEN, MAX_FRAME, POLY_TAG};

/// The request as given (CLI flags or Python keyword arguments), before checking.
#[derive(Clone, Debug)]
pub struct Options {
    /// `--board`.
    pub board: String,
    /// `--radio`.
    pub radio: String,
    /// `--interval`.
    pub interval: String,
    /// `--payload`.
    pub payload: String,
    /// `--flash` budget.
    pub flash: Option<String>,
    /// `--ram` budget.
    pub ram: Option<String>,
    /// `--security`: the least claimed security in bits.
    pub security: u32,
    /// `--tag`: the tag length the deployment requires, in bits.
    pub tag: u32,
    /// `--require`: fips, standard (default), reviewed or any.
    pub require: Option<String>,
    /// `--weights`.
    pub weights: Option<String>,
    /// `--lifetime`.
    pub lifetime: String,
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
    /// `--region`: the LoRaWAN region whose duty-cycle and dwell-time limits apply
    /// (data/radio-regions.csv).
    pub region: Option<String>,
    /// `--sleep-ua`: the sleep current between reports, in place of the board's figure.
    pub sleep_ua: Option<f64>,
    /// `--active-ma`: the active current while the cipher runs, in place of the board's figure.
    pub active_ma: Option<f64>,
    /// `--boards FILE`: the user's boards in data/board-power.csv's schema.
    pub boards: Option<String>,
    /// `--radios FILE`: the user's radios in data/radio-profiles.csv's schema.
    pub radios: Option<String>,
    /// `--dtim`: the access point's DTIM period for a Wi-Fi station (data/radio-receive.csv's
    /// `dtim_period` without it).
    pub dtim: Option<u32>,
    /// `--framing`: link (default), oscore or auto.
    pub framing: Option<String>,
    /// `--edhoc`: price EDHOC's handshake as a one-time cost of the OSCORE candidates.
    pub edhoc: bool,
    /// `--cipher`: only these candidates (comma-separated cipher names, candidate ids or, for
    /// OSCORE, COSE algorithm names).
    pub cipher: Option<String>,
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
            tag: 128,
            require: None,
            weights: None,
            lifetime: "10y".into(),
            allow_provisional: false,
            allow_variable_time: false,
            chemistry: "alkaline-AA".into(),
            battery_mah: 2400.0,
            battery_v: 3.0,
            region: None,
            sleep_ua: None,
            active_ma: None,
            boards: None,
            radios: None,
            dtim: None,
            framing: None,
            edhoc: false,
            cipher: None,
        }
    }
}

/// Weights of the ranking criteria (lower score is better).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Weights {
    /// Energy per message.
    pub energy: f64,
    /// Battery life.
    pub battery: f64,
    /// Latency of one report.
    pub latency: f64,
    /// Flash, against the `--flash` budget (0 without one).
    pub flash: f64,
    /// RAM, against the `--ram` budget (0 without one).
    pub ram: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights { energy: 3.0, battery: 0.0, latency: 1.0, flash: 1.0, ram: 1.0 }
    }
}

/// Smallest non-zero weight.
pub const MIN_WEIGHT: f64 = 0.001;
/// Largest weight.
pub const MAX_WEIGHT: f64 = 1000.0;

/// `energy=3,flash=1,latency=1`: named criteria set, the others keep their default, and the
/// names given; a criterion named twice is refused (which one was meant is not knowable).
pub fn parse_weights(s: &str) -> Result<(Weights, Vec<String>), String> {
    let mut w = Weights::default();
    let mut seen: Vec<String> = Vec::new();
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
        if seen.iter().any(|x| x == k) {
            return Err(format!("--weights: '{k}' is given twice (name each criterion once)"));
        }
        seen.push(k.to_string());
        *slot = v;
    }
    if w.energy + w.battery + w.latency + w.flash + w.ram <= 0.0 {
        return Err("--weights: every weight is 0".into());
    }
    Ok((w, seen))
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

/// Seconds in a (Julian) year.
pub const YEAR_S: f64 = 365.25 * 86_400.0;

/// Largest payload: the link's frame limit less the 16-byte header and a 16-byte tag.
pub const MAX_PAYLOAD: usize = MAX_FRAME - HEADER_LEN - POLY_TAG;

/// Shortest `--interval`: a report every millisecond (a GOOSE-like cycle).
pub const MIN_INTERVAL_S: f64 = 1e-3;
/// Longest `--interval`: the link's longest `--report-interval`.
pub const MAX_INTERVAL_S: f64 = crate::link_facts::MAX_INTERVAL_S;
const INTERVAL_RANGE: &str = "1 ms and 24 h";
/// Shortest `--lifetime`.
pub const MIN_LIFETIME_S: f64 = 1.0;
/// Longest `--lifetime`.
pub const MAX_LIFETIME_S: f64 = 100.0 * YEAR_S;
const LIFETIME_RANGE: &str = "1 s and 100 y";
/// `--battery-mah` range: a 1 mAh cell to a 1000 Ah pack.
pub const BATTERY_MAH: (f64, f64) = (1.0, 1e6);
/// `--battery-v` range: half a volt (one cell under load) to 60 V (the safety extra-low voltage).
pub const BATTERY_V: (f64, f64) = (0.5, 60.0);
/// `--sleep-ua` range: no sleep current to a tenth of an ampere (a board that never sleeps).
pub const SLEEP_UA: (f64, f64) = (0.0, 100_000.0);
/// `--active-ma` range: a microamp to ten amperes.
pub const ACTIVE_MA: (f64, f64) = (0.001, 10_000.0);

/// The tag lengths `--tag` takes, in bits.
pub const TAG_BITS: [u32; 3] = [64, 96, 128];

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

/// `--require`: the status a candidate needs, each level admitting more than the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Require {
    /// A standard approved for FIPS 140-3.
    Fips,
    /// A primitive and mode exactly as a standard specifies them (the default).
    Standard,
    /// Also what a public selection reviewed (competition portfolios, NIST LWC finalists) and
    /// this project's composition of such a stream cipher, labelled.
    Reviewed,
    /// Anything but a provisional reconstruction, superseded versions included, labelled.
    Any,
}

impl Require {
    /// The value as `--require` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Require::Fips => "fips",
            Require::Standard => "standard",
            Require::Reviewed => "reviewed",
            Require::Any => "any",
        }
    }
}

/// `--dtim N` (one of the periods data/radio-receive.csv gives a current for) or the table's
/// `dtim_period`, with where it comes from.
fn dtim(given: Option<u32>, table: &[Figure]) -> Result<(u32, String), String> {
    let (default, row) = lwcbench_data::receive::dtim_period(table)?;
    let points = lwcbench_data::receive::WifiIdle::from_table(table)?.dtim_points();
    match given {
        None => Ok((
            default,
            format!("DTIM {default} (data/radio-receive.csv wifi dtim_period, {}: {})", row.status, row.source),
        )),
        Some(d) if points.contains(&d) => Ok((d, format!("DTIM {d} given by --dtim"))),
        Some(d) => Err(format!(
            "--dtim: {d} is not one of {} (the DTIM periods data/radio-receive.csv gives an average current for)",
            points.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// A checked request.
#[derive(Clone, Debug)]
pub struct Request {
    /// The board (data/board-power.csv).
    pub board: Board,
    /// The radio (data/radio-profiles.csv).
    pub radio: Radio,
    /// Seconds between reports.
    pub interval_s: f64,
    /// Plaintext bytes per report.
    pub payload: usize,
    /// Flash budget in bytes.
    pub flash: Option<u64>,
    /// RAM budget in bytes.
    pub ram: Option<u64>,
    /// Least claimed security in bits.
    pub security: u32,
    /// Least tag length in bits.
    pub tag_bits: u32,
    /// Status level.
    pub require: Require,
    /// Ranking weights (flash and RAM 0 without their budget).
    pub weights: Weights,
    /// Deployment lifetime in seconds.
    pub lifetime_s: f64,
    /// Keep provisional reconstructions, labelled.
    pub allow_provisional: bool,
    /// Keep implementations whose time depends on secret data, labelled.
    pub allow_variable_time: bool,
    /// The battery model.
    pub battery: Battery,
    /// `--region`'s limits (data/radio-regions.csv).
    pub region: Option<Region>,
    /// The receive figures (data/radio-receive.csv).
    pub receive: Vec<Figure>,
    /// Where the sleep current comes from (`--sleep-ua` or the board's datasheet figure).
    pub sleep_source: String,
    /// `--sleep-ua` was given: a radio's own idle draw (a Wi-Fi station's) does not replace it.
    pub sleep_given: bool,
    /// The built-in board whose emulated cycles the board runs (its own id for a built-in board;
    /// a `--boards` row names it in `cycles_of`).
    pub cycles_from: String,
    /// Every radio: the built-in ones and `--radios`' (robustness steps through them).
    pub radios: Vec<Radio>,
    /// The access point's DTIM period a Wi-Fi station wakes for.
    pub dtim: u32,
    /// Where `dtim` comes from.
    pub dtim_source: String,
    /// The frames offered: the link's, OSCORE's or both.
    pub framing: crate::oscore::Framing,
    /// EDHOC's one-time cost on the board (`--edhoc`).
    pub edhoc: Option<crate::oscore::EdhocCost>,
    /// `--cipher`'s names (empty: every candidate).
    pub ciphers: Vec<String>,
}

impl Request {
    /// Check every option; the first bad one is the error.
    pub fn resolve(o: &Options) -> Result<Request, String> {
        let user_boards = match o.boards.as_deref() {
            Some(path) => crate::userdata::boards(path)?,
            None => Vec::new(),
        };
        let user_radios = match o.radios.as_deref() {
            Some(path) => crate::userdata::radios(path)?,
            None => Vec::new(),
        };
        let (mut board, cycles_from) = short_echo(&o.board, |n| crate::userdata::find_board(n, &user_boards))?;
        if let Some(ma) = o.active_ma {
            board.active_ma = bounded(ma, "--active-ma", ACTIVE_MA, "mA")?;
            board.source = format!("active current {ma} mA from --active-ma; {}", board.source);
        }
        let radios = crate::userdata::all_radios(user_radios);
        let radio = short_echo(o.radio.trim(), |n| crate::userdata::find_radio(n, &radios))?;
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
            return Err(format!("--security: {} is not a security level in bits (1..=512)", o.security));
        }
        if !TAG_BITS.contains(&o.tag) {
            return Err(format!("--tag: {} is not a tag length the link's ciphers have (64, 96 or 128 bits)", o.tag));
        }
        let require = match o.require.as_deref().map(str::trim) {
            None | Some("") | Some("standard") => Require::Standard,
            Some("fips") => Require::Fips,
            Some("reviewed") => Require::Reviewed,
            Some("any") => Require::Any,
            Some(other) => {
                return Err(format!("--require: '{}' is not one of fips, standard, reviewed, any", prefix(other)))
            }
        };
        let (mut weights, named) = match &o.weights {
            Some(s) => parse_weights(s)?,
            None => (Weights::default(), Vec::new()),
        };
        // Flash and RAM rank only against a budget the user gives: a size is no cost on its own.
        for (name, budget, opt, w) in
            [("flash", flash, "--flash", &mut weights.flash), ("ram", ram, "--ram", &mut weights.ram)]
        {
            if budget.is_none() {
                if *w > 0.0 && named.iter().any(|n| n == name) {
                    return Err(format!(
                        "--weights: {name}={} ranks against a budget: give {opt} too (without it the image's size is not a cost)",
                        w
                    ));
                }
                *w = 0.0;
            }
        }
        if weights.energy + weights.battery + weights.latency + weights.flash + weights.ram <= 0.0 {
            return Err("--weights: every weight in use is 0 (flash and RAM count only with --flash, --ram)".into());
        }
        let lifetime_s = parse_duration_s(&o.lifetime, "--lifetime", (MIN_LIFETIME_S, MAX_LIFETIME_S), LIFETIME_RANGE)?;
        let capacity_mah = bounded(o.battery_mah, "--battery-mah", BATTERY_MAH, "mAh")?;
        let volts = bounded(o.battery_v, "--battery-v", BATTERY_V, "V")?;
        let region = match o.region.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(name) => {
                Some(short_echo(name, |n| lwcbench_data::region::find(&lwcbench_data::region::builtin(), n))?)
            }
        };
        // The board's sleep power, drawn from the battery at its voltage (as `lwcbench link
        // --board`), unless --sleep-ua gives the current itself.
        let (sleep_ua, sleep_source) = match o.sleep_ua {
            Some(ua) => (bounded(ua, "--sleep-ua", SLEEP_UA, "µA")?, format!("{ua} µA given by --sleep-ua")),
            None => (board.sleep_w() / volts * 1e6, format!("{}'s datasheet sleep power", board.id)),
        };
        let battery =
            Battery { capacity_mah, volts, sleep_ua, interval_s, chemistry: short_echo(&o.chemistry, find_chemistry)? };
        let receive = lwcbench_data::receive::builtin();
        let (dtim, dtim_source) = dtim(o.dtim, &receive)?;
        let framing = crate::oscore::Framing::parse(o.framing.as_deref())?;
        let edhoc = match (o.edhoc, framing.oscore()) {
            (false, _) => None,
            (true, false) => {
                return Err("--edhoc: EDHOC establishes OSCORE contexts: give --framing oscore or auto".into())
            }
            (true, true) => Some(crate::oscore::edhoc_cost(&board, &cycles_from, &radio)?),
        };
        let ciphers = crate::oscore::cipher_names(o.cipher.as_deref(), framing)?;
        // Under OSCORE alone a reading no datagram holds leaves no candidate: say so by option.
        if framing == crate::oscore::Framing::Oscore {
            let smallest = lwcbench_oscore::Algorithm::AesCcm16_64_128;
            lwcbench_oscore::reading::protected_size(smallest, &crate::oscore::DEVICE_KID, 0, payload as usize)
                .map_err(|e| format!("--payload: '{}' under --framing oscore: {e}", prefix(&o.payload)))?;
        }
        Ok(Request {
            board,
            radio,
            interval_s,
            payload: payload as usize,
            flash,
            ram,
            security: o.security,
            tag_bits: o.tag,
            require,
            weights,
            lifetime_s,
            allow_provisional: o.allow_provisional,
            allow_variable_time: o.allow_variable_time,
            battery,
            region,
            receive,
            sleep_source,
            sleep_given: o.sleep_ua.is_some(),
            cycles_from,
            radios,
            dtim,
            dtim_source,
            framing,
            edhoc,
            ciphers,
        })
    }

    /// The emulated cycles of `cipher`/`implementation` on the board's core, under the profile of
    /// the built-in board it runs (`cycles_from`).
    pub fn cycles(&self, cipher: &str, implementation: &str) -> Option<&'static Cycles> {
        lwcbench_data::board::cycles_table().iter().find(|c| {
            c.board == self.cycles_from
                && c.target == self.board.target
                && c.cipher == cipher
                && c.implementation == implementation
        })
    }

    /// Reports the device sends over `--lifetime`.
    pub fn messages(&self) -> f64 {
        (self.lifetime_s / self.interval_s).ceil()
    }
}
