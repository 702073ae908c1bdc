//! MODELLED sensor-side energy per message and battery life (nothing here is measured on a
//! device): the crypto share — emulated cycles of the cipher's microcontroller image on a board
//! (`--board`, lwcbench_engine::board), or seal time on this host × a power profile
//! (data/power-profiles.csv) as the labelled fallback — plus the radio's time on air for the
//! frame × its transmit power (data/radio-profiles.csv), and a battery projection with a sleep
//! current, the chemistry's self-discharge and its shelf life (data/battery-chemistries.csv).
//! Every figure carries its source in those files.
use lwcbench_engine::board::Board;
use lwcbench_engine::power::PowerProfile;
use serde::Serialize;

use crate::results::SummaryRow;
use crate::wire::suite::{Kind, Suite};

// The battery model lives with the chemistries so that `choose` (its own crate) reads the same one.
pub use lwcbench_data::battery::{
    chemistries, find_chemistry, parse_chemistries, Battery, Chemistry, Life, CHEMISTRIES_CSV,
};
pub use lwcbench_data::radio::{builtin, find_radio, parse, Lora, Radio, BUILTIN_CSV};

/// Where the crypto share of a message's energy comes from.
#[derive(Clone, Debug)]
pub enum CryptoPower {
    /// Emulated cycles on this board; host time × its active power for ciphers without an image.
    Board(Board),
    /// Host seal time × this profile's power.
    Profile(PowerProfile),
}

impl CryptoPower {
    /// Joules of sealing one reading of `plain_bytes` with `suite`, and the figure's source.
    /// On a board an AEAD's image gives its encrypt cycles (the key schedule runs once per key,
    /// not per message); the stream + Poly1305 composition has no image, so it falls back.
    pub fn seal_j(
        &self,
        suite: Option<&Suite>,
        unauthenticated: bool,
        plain_bytes: f64,
        host_ns: f64,
    ) -> (f64, String) {
        match self {
            CryptoPower::Profile(p) => {
                (lwcbench_engine::power::energy_j(p, host_ns), lwcbench_engine::board::host_label(p))
            }
            CryptoPower::Board(b) => {
                let image = suite
                    .filter(|s| s.kind == Kind::Aead && !unauthenticated)
                    .and_then(|s| b.cycles(s.entry.info.name, s.entry.info.implementation));
                match image {
                    Some(c) => (b.energy_j(c.message(plain_bytes)), b.label()),
                    None => (lwcbench_engine::power::energy_j(&b.fallback_profile(), host_ns), b.fallback_label()),
                }
            }
        }
    }
    pub fn describe(&self) -> String {
        match self {
            CryptoPower::Profile(p) => format!("{} ({} W)", p.device, p.active_w),
            CryptoPower::Board(b) => format!("{} ({} W active)", b.id, b.active_w()),
        }
    }
}

/// One row of the MODELLED energy table.
#[derive(Serialize, Clone, Debug)]
pub struct EnergyRow {
    pub cipher: String,
    pub radio: String,
    pub radio_figures: String,
    pub power_profile: String,
    pub plain_bytes: f64,
    pub frame_bytes: f64,
    pub air_time_ms: f64,
    pub radio_uj: f64,
    pub seal_ns_host: f64,
    pub crypto_uj: f64,
    /// Where crypto_uj comes from: `emulated:<board> (…)` or `host-time×power (…)`.
    pub energy_source: String,
    pub total_uj: f64,
    pub interval_s: f64,
    pub battery_mah: f64,
    pub sleep_ua: f64,
    pub chemistry: String,
    pub self_discharge_pct_year: f64,
    pub battery_days_load_modelled: f64,
    pub shelf_life_days: Option<f64>,
    pub battery_days_modelled: f64,
    pub life_limited_by: String,
    /// `--measured-energy`: the crypto share measured on a board (a collected run's energy.csv,
    /// docs/power.md), its expanded uncertainty (k = 2), the battery life with it, and where it
    /// comes from; empty without a match (results::measured).
    pub crypto_uj_measured: Option<f64>,
    pub crypto_u_uj_measured: Option<f64>,
    pub battery_days_measured: Option<f64>,
    pub measured_source: Option<String>,
}

