//! `lwcbench link --measured-energy FILE`: the crypto share of a message's energy measured on a
//! board (a collected run's energy.csv, docs/power.md) beside the modelled one, and the battery
//! life it gives. Matched by the suite's cipher and implementation, the `encrypt` scenario and
//! the reading's size; a stream + Poly1305 composition has no such row on a board.
use lwcbench_engine::measured::MeasuredEnergy;

use super::energy::{Battery, EnergyRow};
use crate::wire::suite::{Kind, Suite};

/// Fill the measured columns of `rows`; the notes say which ciphers had no measurement.
pub fn apply(
    rows: &mut [EnergyRow],
    suites: &[Suite],
    unauthenticated: bool,
    m: &MeasuredEnergy,
    bat: &Battery,
) -> Vec<String> {
    let mut notes = vec![format!(
        "link_energy.csv: crypto_uj_measured from {} (a collected run, docs/power.md): the crypto share measured on the board, beside the modelled; battery_days_measured = the same model with it",
        m.path.display()
    )];
    for r in rows.iter_mut() {
        let Some(s) = suites.iter().find(|s| s.name() == r.cipher) else { continue };
        let bits = (r.plain_bytes * 8.0).round() as u64;
        let found = (s.kind == Kind::Aead && !unauthenticated)
            .then(|| m.find(s.entry.info.name, s.entry.info.implementation, "encrypt", bits))
            .flatten();
        match found {
            Some(x) => {
                let radio_j = r.radio_uj * 1e-6;
                r.crypto_uj_measured = Some(round3(x.e_op_j * 1e6));
                r.crypto_u_uj_measured = Some(round3(x.u_op_j * 1e6));
                r.battery_days_measured = Some((bat.life(radio_j + x.e_op_j).days * 10.0).round() / 10.0);
                r.measured_source = Some(x.source);
            }
            None => {
                let note = if s.kind != Kind::Aead || unauthenticated {
                    format!(
                        "link_energy.csv: {}: not measured (the stream + Poly1305 composition or an unauthenticated frame has no encrypt row on a board); modelled only",
                        r.cipher
                    )
                } else {
                    m.miss_note("link_energy.csv", s.entry.info.name, s.entry.info.implementation, "encrypt", bits)
                };
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
    }
    notes
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::results::energy::{chemistries, CryptoPower};

    /// 5 µJ measured per 16-byte seal beside 95 µJ of radio: 100 µJ per report every 60 s from
    /// 1000 mAh at 3 V, no sleep current, no self-discharge, no shelf life. By hand: load
    /// current 100e-6 J / 60 s / 3 V = 5.5556e-7 A; 1 Ah / 5.5556e-7 A = 1.8e6 h = 75000 days.
    #[test]
    fn measured_crypto_gives_battery_days_by_hand() {
        let aead = crate::wire::suite::find("Ascon-AEAD128").unwrap();
        let stream = crate::wire::suite::find("DRACO").unwrap();
        let (name, imp) = (aead.entry.info.name, aead.entry.info.implementation);
        let text = format!(
            "cipher,implementation,language,scenario,kiv,size_bits,payload,batches,operations,samples_min,energy_per_op_j_measured,energy_per_op_u_j,energy_per_byte_j_measured,energy_per_byte_u_j,energy_per_op_j_total,mean_power_w,baseline_power_w,energy_source\n\
             {name},{imp},rust,encrypt,\"s,s\",128,random,2,2000,20,5e-6,2e-7,3.125e-7,1.25e-8,9e-6,0.45,0.2,measured:ina219 (shunt 0.1 Ω ±1 %)\n"
        );
        let m = MeasuredEnergy::parse(&text, Path::new("board/energy.csv")).unwrap();
        let mut chem = chemistries().into_iter().next().unwrap();
        chem.self_discharge_per_year = 0.0;
        chem.shelf_life_years = None;
        let bat = Battery { capacity_mah: 1000.0, volts: 3.0, sleep_ua: 0.0, interval_s: 60.0, chemistry: chem };
        let summary = |cipher: String| crate::results::SummaryRow {
            cipher,
            plain_bytes: 16.0,
            wire_bytes: 40.0,
            ..Default::default()
        };
        let radio = crate::results::energy::builtin().into_iter().next().unwrap();
        let crypto = CryptoPower::Profile(lwcbench_engine::power::resolve(Some("ESP32"), None).unwrap());
        let suites = vec![aead.clone(), stream.clone()];
        let mut rows = crate::results::energy::energy_rows(
            &[summary(aead.name()), summary(stream.name())],
            &suites,
            false,
            &[radio],
            &crypto,
            &bat,
        );
        rows[0].radio_uj = 95.0;
        let notes = apply(&mut rows, &suites, false, &m, &bat);
        assert_eq!(rows[0].crypto_uj_measured, Some(5.0));
        assert_eq!(rows[0].crypto_u_uj_measured, Some(0.2));
        assert_eq!(rows[0].battery_days_measured, Some(75000.0));
        assert_eq!(
            rows[0].measured_source.as_deref(),
            Some("measured:ina219 (shunt 0.1 Ω ±1 %) from board/energy.csv line 2")
        );
        assert_eq!(rows[1].crypto_uj_measured, None);
        assert!(
            notes.iter().any(|n| n.starts_with(&format!("link_energy.csv: {}: not measured", stream.name()))),
            "{notes:?}"
        );
        let md = crate::results::energy::energy_markdown(&rows, &bat, &crypto);
        assert!(md.contains("| 5 ± 0.2 | 75000 |") && md.contains("| not measured | – |"), "{md}");
    }
}
