//! Robustness: the whole evaluation again with one setting moved one step either way.
use serde::Serialize;

use crate::data::{Data, Facts};
use crate::evaluate::evaluate;
use crate::fmt;
use crate::link_facts::{Carrier, POLY_TAG};
use crate::options::{Request, MAX_PAYLOAD};

/// One row of the robustness table.
#[derive(Clone, Debug, Serialize)]
pub struct Robust {
    /// interval, payload or radio.
    pub change: String,
    /// The moved setting.
    pub setting: String,
    /// The first place under the change (None: nothing passes).
    pub top: Option<String>,
    /// Every candidate sharing the first place.
    pub top_group: Vec<String>,
    /// False when the chosen cipher is not in the first place under the change.
    pub same: bool,
}

/// The request with one setting moved one step: interval and payload halved/doubled, the radio
/// the next slower/faster one for this frame (time on air of the request's frame).
pub fn robustness(req: &Request, data: &Data, facts: &[Facts], chosen: &str) -> Vec<Robust> {
    let mut variants: Vec<(String, String, Request)> = Vec::new();
    for (label, k) in [("interval ÷ 2", 0.5), ("interval × 2", 2.0)] {
        let mut r = req.clone();
        r.interval_s = req.interval_s * k;
        r.battery.interval_s = r.interval_s;
        variants.push(("interval".into(), format!("{label} = {} s", fmt::num(r.interval_s)), r));
    }
    for (label, k) in [("payload ÷ 2", 0.5), ("payload × 2", 2.0)] {
        let mut r = req.clone();
        r.payload = ((req.payload as f64 * k).round() as usize).clamp(1, MAX_PAYLOAD);
        variants.push(("payload".into(), format!("{label} = {} B", r.payload), r));
    }
    let frame = Carrier::of_radio(&req.radio).header_len() + req.payload + POLY_TAG;
    let mut radios = req.radios.clone();
    radios.sort_by(|a, b| b.air_time(frame).total_cmp(&a.air_time(frame)));
    if let Some(pos) = radios.iter().position(|r| r.name == req.radio.name) {
        for (label, j) in [("radio one step slower", pos.checked_sub(1)), ("radio one step faster", Some(pos + 1))] {
            if let Some(r2) = j.and_then(|j| radios.get(j)) {
                let mut r = req.clone();
                r.radio = r2.clone();
                variants.push(("radio".into(), format!("{label} = {}", r2.name), r));
            }
        }
    }
    variants
        .into_iter()
        .map(|(change, setting, r)| {
            let ev = evaluate(&r, data, facts);
            let group = ev.top_group();
            Robust {
                change,
                setting,
                top: ev.top().map(|c| c.id.clone()),
                same: group.iter().any(|g| g == chosen),
                top_group: group,
            }
        })
        .collect()
}
