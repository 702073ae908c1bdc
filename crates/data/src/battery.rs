//! Battery chemistries (data/battery-chemistries.csv): cell voltage, self-discharge and shelf
//! life per chemistry, each with its source.

/// A battery chemistry of data/battery-chemistries.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct Chemistry {
    /// The id `--chemistry` takes.
    pub name: String,
    /// Nominal cell voltage (information; the model uses `--battery-v`).
    pub cell_v: f64,
    /// Fraction of the nominal capacity lost per year.
    pub self_discharge_per_year: f64,
    /// Storage life the maker states; None for rechargeable cells.
    pub shelf_life_years: Option<f64>,
    /// "sourced" or "estimate".
    pub status: String,
    /// Where the figures come from.
    pub source: String,
}

/// The built-in table, data/battery-chemistries.csv.
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

/// The built-in chemistries; panics only if the shipped table does not parse.
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
