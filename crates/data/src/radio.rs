//! Radio profiles (data/radio-profiles.csv): the link's energy model's time on air and
//! transmit power per radio; every row names its source.

/// A radio profile of data/radio-profiles.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct Radio {
    /// The name `--radio` takes.
    pub name: String,
    /// LoRa parameters (time on air from the Semtech formula); None: a fixed bit rate.
    pub lora: Option<Lora>,
    /// PHY bit rate (fixed-rate radios).
    pub bitrate_bps: f64,
    /// Protocol bytes added to every packet besides the link frame.
    pub overhead_bytes: usize,
    /// Largest link-frame chunk per packet; larger frames are split.
    pub max_payload: usize,
    /// Fixed per-packet air time not in `overhead_bytes` (preamble, ramp-up).
    pub preamble_s: f64,
    /// Transmit power drawn from the supply.
    pub tx_w: f64,
    /// "sourced" or "estimate".
    pub status: String,
    /// Where every figure comes from.
    pub source: String,
}

/// LoRa modulation parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lora {
    /// Spreading factor.
    pub sf: u32,
    /// Bandwidth.
    pub bw_hz: f64,
    /// Coding rate 4/(4+cr).
    pub cr: u32,
    /// Preamble length in symbols.
    pub preamble_symbols: f64,
}

impl Lora {
    /// Time on air of one packet of `pl` bytes (explicit header, CRC on), from the SX1276
    /// datasheet §4.1.1.7: T_sym = 2^SF / BW; T_preamble = (n_preamble + 4.25)·T_sym;
    /// n_payload = 8 + max(ceil((8·PL − 4·SF + 28 + 16·CRC − 20·IH) / (4·(SF − 2·DE)))·(CR + 4), 0),
    /// with low data rate optimisation DE = 1 when T_sym > 16 ms.
    pub fn time_on_air(&self, pl: usize) -> f64 {
        let t_sym = f64::from(1u32 << self.sf) / self.bw_hz;
        let de = if t_sym > 0.016 { 1.0 } else { 0.0 };
        let (sf, crc, ih) = (f64::from(self.sf), 1.0, 0.0);
        let num = 8.0 * pl as f64 - 4.0 * sf + 28.0 + 16.0 * crc - 20.0 * ih;
        let n_payload = 8.0 + ((num / (4.0 * (sf - 2.0 * de))).ceil() * (f64::from(self.cr) + 4.0)).max(0.0);
        (self.preamble_symbols + 4.25) * t_sym + n_payload * t_sym
    }
}

impl Radio {
    /// Seconds on air for a link frame of `frame` bytes (split into packets of at most
    /// `max_payload` bytes, each with the protocol overhead).
    pub fn air_time(&self, frame: usize) -> f64 {
        let packets = frame.div_ceil(self.max_payload).max(1);
        let mut t = 0.0;
        let mut left = frame;
        for _ in 0..packets {
            let chunk = left.min(self.max_payload);
            left -= chunk;
            let bytes = chunk + self.overhead_bytes;
            t += match self.lora {
                Some(l) => l.time_on_air(bytes),
                None => bytes as f64 * 8.0 / self.bitrate_bps + self.preamble_s,
            };
        }
        t
    }
    /// Transmit energy of one frame of `frame` bytes: its air time × `tx_w`.
    pub fn energy_j(&self, frame: usize) -> f64 {
        self.air_time(frame) * self.tx_w
    }
}

/// The built-in data/radio-profiles.csv.
pub const BUILTIN_CSV: &str = include_str!("../../../data/radio-profiles.csv");

