//! What dominates the energy of one report interval: the answer names the largest term of the
//! battery's drain and how far the cipher itself can move battery life ("sleep current is
//! 99.7 % of the drain: the cipher moves battery life by < 0.1 %"), so a reviewer sees at once
//! whether the cipher choice matters on this deployment.
use lwcbench_data::physics::ReceiveLink;
use serde::Serialize;

use crate::figures::Figures;
use crate::options::Request;

/// One term of the drain over one report interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Term {
    /// What draws it.
    pub name: String,
    /// Energy per report interval in µJ.
    pub uj: f64,
    /// Its share of the drain (0..=1).
    pub share: f64,
}

/// The drain of one report interval, largest term first, and what the cipher can change.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Drain {
    /// The terms, largest first.
    pub terms: Vec<Term>,
    /// Battery life gained, in per cent, if the cipher cost nothing (with the same frame): the
    /// most any cipher choice can move it.
    pub cipher_moves_pct: f64,
    /// The chemistry's shelf life ends the battery before the drain does.
    pub shelf_limited: bool,
    /// The sentence the text answer prints.
    pub line: String,
}

/// A share for people: one decimal, "< 0.1 %" below it.
pub fn pct(share: f64) -> String {
    let p = share * 100.0;
    if p < 0.1 {
        "< 0.1 %".to_string()
    } else {
        format!("{p:.1} %")
    }
}

/// The name of the receive term for the request's radio.
fn receive_name(req: &Request) -> &'static str {
    match ReceiveLink::of(&req.radio) {
        ReceiveLink::LoRaWan => "class-A receive windows",
        ReceiveLink::Ble => "BLE connection events",
        ReceiveLink::Wifi => "Wi-Fi association",
        ReceiveLink::None => "receive",
    }
}

/// The drain of one report interval of a candidate with figures `g`.
pub fn drain(req: &Request, g: &Figures) -> Drain {
    let mut battery = req.battery.clone();
    battery.sleep_ua = g.sleep_ua;
    let v = battery.volts;
    let t = req.interval_s;
    // A Wi-Fi station's average draw replaces the board's sleep current (figures.rs).
    let sleep_name = if (g.sleep_ua - req.battery.sleep_ua).abs() > 1e-12 && !req.sleep_given {
        "the Wi-Fi station's idle draw between reports"
    } else {
        "sleep current between reports"
    };
    let raw = [
        (sleep_name, g.sleep_ua * v * t),
        ("transmission", g.radio_uj),
        (receive_name(req), g.receive_uj),
        ("self-discharge", battery.self_discharge_a() * 1e6 * v * t),
        ("crypto", g.crypto_uj.value),
    ];
    let total: f64 = raw.iter().map(|(_, uj)| uj).sum();
    let mut terms: Vec<Term> = raw
        .iter()
        .filter(|(_, uj)| *uj > 0.0)
        .map(|(n, uj)| Term { name: n.to_string(), uj: *uj, share: if total > 0.0 { uj / total } else { 0.0 } })
        .collect();
    terms.sort_by(|a, b| b.uj.total_cmp(&a.uj));
    let e = g.energy_uj.value * 1e-6;
    let with = battery.life(e);
    let without = battery.life((e - g.crypto_uj.value * 1e-6).max(0.0));
    let shelf_limited = with.limited_by == "shelf life";
    let cipher_moves_pct = if with.days > 0.0 { (without.days / with.days - 1.0) * 100.0 } else { 0.0 };
    let line = match terms.first() {
        None => "no drain modelled".to_string(),
        Some(top) => {
            let rest: Vec<String> = terms.iter().skip(1).map(|t| format!("{} {}", t.name, pct(t.share))).collect();
            let moves = if shelf_limited {
                format!(
                    "the {} shelf life ends the battery first, so no cipher moves battery life",
                    battery.chemistry.name
                )
            } else {
                format!("the cipher moves battery life by {}", pct(cipher_moves_pct / 100.0))
            };
            format!("{} is {} of the drain per report ({}): {moves}", top.name, pct(top.share), rest.join(", "))
        }
    };
    Drain { terms, cipher_moves_pct, shelf_limited, line }
}