/// Energy per message and battery life for each summary row × radio.
pub fn energy_rows(
    rows: &[SummaryRow],
    suites: &[Suite],
    unauthenticated: bool,
    radios: &[Radio],
    crypto: &CryptoPower,
    bat: &Battery,
) -> Vec<EnergyRow> {
    let r1 = |x: f64| (x * 10.0).round() / 10.0;
    let mut out = Vec::new();
    for r in rows {
        let suite = suites.iter().find(|s| s.name() == r.cipher);
        let seal_ns = r.seal_p50_us * 1e3;
        let (e_crypto, source) = crypto.seal_j(suite, unauthenticated, r.plain_bytes, seal_ns);
        for radio in radios {
            let frame = r.wire_bytes.round() as usize;
            let air = radio.air_time(frame);
            let e_radio = radio.energy_j(frame);
            let total = e_radio + e_crypto;
            let life = bat.life(total);
            out.push(EnergyRow {
                cipher: r.cipher.clone(),
                radio: radio.name.clone(),
                radio_figures: radio.status.clone(),
                power_profile: crypto.describe(),
                plain_bytes: r.plain_bytes,
                frame_bytes: r.wire_bytes,
                air_time_ms: (air * 1e6).round() / 1e3,
                radio_uj: (e_radio * 1e9).round() / 1e3,
                seal_ns_host: seal_ns,
                crypto_uj: (e_crypto * 1e9).round() / 1e3,
                energy_source: source.clone(),
                total_uj: (total * 1e9).round() / 1e3,
                interval_s: bat.interval_s,
                battery_mah: bat.capacity_mah,
                sleep_ua: bat.sleep_ua,
                chemistry: bat.chemistry.name.clone(),
                self_discharge_pct_year: bat.chemistry.self_discharge_per_year * 100.0,
                battery_days_load_modelled: r1(life.load_days),
                shelf_life_days: life.shelf_days.map(r1),
                battery_days_modelled: r1(life.days),
                life_limited_by: life.limited_by.to_string(),
                crypto_uj_measured: None,
                crypto_u_uj_measured: None,
                battery_days_measured: None,
                measured_source: None,
            });
        }
    }
    out
}

