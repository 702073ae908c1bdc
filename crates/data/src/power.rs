//! Device power profiles: typical active power per device, used to turn a measured time into
//! a *modelled* energy (energy = time × power). Nothing here is a measurement on this machine;
//! every figure carries its source, and every column derived from it is labelled "modelled".
//! Users may pass their own profile CSV (`device,active_w,source`) or their own watts.
use std::path::Path;

/// One device's typical active power.
#[derive(Clone, Debug, PartialEq)]
pub struct PowerProfile {
    /// The device's name.
    pub device: String,
    /// Typical active power in watts while the CPU is busy.
    pub active_w: f64,
    /// Where the figure comes from (document, table, conditions).
    pub source: String,
}

/// The built-in profiles, from `data/power-profiles.csv` (sources in that file).
pub fn builtin() -> Vec<PowerProfile> {
    parse(include_str!("../../../data/power-profiles.csv"), "data/power-profiles.csv")
        .expect("built-in power profiles parse")
}

/// Parse a profile CSV: header `device,active_w,source`, one device per line.
pub fn parse(text: &str, origin: &str) -> Result<Vec<PowerProfile>, String> {
    let mut rd = csv::ReaderBuilder::new().comment(Some(b'#')).trim(csv::Trim::All).from_reader(text.as_bytes());
    let headers = rd.headers().map_err(|e| format!("{origin}: {e}"))?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("{origin}: line 1: missing column '{name}' (need device,active_w,source)"))
    };
    let (d, w, s) = (col("device")?, col("active_w")?, col("source")?);
    let mut out = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(|e| format!("{origin}: {e}"))?;
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        let watts: f64 =
            rec.get(w).unwrap_or("").parse().map_err(|_| {
                format!("{origin}: line {line}: active_w '{}' is not a number", rec.get(w).unwrap_or(""))
            })?;
        if !(watts.is_finite() && watts > 0.0) {
            return Err(format!("{origin}: line {line}: active_w must be a positive number of watts, got {watts}"));
        }
        out.push(PowerProfile {
            device: rec.get(d).unwrap_or("").to_string(),
            active_w: watts,
            source: rec.get(s).unwrap_or("").to_string(),
        });
    }
    if out.is_empty() {
        return Err(format!("{origin}: no profiles"));
    }
    Ok(out)
}

/// Resolve `--power-profile` (a built-in device name, case-insensitive, or a CSV path whose
/// first row is used) and `--watts` (overrides the figure, source "user-supplied").
pub fn resolve(profile: Option<&str>, watts: Option<f64>) -> Result<PowerProfile, String> {
    let mut p = match profile {
        None => builtin().into_iter().next().expect("at least one built-in profile"),
        Some(name) => {
            if let Some(p) = builtin().into_iter().find(|p| p.device.eq_ignore_ascii_case(name)) {
                p
            } else if Path::new(name).is_file() {
                let text = std::fs::read_to_string(name).map_err(|e| format!("--power-profile: {name}: {e}"))?;
                parse(&text, name)?.into_iter().next().expect("parse returns at least one")
            } else {
                let known: Vec<String> = builtin().into_iter().map(|p| p.device).collect();
                return Err(format!(
                    "--power-profile: '{name}' is neither a built-in device ({}) nor a file",
                    known.join(", ")
                ));
            }
        }
    };
    if let Some(w) = watts {
        if !(w.is_finite() && w > 0.0) {
            return Err(format!("--watts: {w} is not a positive number of watts"));
        }
        p.active_w = w;
        p.source = format!("user-supplied {w} W (device label '{}')", p.device);
    }
    Ok(p)
}

/// Modelled energy in joules for `ns` nanoseconds at `p`'s active power.
pub fn energy_j(p: &PowerProfile, ns: f64) -> f64 {
    ns * 1e-9 * p.active_w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_profiles_have_sources_and_positive_watts() {
        let b = builtin();
        for name in ["Raspberry Pi Zero W", "Raspberry Pi 4", "ESP32", "ESP8266", "RP2040"] {
            let p = b.iter().find(|p| p.device == name).unwrap_or_else(|| panic!("{name} missing"));
            assert!(p.active_w > 0.0 && p.active_w < 10.0, "{name}: {}", p.active_w);
            assert!(p.source.len() > 20, "{name} needs a named source");
        }
    }

    #[test]
    fn builtin_figures_match_their_sources() {
        // current × voltage as stated in each source string (hand computation)
        let w = |n: &str| builtin().into_iter().find(|p| p.device == n).unwrap().active_w;
        assert!((w("Raspberry Pi Zero W") - 0.150 * 5.0).abs() < 1e-12);
        assert!((w("Raspberry Pi 4") - 0.600 * 5.0).abs() < 1e-12);
        assert!((w("ESP32") - 0.068 * 3.3).abs() < 1e-12);
        assert!((w("ESP8266") - 0.015 * 3.3).abs() < 1e-12);
        assert!((w("RP2040") - 0.025 * 5.0).abs() < 1e-12);
        assert_eq!(builtin()[0].device, "Raspberry Pi Zero W", "the default profile");
    }

    #[test]
    fn energy_is_time_times_power() {
        // 1 ms at 0.75 W = 0.75 mJ (hand computation)
        let p = PowerProfile { device: "x".into(), active_w: 0.75, source: String::new() };
        assert!((energy_j(&p, 1e6) - 0.75e-3).abs() < 1e-15);
    }

    #[test]
    fn bad_profiles_name_the_line() {
        let e = parse("device,active_w,source\nA,abc,src\n", "p.csv").unwrap_err();
        assert_eq!(e, "p.csv: line 2: active_w 'abc' is not a number");
        let e = parse("device,watts\nA,1\n", "p.csv").unwrap_err();
        assert!(e.contains("missing column 'active_w'"), "{e}");
        assert!(resolve(Some("no-such-device"), None).unwrap_err().starts_with("--power-profile: 'no-such-device'"));
        assert!(resolve(Some("ESP32"), Some(-1.0)).unwrap_err().starts_with("--watts"));
        let p = resolve(Some("esp32"), Some(0.5)).unwrap();
        assert_eq!(p.active_w, 0.5);
        assert!(p.source.starts_with("user-supplied"));
    }
}