/// Parse the radio profile CSV (header names the columns; `#` lines are comments).
pub fn parse(text: &str, origin: &str) -> Result<Vec<Radio>, String> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim_start().starts_with('#') && !l.trim().is_empty());
    let (_, header) = lines.next().ok_or_else(|| format!("{origin}: no header"))?;
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let idx = |n: &str| cols.iter().position(|c| *c == n).ok_or_else(|| format!("{origin}: missing column '{n}'"));
    let names = [
        "radio",
        "kind",
        "bitrate_bps",
        "sf",
        "bw_hz",
        "cr",
        "preamble_symbols",
        "overhead_bytes",
        "max_payload",
        "preamble_s",
        "tx_w",
        "status",
        "source",
    ];
    let ix: Vec<usize> = names.iter().map(|n| idx(n)).collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for (ln, line) in lines {
        // The source column is last and quoted; split the first fields on commas.
        let (head, source) = match line.find(",\"") {
            Some(p) => (&line[..p], line[p + 2..].trim_end_matches('"')),
            None => (line, ""),
        };
        let f: Vec<&str> = head.split(',').map(str::trim).collect();
        let get = |i: usize| f.get(ix[i]).copied().unwrap_or("");
        let num = |i: usize| -> Result<f64, String> {
            get(i).parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).ok_or_else(|| {
                format!("{origin}: line {}: {} '{}' is not a non-negative number", ln + 1, names[i], get(i))
            })
        };
        let kind = get(1);
        let lora = match kind {
            "lora" => Some(Lora { sf: num(3)? as u32, bw_hz: num(4)?, cr: num(5)? as u32, preamble_symbols: num(6)? }),
            "fixed" => None,
            k => return Err(format!("{origin}: line {}: kind '{k}' is not lora or fixed", ln + 1)),
        };
        if let Some(l) = lora {
            if !(6..=12).contains(&l.sf) || l.bw_hz <= 0.0 || !(1..=4).contains(&l.cr) {
                return Err(format!("{origin}: line {}: LoRa needs sf 6-12, bw_hz > 0, cr 1-4", ln + 1));
            }
        } else if num(2)? <= 0.0 {
            return Err(format!("{origin}: line {}: bitrate_bps must be positive", ln + 1));
        }
        let r = Radio {
            name: get(0).to_string(),
            lora,
            bitrate_bps: num(2)?,
            overhead_bytes: num(7)? as usize,
            max_payload: num(8)? as usize,
            preamble_s: num(9)?,
            tx_w: num(10)?,
            status: get(11).to_string(),
            source: source.to_string(),
        };
        if r.max_payload == 0 || r.tx_w <= 0.0 {
            return Err(format!("{origin}: line {}: max_payload and tx_w must be positive", ln + 1));
        }
        check_bounds(&r, &out).map_err(|e| format!("{origin}: line {}: {e}", ln + 1))?;
        out.push(r);
    }
    Ok(out)
}

/// Upper bounds on a row's figures, so that a user's file (`choose --radios`) cannot turn into
/// an absurd or non-finite energy: 100 W of transmit power, 100 Gb/s, 10 s of preamble, 64 KiB of
/// overhead, 1 MiB per packet, 65,535 preamble symbols.
fn check_bounds(r: &Radio, before: &[Radio]) -> Result<(), String> {
    let plain =
        |s: &str| !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !plain(&r.name) {
        return Err(format!("radio '{}' is not 1 to 64 letters, digits, '-', '_' or '.'", r.name.escape_debug()));
    }
    if before.iter().any(|o| o.name.eq_ignore_ascii_case(&r.name)) {
        return Err(format!("radio '{}' appears twice", r.name));
    }
    if !matches!(r.status.as_str(), "sourced" | "estimate") {
        return Err(format!("status '{}' is not sourced or estimate", r.status.escape_debug()));
    }
    if r.source.trim().is_empty() {
        return Err("source is empty (the last column, in double quotes, names where every figure comes from)".into());
    }
    let limits = [
        ("tx_w", r.tx_w, 100.0),
        ("bitrate_bps", r.bitrate_bps, 1e11),
        ("preamble_s", r.preamble_s, 10.0),
        ("overhead_bytes", r.overhead_bytes as f64, 65_536.0),
        ("max_payload", r.max_payload as f64, 1_048_576.0),
        ("preamble_symbols", r.lora.map_or(0.0, |l| l.preamble_symbols), 65_535.0),
    ];
    for (name, v, max) in limits {
        if v > max {
            // Exponent form past a million: 1e300 is not 301 digits.
            let shown = if v < 1e6 { format!("{v}") } else { format!("{v:e}") };
            return Err(format!("{name} {shown} is above {max}"));
        }
    }
    Ok(())
}

/// The built-in profiles; panics only if the shipped table does not parse.
pub fn builtin() -> Vec<Radio> {
    parse(BUILTIN_CSV, "data/radio-profiles.csv").expect("built-in radio profiles parse")
}

/// The built-in profile of this name (case-insensitive); the error lists the names.
pub fn find_radio(name: &str) -> Result<Radio, String> {
    let all = builtin();
    all.iter().find(|r| r.name.eq_ignore_ascii_case(name)).cloned().ok_or_else(|| {
        format!(
            "--radio: '{name}' is not one of {}",
            all.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(", ")
        )
    })
}
