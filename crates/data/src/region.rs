//! Regional radio limits (data/radio-regions.csv): the duty-cycle and dwell-time limits and the
//! uplink spreading factors of a LoRaWAN region, each row with its source.
use crate::board::records;

/// A row of data/radio-regions.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    /// The name `--region` takes (EU868, US915, ...).
    pub name: String,
    /// Largest share of time on air, as a fraction (0.01 = 1 %); None: no duty-cycle limit.
    pub duty_cycle: Option<f64>,
    /// Longest time on air of one packet in seconds; None: no dwell-time limit.
    pub dwell_s: Option<f64>,
    /// Slowest and fastest spreading factor an uplink may use (125 kHz).
    pub sf_min: u32,
    /// See `sf_min`.
    pub sf_max: u32,
    /// "sourced" or "estimate".
    pub status: String,
    /// Where every figure comes from.
    pub source: String,
}

/// The built-in data/radio-regions.csv.
pub const REGIONS_CSV: &str = include_str!("../../../data/radio-regions.csv");

/// Parse a region table (columns as data/radio-regions.csv); the error names the file and line.
pub fn parse(text: &str, origin: &str) -> Result<Vec<Region>, String> {
    let cols = ["region", "duty_cycle_pct", "dwell_ms", "sf_min", "sf_max", "status", "source"];
    let mut out: Vec<Region> = Vec::new();
    for (line, f) in records(text, origin, &cols)? {
        let at = |what: &str, v: &str, range: &str| format!("{origin}: line {line}: {what} '{v}' is not {range}");
        // An empty cell means the region sets no such limit.
        let duty_cycle = match f[1].as_str() {
            "" => None,
            v => Some(
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0 && *x <= 100.0)
                    .ok_or_else(|| at("duty_cycle_pct", v, "a percentage in (0, 100]"))?
                    / 100.0,
            ),
        };
        let dwell_s = match f[2].as_str() {
            "" => None,
            v => Some(
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0 && *x <= 3_600_000.0)
                    .ok_or_else(|| at("dwell_ms", v, "a positive number of milliseconds"))?
                    / 1e3,
            ),
        };
        let sf = |i: usize, what: &str| {
            f[i].parse::<u32>()
                .ok()
                .filter(|s| (6..=12).contains(s))
                .ok_or_else(|| at(what, &f[i], "a spreading factor 6-12"))
        };
        let (sf_min, sf_max) = (sf(3, "sf_min")?, sf(4, "sf_max")?);
        if sf_min > sf_max {
            return Err(format!("{origin}: line {line}: sf_min {sf_min} is above sf_max {sf_max}"));
        }
        if !matches!(f[5].as_str(), "sourced" | "estimate") {
            return Err(format!("{origin}: line {line}: status '{}' is not sourced or estimate", f[5]));
        }
        if f[6].is_empty() {
            return Err(format!("{origin}: line {line}: no source"));
        }
        if f[0].is_empty() || out.iter().any(|r| r.name.eq_ignore_ascii_case(&f[0])) {
            return Err(format!("{origin}: line {line}: region '{}' is empty or appears twice", f[0]));
        }
        out.push(Region {
            name: f[0].clone(),
            duty_cycle,
            dwell_s,
            sf_min,
            sf_max,
            status: f[5].clone(),
            source: f[6].clone(),
        });
    }
    if out.is_empty() {
        return Err(format!("{origin}: no regions"));
    }
    Ok(out)
}

/// The built-in regions; panics only if the shipped table does not parse (a test parses it).
pub fn builtin() -> Vec<Region> {
    parse(REGIONS_CSV, "data/radio-regions.csv").expect("built-in regions parse")
}

/// `--region NAME` (case-insensitive) among `all`; an unknown name lists them.
pub fn find(all: &[Region], name: &str) -> Result<Region, String> {
    all.iter().find(|r| r.name.eq_ignore_ascii_case(name.trim())).cloned().ok_or_else(|| {
        format!(
            "--region: '{name}' is not one of {}",
            all.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_regions_carry_their_limits() {
        let all = builtin();
        let eu = find(&all, "eu868").unwrap();
        assert_eq!(eu.duty_cycle, Some(0.01));
        assert_eq!(eu.dwell_s, None);
        assert_eq!((eu.sf_min, eu.sf_max), (7, 12));
        let us = find(&all, "US915").unwrap();
        assert_eq!(us.duty_cycle, None);
        assert_eq!(us.dwell_s, Some(0.4));
        assert_eq!((us.sf_min, us.sf_max), (7, 10));
        let as923 = find(&all, "AS923").unwrap();
        assert_eq!(as923.dwell_s, Some(0.4));
        for r in &all {
            assert!(r.source.len() > 40, "{} needs a named source", r.name);
        }
    }

    #[test]
    fn bad_rows_name_the_line_and_the_column() {
        let head = "region,duty_cycle_pct,dwell_ms,sf_min,sf_max,status,source\n";
        let e = parse(&format!("{head}X,150,,7,12,sourced,src\n"), "r.csv").unwrap_err();
        assert_eq!(e, "r.csv: line 2: duty_cycle_pct '150' is not a percentage in (0, 100]");
        let e = parse(&format!("{head}X,1,,13,12,sourced,src\n"), "r.csv").unwrap_err();
        assert_eq!(e, "r.csv: line 2: sf_min '13' is not a spreading factor 6-12");
        let e = parse(&format!("{head}X,1,,9,7,sourced,src\n"), "r.csv").unwrap_err();
        assert_eq!(e, "r.csv: line 2: sf_min 9 is above sf_max 7");
        let e = parse(&format!("{head}X,1,,7,12,guess,src\n"), "r.csv").unwrap_err();
        assert!(e.contains("status 'guess'"), "{e}");
        let e = parse(&format!("{head}X,1,,7,12,sourced,\n"), "r.csv").unwrap_err();
        assert_eq!(e, "r.csv: line 2: no source");
        let e = parse(&format!("{head}X,1,,7,12,sourced,s\nx,1,,7,12,sourced,s\n"), "r.csv").unwrap_err();
        assert!(e.starts_with("r.csv: line 3: region 'x'"), "{e}");
        assert!(parse(head, "r.csv").unwrap_err().contains("no regions"));
        assert!(find(&builtin(), "mars").unwrap_err().starts_with("--region: 'mars' is not one of EU868"));
    }
}
