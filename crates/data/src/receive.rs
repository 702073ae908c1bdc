//! What a radio spends besides transmitting the frame (data/radio-receive.csv): LoRaWAN class-A
//! receive windows, BLE connection-event receive, Wi-Fi association and DTIM wake-ups. The
//! table holds one figure per row, each with its own source and status; the typed views below
//! ([`ClassA`], [`BleEvent`], [`WifiIdle`]) gather the figures a link needs and fail, naming
//! the missing figure, when the table lacks one.
use crate::board::records;

/// A row of data/radio-receive.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// `lorawan`, `lorawan-REGION`, `ble` or `wifi`.
    pub link: String,
    /// The figure's name (see the views for the ones each link needs).
    pub figure: String,
    /// The number, in `unit`.
    pub value: f64,
    /// s, symbols, SF, Hz, mA, uA, V or beacons.
    pub unit: String,
    /// "sourced" or "estimate".
    pub status: String,
    /// Where the figure comes from.
    pub source: String,
}

/// The built-in data/radio-receive.csv.
pub const RECEIVE_CSV: &str = include_str!("../../../data/radio-receive.csv");

/// Units a figure may have, with the largest value accepted in each (a bound, so nothing read
/// from a user file can turn into an absurd energy).
/// A DTIM period is at most 255 beacons (IEEE 802.11 TIM element).
const UNITS: &[(&str, f64)] = &[
    ("s", 3600.0),
    ("symbols", 1024.0),
    ("SF", 12.0),
    ("Hz", 1e7),
    ("mA", 10_000.0),
    ("uA", 1e7),
    ("V", 60.0),
    ("beacons", 255.0),
];

/// Parse a receive table (columns as data/radio-receive.csv); the error names the file and line.
pub fn parse(text: &str, origin: &str) -> Result<Vec<Figure>, String> {
    let cols = ["link", "figure", "value", "unit", "status", "source"];
    let mut out: Vec<Figure> = Vec::new();
    for (line, f) in records(text, origin, &cols)? {
        let max = UNITS.iter().find(|(u, _)| *u == f[3]).map(|(_, m)| *m).ok_or_else(|| {
            format!(
                "{origin}: line {line}: unit '{}' is not one of {}",
                f[3],
                UNITS.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ")
            )
        })?;
        let value = f[2].parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0 && *v <= max).ok_or_else(|| {
            format!("{origin}: line {line}: value '{}' is not a positive number up to {max} {}", f[2], f[3])
        })?;
        if !matches!(f[4].as_str(), "sourced" | "estimate") {
            return Err(format!("{origin}: line {line}: status '{}' is not sourced or estimate", f[4]));
        }
        if f[0].is_empty() || f[1].is_empty() || f[5].is_empty() {
            return Err(format!("{origin}: line {line}: link, figure and source must not be empty"));
        }
        if out.iter().any(|x| x.link == f[0] && x.figure == f[1]) {
            return Err(format!("{origin}: line {line}: {} {} appears twice", f[0], f[1]));
        }
        out.push(Figure {
            link: f[0].clone(),
            figure: f[1].clone(),
            value,
            unit: f[3].clone(),
            status: f[4].clone(),
            source: f[5].clone(),
        });
    }
    Ok(out)
}

/// The built-in figures; panics only if the shipped table does not parse (a test parses it).
pub fn builtin() -> Vec<Figure> {
    parse(RECEIVE_CSV, "data/radio-receive.csv").expect("built-in receive figures parse")
}

/// The value of `link`'s `figure`, which must be given in `unit`.
fn get(all: &[Figure], link: &str, figure: &str, unit: &str) -> Result<f64, String> {
    let f = all
        .iter()
        .find(|f| f.link.eq_ignore_ascii_case(link) && f.figure == figure)
        .ok_or_else(|| format!("the receive table has no '{figure}' for {link}"))?;
    if f.unit != unit {
        return Err(format!("the receive table gives {link} {figure} in '{}', not '{unit}'", f.unit));
    }
    Ok(f.value)
}

/// The figures of `link` whose status is "estimate" (for the output's caveats).
pub fn estimates<'a>(all: &'a [Figure], link: &str) -> Vec<&'a Figure> {
    let region = format!("{link}-");
    all.iter()
        .filter(|f| f.status == "estimate")
        .filter(|f| f.link.eq_ignore_ascii_case(link) || f.link.to_ascii_lowercase().starts_with(&region))
        .collect()
}