pub fn energy_markdown(rows: &[EnergyRow], bat: &Battery, crypto: &CryptoPower) -> String {
    let how = match crypto {
        CryptoPower::Board(b) => format!(
            "Crypto = emulated cycles of the cipher's image on {} ÷ {} MHz × {} V × {} mA (AEAD encrypt of the reading; data/emulated-cycles.csv, data/board-power.csv), host seal time × that power for ciphers without an image (energy source column)",
            b.id, b.clock_mhz, b.volts, b.active_ma
        ),
        CryptoPower::Profile(p) => format!(
            "Crypto = seal time on this host × {} W ({}; a lower bound: a microcontroller is slower; `--board` uses emulated cycles instead)",
            p.active_w, p.device
        ),
    };
    let c = &bat.chemistry;
    let shelf =
        c.shelf_life_years.map(|y| format!("shelf life {y} years")).unwrap_or_else(|| "no shelf-life cap".into());
    let mut md = format!(
        "\n## Link energy and battery (MODELLED, not measured)\n\nOne report every {} s, {} mAh at {} V, sleep {} µA; {} cells: self-discharge {} % a year, {shelf} ({}; data/battery-chemistries.csv). \
{how}; radio = time on air × transmit power (data/radio-profiles.csv; `estimate` marks figures not confirmed in a primary document). \
Battery life = min(capacity ÷ (load + self-discharge), shelf life); the last column says which ends it.\n\n\
| radio | cipher | frame B | air ms | radio µJ | crypto µJ | energy source | battery days (modelled) | limited by | vs best |",
        bat.interval_s,
        bat.capacity_mah,
        bat.volts,
        bat.sleep_ua,
        c.name,
        c.self_discharge_per_year * 100.0,
        c.status
    );
    let measured = rows.iter().any(|r| r.measured_source.is_some());
    md += if measured { " crypto µJ (measured ± U, k = 2) | battery days (measured crypto) |\n" } else { "\n" };
    md += "|---|---|---:|---:|---:|---:|---|---:|---|---:|";
    md += if measured { "---:|---:|\n" } else { "\n" };
    let mut radios: Vec<&str> = Vec::new();
    for r in rows {
        if !radios.contains(&r.radio.as_str()) {
            radios.push(&r.radio);
        }
    }
    for radio in radios {
        let mut rs: Vec<&EnergyRow> = rows.iter().filter(|r| r.radio == radio).collect();
        rs.sort_by(|a, b| b.battery_days_modelled.total_cmp(&a.battery_days_modelled));
        let best = rs.first().map(|r| r.battery_days_modelled).unwrap_or(1.0);
        for r in rs {
            md += &format!(
                "| {} ({}) | {} | {:.0} | {} | {} | {} | {} | {} | {} | {:+.1} % |",
                r.radio,
                r.radio_figures,
                r.cipher,
                r.frame_bytes,
                r.air_time_ms,
                r.radio_uj,
                r.crypto_uj,
                r.energy_source,
                r.battery_days_modelled,
                r.life_limited_by,
                (r.battery_days_modelled / best - 1.0) * 100.0
            );
            if measured {
                md += &match (r.crypto_uj_measured, r.crypto_u_uj_measured, r.battery_days_measured) {
                    (Some(e), Some(u), Some(d)) => format!(" {e} ± {u} | {d} |"),
                    _ => " not measured | – |".to_string(),
                };
            }
            md.push('\n');
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// LoRa time on air against hand computation with the datasheet formula:
    /// SF7/125 kHz/CR4/5, 8-symbol preamble, PL = 13: T_sym = 1.024 ms, preamble 12.25 sym,
    /// payload symbols 8 + ceil((104 − 28 + 28 + 16)/28)·5 = 8 + 5·5 = 33 → 45.25 sym = 46.336 ms.
    /// SF12, PL = 51, DE = 1 (T_sym 32.768 ms): ceil((408 − 48 + 44)/40) = 11 → 8 + 55 = 63;
    /// (12.25 + 63)·32.768 ms = 2465.792 ms.
    #[test]
    fn lora_time_on_air_by_hand() {
        let sf7 = Lora { sf: 7, bw_hz: 125_000.0, cr: 1, preamble_symbols: 8.0 };
        assert!((sf7.time_on_air(13) - 0.046336).abs() < 1e-9, "{}", sf7.time_on_air(13));
        let sf12 = Lora { sf: 12, bw_hz: 125_000.0, cr: 1, preamble_symbols: 8.0 };
        assert!((sf12.time_on_air(51) - 2.465792).abs() < 1e-9, "{}", sf12.time_on_air(51));
    }

    #[test]
    fn builtin_profiles_parse_and_split_frames() {
        let all = builtin();
        for n in ["LoRa-SF7", "LoRa-SF9", "LoRa-SF12", "BLE-1M", "802.15.4", "WiFi-n-MCS7"] {
            let r = all.iter().find(|r| r.name == n).unwrap_or_else(|| panic!("{n}"));
            assert!(!r.source.is_empty() && (r.status == "sourced" || r.status == "estimate"), "{n}");
        }
        // 802.15.4: 40-byte frame → one packet of 57 bytes at 250 kb/s = 1.824 ms (hand).
        let z = find_radio("802.15.4").unwrap();
        assert!((z.air_time(40) - 57.0 * 8.0 / 250_000.0).abs() < 1e-12);
        // 200 bytes → 116 + 84: two packets with 17 bytes of overhead each.
        assert!((z.air_time(200) - (133.0 + 101.0) * 8.0 / 250_000.0).abs() < 1e-12);
        assert!(find_radio("carrier-pigeon").is_err());
        assert!(parse("radio,kind\nx,warp\n", "t").is_err());
    }

    fn chem(name: &str, pct_year: f64, shelf_years: Option<f64>) -> Chemistry {
        Chemistry {
            name: name.into(),
            cell_v: 1.5,
            self_discharge_per_year: pct_year / 100.0,
            shelf_life_years: shelf_years,
            status: "estimate".into(),
            source: String::new(),
        }
    }

    /// Battery: 2400 mAh at 3 V = 25,920 J; 1 mJ per report each 60 s plus 10 µA sleep
    /// (30 µW) → 46.667 µW average → 555,428,571 s = 6428.57 days (hand), with no self-discharge.
    #[test]
    fn battery_by_hand() {
        let b = Battery {
            capacity_mah: 2400.0,
            volts: 3.0,
            sleep_ua: 10.0,
            interval_s: 60.0,
            chemistry: chem("ideal", 0.0, None),
        };
        assert!((b.joules() - 25_920.0).abs() < 1e-9);
        let l = b.life(1e-3);
        assert!((l.days - 6428.571428).abs() < 1e-3, "{l:?}");
        assert_eq!(l.limited_by, "load + self-discharge");
    }

    /// Two AA alkaline cells (2400 mAh, 3 V), 3 % a year, shelf life 10 years; 1 mJ per report
    /// each 60 s + 10 µA sleep (hand): load 1e-3 / 60 / 3 A = 5.5556 µA + 10 µA = 15.5556 µA;
    /// self-discharge 2.4 Ah × 0.03 / 8766 h = 8.2136 µA; 2.4 Ah / 23.7691 µA = 100,971.4 h =
    /// 4207.14 days > the shelf life of 3652.5 days: the shelf life, not the load, ends it.
    /// Without self-discharge the same load gives 6428.57 days (the test above): 17.6 years.
    #[test]
    fn shelf_life_ends_a_light_load() {
        let b = Battery {
            capacity_mah: 2400.0,
            volts: 3.0,
            sleep_ua: 10.0,
            interval_s: 60.0,
            chemistry: chem("alkaline-AA", 3.0, Some(10.0)),
        };
        assert!((b.self_discharge_a() - 8.2136e-6).abs() < 1e-9, "{}", b.self_discharge_a());
        let l = b.life(1e-3);
        assert!((l.load_days - 4207.14).abs() < 0.01, "{l:?}");
        assert_eq!((l.days, l.shelf_days, l.limited_by), (3652.5, Some(3652.5), "shelf life"));
        // A heavy load (1 J per report: 5.556 mA) empties the cells long before: 2.4 Ah /
        // (5.5556 + 0.01 + 0.0082) mA = 430.6 h = 17.94 days.
        let h = b.life(1.0);
        assert!((h.days - 17.94).abs() < 0.01, "{h:?}");
        assert_eq!(h.limited_by, "load + self-discharge");
    }

    /// Li-ion 1000 mAh at 3.7 V, 36 % a year, no shelf cap; 50 µJ per 60 s + 5 µA sleep (hand):
    /// load 0.2252 + 5 = 5.2252 µA, self-discharge 1 Ah × 0.36 / 8766 h = 41.0678 µA →
    /// 1 Ah / 46.2930 µA = 21,601.5 h = 900.06 days (self-discharge is 89 % of the drain).
    #[test]
    fn self_discharge_dominates_a_rechargeable() {
        let b = Battery {
            capacity_mah: 1000.0,
            volts: 3.7,
            sleep_ua: 5.0,
            interval_s: 60.0,
            chemistry: chem("Li-ion", 36.0, None),
        };
        let l = b.life(50e-6);
        assert!((l.days - 900.06).abs() < 0.01, "{l:?}");
        assert_eq!((l.shelf_days, l.limited_by), (None, "load + self-discharge"));
    }

    #[test]
    fn builtin_chemistries_are_sourced_and_unknown_ones_listed() {
        let all = chemistries();
        let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["alkaline-AA", "Li-SOCl2", "Li-ion", "LiFePO4", "CR2032"]);
        assert!(all.iter().all(|c| c.source.len() > 40 && c.self_discharge_per_year > 0.0));
        let a = find_chemistry("ALKALINE-aa").unwrap();
        assert_eq!((a.self_discharge_per_year, a.shelf_life_years), (0.03, Some(10.0)));
        assert_eq!(
            find_chemistry("NiMH").unwrap_err(),
            "--chemistry: 'NiMH' is not one of alkaline-AA, Li-SOCl2, Li-ion, LiFePO4, CR2032"
        );
        let e = parse_chemistries(
            "chemistry,cell_v,self_discharge_pct_year,shelf_life_years,status,source\nX,3,-1,,estimate,s\n",
            "c.csv",
        )
        .unwrap_err();
        assert_eq!(e, "c.csv: line 2: self_discharge_pct_year '-1' is not a number in 0..=100");
    }

    /// rp2040: 5 V × 25 mA = 0.125 W at 125 MHz → 1 nJ per cycle (hand). Sealing a 16-byte
    /// reading with Ascon-AEAD128 costs the image's encrypt count at 128 bits, so that many nJ.
    #[test]
    fn crypto_from_the_boards_emulated_cycles() {
        let b = lwcbench_engine::board::find("rp2040").unwrap();
        let c = b.cycles("Ascon-AEAD128", "rustcrypto").unwrap();
        let cp = CryptoPower::Board(b);
        let s = crate::wire::suite::find("Ascon-AEAD128").unwrap();
        let (j, src) = cp.seal_j(Some(&s), false, 16.0, 1e6);
        assert!((j - c.at_16_bytes * 1e-9).abs() < 1e-15, "{j} vs {} cycles", c.at_16_bytes);
        assert_eq!(src, "emulated:rp2040 (M0+ model, 125 MHz)");
        // The stream + Poly1305 composition has no image: host time (1 ms) × 0.125 W.
        let d = crate::wire::suite::find("DRACO").unwrap();
        let (j, src) = cp.seal_j(Some(&d), false, 16.0, 1e6);
        assert!((j - 0.125e-3).abs() < 1e-15);
        assert!(src.starts_with("host-time×power (fallback"), "{src}");
    }
}
