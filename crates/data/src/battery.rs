//! Battery chemistries (data/battery-chemistries.csv): cell voltage, self-discharge and shelf
//! life per chemistry, each with its source.

/// A battery chemistry of data/battery-chemistries.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct Chemistry {
    pub name: String,
    pub cell_v: f64,
    /// Fraction of the nominal capacity lost per year.
    pub self_discharge_per_year: f64,
    /// Storage life the maker states; None for rechargeable cells.
    pub shelf_life_years: Option<f64>,
    pub status: String,
    pub source: String,
}

pub const CHEMISTRIES_CSV: &str = include_str!("../../../data/battery-chemistries.csv");

/// Parse a chemistry table (columns as data/battery-chemistries.csv).
pub fn parse_chemistries(text: &str, origin: &str) -> Result<Vec<Chemistry>, String> {
    let mut rd = csv::ReaderBuilder::new().comment(Some(b'#')).trim(csv::Trim::All).from_reader(text.as_bytes());
    let h = rd.headers().map_err(|e| format!("{origin}: {e}"))?.clone();
    let names = ["chemistry", "cell_v", "self_discharge_pct_year", "shelf_life_years", "status", "source"];
    let ix: Vec<usize> = names
        .iter()
        .map(|n| h.iter().position(|c| c == *n).ok_or_else(|| format!("{origin}: missing column '{n}'")))
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(|e| format!("{origin}: {e}"))?;
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        let get = |i: usize| rec.get(ix[i]).unwrap_or("");
        let num =
            |i: usize, max: f64| {
                get(i).parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0 && *v <= max).ok_or_else(|| {
                    format!("{origin}: line {line}: {} '{}' is not a number in 0..={max}", names[i], get(i))
                })
            };
        let shelf = if get(3).is_empty() { None } else { Some(num(3, 100.0)?).filter(|y| *y > 0.0) };
        out.push(Chemistry {
            name: get(0).to_string(),
            cell_v: num(1, 100.0)?,
            self_discharge_per_year: num(2, 100.0)? / 100.0,
            shelf_life_years: shelf,
            status: get(4).to_string(),
            source: get(5).to_string(),
        });
    }
    Ok(out)
}

pub fn chemistries() -> Vec<Chemistry> {
    parse_chemistries(CHEMISTRIES_CSV, "data/battery-chemistries.csv").expect("built-in chemistries parse")
}

/// `--chemistry NAME` (case-insensitive); an unknown name lists them.
pub fn find_chemistry(name: &str) -> Result<Chemistry, String> {
    let all = chemistries();
    all.iter().find(|c| c.name.eq_ignore_ascii_case(name.trim())).cloned().ok_or_else(|| {
        format!(
            "--chemistry: '{name}' is not one of {}",
            all.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
        )
    })
}

/// Battery model inputs (the link's energy table and `choose` read the same model).
#[derive(Clone, Debug)]
pub struct Battery {
    /// Capacity in mAh.
    pub capacity_mah: f64,
    /// Battery voltage.
    pub volts: f64,
    /// Whole-board sleep current between reports, drawn from the battery.
    pub sleep_ua: f64,
    /// Seconds between reports.
    pub interval_s: f64,
    /// Self-discharge and shelf life.
    pub chemistry: Chemistry,
}

/// What ends the battery's life.
#[derive(Clone, Debug, PartialEq)]
pub struct Life {
    /// min(load_days, shelf_days).
    pub days: f64,
    /// Until the load plus self-discharge empty the capacity.
    pub load_days: f64,
    /// The chemistry's shelf life, if it has one.
    pub shelf_days: Option<f64>,
    /// `load + self-discharge` or `shelf life`.
    pub limited_by: &'static str,
}

const HOURS_PER_YEAR: f64 = 365.25 * 24.0;

impl Battery {
    /// Stored energy in joules.
    pub fn joules(&self) -> f64 {
        self.capacity_mah * 1e-3 * 3600.0 * self.volts
    }
    /// Self-discharge as a constant current in amperes (the yearly loss of the nominal capacity).
    pub fn self_discharge_a(&self) -> f64 {
        self.capacity_mah * 1e-3 * self.chemistry.self_discharge_per_year / HOURS_PER_YEAR
    }
    /// Battery life with `e_msg` joules per report: the capacity over the load current (reports +
    /// sleep) plus the self-discharge current, cut at the chemistry's shelf life.
    pub fn life(&self, e_msg: f64) -> Life {
        let load_a = e_msg / self.interval_s / self.volts + self.sleep_ua * 1e-6;
        let load_days = self.capacity_mah * 1e-3 / (load_a + self.self_discharge_a()) / 24.0;
        let shelf_days = self.chemistry.shelf_life_years.map(|y| y * 365.25);
        match shelf_days {
            Some(s) if s < load_days => Life { days: s, load_days, shelf_days, limited_by: "shelf life" },
            _ => Life { days: load_days, load_days, shelf_days, limited_by: "load + self-discharge" },
        }
    }
}