/// LoRaWAN class A: after every uplink packet the device opens RX1 (at the uplink's rate) and,
/// with no downlink in it, RX2 (at the region's RX2 rate).
#[derive(Clone, Debug, PartialEq)]
pub struct ClassA {
    /// RX1 opens this long after the end of the uplink.
    pub receive_delay1_s: f64,
    /// RX2 opens this long after the end of the uplink.
    pub receive_delay2_s: f64,
    /// Symbols a window stays open for when no preamble comes.
    pub window_symbols: f64,
    /// Timing error allowed on each side of a window.
    pub timing_error_s: f64,
    /// The radio's receive current.
    pub rx_ma: f64,
    /// Supply voltage of `rx_ma`.
    pub volts: f64,
    /// RX2 spreading factor and bandwidth in this region.
    pub rx2_sf: u32,
    /// See `rx2_sf`.
    pub rx2_bw_hz: f64,
}

impl ClassA {
    /// The class-A figures with `region`'s RX2 settings.
    pub fn from_table(all: &[Figure], region: &str) -> Result<ClassA, String> {
        let r = format!("lorawan-{region}");
        let rx2_sf = get(all, &r, "rx2_sf", "SF")?;
        if rx2_sf.fract() != 0.0 || !(6.0..=12.0).contains(&rx2_sf) {
            return Err(format!("the receive table's {r} rx2_sf {rx2_sf} is not a spreading factor 6-12"));
        }
        Ok(ClassA {
            receive_delay1_s: get(all, "lorawan", "receive_delay1", "s")?,
            receive_delay2_s: get(all, "lorawan", "receive_delay2", "s")?,
            window_symbols: get(all, "lorawan", "rx_window_symbols", "symbols")?,
            timing_error_s: get(all, "lorawan", "rx_timing_error", "s")?,
            rx_ma: get(all, "lorawan", "rx_current", "mA")?,
            volts: get(all, "lorawan", "volts", "V")?,
            rx2_sf: rx2_sf as u32,
            rx2_bw_hz: get(all, &r, "rx2_bw", "Hz")?,
        })
    }
}

/// BLE connection event of a peripheral: it listens through its window for the central's
/// packet, then answers after T_IFS.
#[derive(Clone, Debug, PartialEq)]
pub struct BleEvent {
    /// The peripheral's listening window (window widening included).
    pub rx_window_s: f64,
    /// Air time of an empty data PDU.
    pub empty_pdu_s: f64,
    /// Inter-frame space.
    pub t_ifs_s: f64,
    /// Receive current.
    pub rx_ma: f64,
    /// Transmit current.
    pub tx_ma: f64,
    /// Supply voltage of the currents.
    pub volts: f64,
    /// Seconds between connection events.
    pub connection_interval_s: f64,
}

impl BleEvent {
    /// The BLE figures of the table.
    pub fn from_table(all: &[Figure]) -> Result<BleEvent, String> {
        Ok(BleEvent {
            rx_window_s: get(all, "ble", "rx_window", "s")?,
            empty_pdu_s: get(all, "ble", "empty_pdu", "s")?,
            t_ifs_s: get(all, "ble", "t_ifs", "s")?,
            rx_ma: get(all, "ble", "rx_current", "mA")?,
            tx_ma: get(all, "ble", "tx_current", "mA")?,
            volts: get(all, "ble", "volts", "V")?,
            connection_interval_s: get(all, "ble", "connection_interval", "s")?,
        })
    }
}

/// Wi-Fi station: the average current while it stays associated (DTIM wake-ups in auto light
/// sleep), or deep sleep with an association per report.
#[derive(Clone, Debug, PartialEq)]
pub struct WifiIdle {
    /// Average current associated, DTIM1 / DTIM3 / DTIM10.
    pub dtim_ma: [(u32, f64); 3],
    /// Deep-sleep current (not associated).
    pub deep_sleep_ua: f64,
    /// Time and current of one association.
    pub association_s: f64,
    /// See `association_s`.
    pub association_ma: f64,
    /// Supply voltage of the currents.
    pub volts: f64,
}

impl WifiIdle {
    /// The Wi-Fi figures of the table.
    pub fn from_table(all: &[Figure]) -> Result<WifiIdle, String> {
        Ok(WifiIdle {
            dtim_ma: [
                (1, get(all, "wifi", "dtim1_current", "mA")?),
                (3, get(all, "wifi", "dtim3_current", "mA")?),
                (10, get(all, "wifi", "dtim10_current", "mA")?),
            ],
            deep_sleep_ua: get(all, "wifi", "deep_sleep_current", "uA")?,
            association_s: get(all, "wifi", "association_time", "s")?,
            association_ma: get(all, "wifi", "association_current", "mA")?,
            volts: get(all, "wifi", "volts", "V")?,
        })
    }

