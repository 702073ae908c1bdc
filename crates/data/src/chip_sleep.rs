//! Chip sleep currents (data/chip-sleep.csv): the datasheet currents of a chip's low-power
//! states, kept apart from the board-level figures of data/boards.toml, which include the
//! board's regulator and the rest of its parts.
use crate::board::records;

/// A row of data/chip-sleep.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct ChipSleep {
    /// Chip name (as data/boards.toml's `chip`).
    pub chip: String,
    /// The low-power state as the datasheet names it (SLEEP, DORMANT, ...).
    pub mode: String,
    /// The supply rail the current is drawn from.
    pub supply: String,
    /// Nominal voltage of that rail.
    pub volts: f64,
    /// Typical average current in microamps.
    pub typ_ua: f64,
    /// Maximum average current in microamps.
    pub max_ua: f64,
    /// "sourced" or "estimate".
    pub status: String,
    /// Where every figure comes from.
    pub source: String,
}

/// The built-in data/chip-sleep.csv.
pub const CHIP_SLEEP_CSV: &str = include_str!("../../../data/chip-sleep.csv");

/// Parse a chip sleep table (columns as data/chip-sleep.csv); the error names the file and line.
pub fn parse(text: &str, origin: &str) -> Result<Vec<ChipSleep>, String> {
    let cols = ["chip", "mode", "supply", "volts", "typ_ua", "max_ua", "status", "source"];
    let mut out: Vec<ChipSleep> = Vec::new();
    for (line, f) in records(text, origin, &cols)? {
        let num = |i: usize, max: f64| {
            f[i].parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0 && *v <= max).ok_or_else(|| {
                format!("{origin}: line {line}: {} '{}' is not a positive number up to {max}", cols[i], f[i])
            })
        };
        // 60 V and 10 A bound what a sleeping chip can plausibly be given.
        let (volts, typ_ua, max_ua) = (num(3, 60.0)?, num(4, 1e7)?, num(5, 1e7)?);
        if typ_ua > max_ua {
            return Err(format!("{origin}: line {line}: typ_ua {typ_ua} is above max_ua {max_ua}"));
        }
        if !matches!(f[6].as_str(), "sourced" | "estimate") {
            return Err(format!("{origin}: line {line}: status '{}' is not sourced or estimate", f[6]));
        }
        if f[0].is_empty() || f[1].is_empty() || f[7].is_empty() {
            return Err(format!("{origin}: line {line}: chip, mode and source must not be empty"));
        }
        if out.iter().any(|c| c.chip.eq_ignore_ascii_case(&f[0]) && c.mode.eq_ignore_ascii_case(&f[1])) {
            return Err(format!("{origin}: line {line}: {} {} appears twice", f[0], f[1]));
        }
        out.push(ChipSleep {
            chip: f[0].clone(),
            mode: f[1].clone(),
            supply: f[2].clone(),
            volts,
            typ_ua,
            max_ua,
            status: f[6].clone(),
            source: f[7].clone(),
        });
    }
    Ok(out)
}

/// The built-in rows; panics only if the shipped table does not parse (a test parses it).
pub fn builtin() -> Vec<ChipSleep> {
    parse(CHIP_SLEEP_CSV, "data/chip-sleep.csv").expect("built-in chip sleep currents parse")
}

/// The row of `chip` in `mode` (both case-insensitive), if the table has one.
pub fn find<'a>(all: &'a [ChipSleep], chip: &str, mode: &str) -> Option<&'a ChipSleep> {
    all.iter().find(|c| c.chip.eq_ignore_ascii_case(chip) && c.mode.eq_ignore_ascii_case(mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rp2040_chip_figures_are_the_datasheet_ones_not_the_pico_board() {
        let all = builtin();
        // RP2040 Datasheet, Power Consumption table: SLEEP 0.39 mA, DORMANT 0.18 mA typical DVDD.
        let sleep = find(&all, "rp2040", "sleep").unwrap();
        assert_eq!((sleep.typ_ua, sleep.max_ua, sleep.supply.as_str()), (390.0, 4500.0, "DVDD"));
        let dormant = find(&all, "RP2040", "DORMANT").unwrap();
        assert_eq!((dormant.typ_ua, dormant.max_ua), (180.0, 4200.0));
        assert_eq!(dormant.status, "sourced");
        // The Pico board figure of data/boards.toml (regulator included) is a different number.
        let board = crate::boards::builtin().boards.into_iter().find(|b| b.id == "rp2040").unwrap();
        let board_ua = board.power.unwrap().sleep_ua;
        assert!(board_ua > 5.0 * sleep.typ_ua, "board {board_ua} µA, chip {} µA", sleep.typ_ua);
    }

    #[test]
    fn bad_rows_name_the_line() {
        let head = "chip,mode,supply,volts,typ_ua,max_ua,status,source\n";
        let e = parse(&format!("{head}X,SLEEP,VDD,3.3,-1,5,sourced,s\n"), "c.csv").unwrap_err();
        assert_eq!(e, "c.csv: line 2: typ_ua '-1' is not a positive number up to 10000000");
        let e = parse(&format!("{head}X,SLEEP,VDD,3.3,9,5,sourced,s\n"), "c.csv").unwrap_err();
        assert_eq!(e, "c.csv: line 2: typ_ua 9 is above max_ua 5");
        let e = parse(&format!("{head}X,SLEEP,VDD,3.3,1,5,sourced,\n"), "c.csv").unwrap_err();
        assert!(e.contains("must not be empty"), "{e}");
        let e = parse(&format!("{head}X,S,VDD,3.3,1,5,sourced,s\nx,s,VDD,3.3,1,5,sourced,s\n"), "c.csv").unwrap_err();
        assert_eq!(e, "c.csv: line 3: x s appears twice");
    }
}