    /// The DTIM periods the table gives a current for.
    pub fn dtim_points(&self) -> Vec<u32> {
        self.dtim_ma.iter().map(|(d, _)| *d).collect()
    }

    /// Average current while associated at DTIM `dtim` (1, 3 or 10: the table's points).
    pub fn dtim_current_ma(&self, dtim: u32) -> Result<f64, String> {
        self.dtim_ma
            .iter()
            .find(|(d, _)| *d == dtim)
            .map(|(_, ma)| *ma)
            .ok_or_else(|| format!("DTIM {dtim} has no figure; the table gives DTIM 1, 3 and 10"))
    }
}

/// The access point's DTIM period the table assumes (`wifi dtim_period`, in beacons), with the
/// row's status and source; it must be one of the periods the table gives a current for.
pub fn dtim_period(all: &[Figure]) -> Result<(u32, &Figure), String> {
    let f = all
        .iter()
        .find(|f| f.link.eq_ignore_ascii_case("wifi") && f.figure == "dtim_period")
        .ok_or("the receive table has no 'dtim_period' for wifi")?;
    if f.unit != "beacons" || f.value.fract() != 0.0 {
        return Err(format!(
            "the receive table's wifi dtim_period {} {} is not a whole number of beacons",
            f.value, f.unit
        ));
    }
    let d = f.value as u32;
    let points = WifiIdle::from_table(all)?.dtim_points();
    if !points.contains(&d) {
        return Err(format!("the receive table's wifi dtim_period {d} has no current figure (DTIM {points:?})"));
    }
    Ok((d, f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_views_carry_the_table_figures() {
        let all = builtin();
        let eu = ClassA::from_table(&all, "EU868").unwrap();
        assert_eq!((eu.receive_delay1_s, eu.receive_delay2_s), (1.0, 2.0));
        assert_eq!((eu.rx2_sf, eu.rx2_bw_hz, eu.rx_ma), (12, 125_000.0, 9.9));
        let us = ClassA::from_table(&all, "us915").unwrap();
        assert_eq!((us.rx2_sf, us.rx2_bw_hz), (12, 500_000.0));
        let ble = BleEvent::from_table(&all).unwrap();
        assert_eq!((ble.rx_window_s, ble.empty_pdu_s, ble.t_ifs_s), (0.001064, 0.00008, 0.00015));
        let wifi = WifiIdle::from_table(&all).unwrap();
        assert_eq!(wifi.dtim_current_ma(3).unwrap(), 0.62);
        assert!(wifi.dtim_current_ma(2).unwrap_err().contains("DTIM 1, 3 and 10"));
        let (dtim, row) = dtim_period(&all).unwrap();
        assert_eq!((dtim, row.status.as_str()), (3, "estimate"));
        for f in &all {
            assert!(f.source.len() > 20, "{} {} needs a named source", f.link, f.figure);
        }
        // The stack-dependent window length is flagged, the spec delays are not.
        let est: Vec<&str> = estimates(&all, "lorawan").iter().map(|f| f.figure.as_str()).collect();
        assert!(est.contains(&"rx_window_symbols") && !est.contains(&"receive_delay1"), "{est:?}");
    }

    #[test]
    fn missing_or_mistyped_figures_are_named() {
        let head = "link,figure,value,unit,status,source\n";
        let e = ClassA::from_table(&parse(head, "x").unwrap(), "EU868").unwrap_err();
        assert_eq!(e, "the receive table has no 'rx2_sf' for lorawan-EU868");
        let t = parse(&format!("{head}ble,rx_window,1,ms,sourced,s\n"), "r.csv").unwrap_err();
        assert!(t.starts_with("r.csv: line 2: unit 'ms' is not one of s,"), "{t}");
        let t = parse(&format!("{head}ble,rx_window,7200,s,sourced,s\n"), "r.csv").unwrap_err();
        assert_eq!(t, "r.csv: line 2: value '7200' is not a positive number up to 3600 s");
        let all = parse(&format!("{head}ble,rx_window,1,symbols,sourced,s\n"), "r.csv").unwrap();
        assert_eq!(
            BleEvent::from_table(&all).unwrap_err(),
            "the receive table gives ble rx_window in 'symbols', not 's'"
        );
        let t = parse(&format!("{head}ble,a,1,s,sourced,s\nble,a,2,s,sourced,s\n"), "r.csv").unwrap_err();
        assert_eq!(t, "r.csv: line 3: ble a appears twice");
    }
}
