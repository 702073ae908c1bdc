//! EDHOC's handshake (`--edhoc`, data/edhoc-cost.csv) as a one-time cost per device.
use serde::Serialize;

use crate::fmt;

/// The built-in data/edhoc-cost.csv.
pub const EDHOC_CSV: &str = include_str!("../../../../data/edhoc-cost.csv");

/// EDHOC's handshake on the request's board: a one-time cost per device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EdhocCost {
    /// message_1 to message_4 in bytes (without CoAP).
    pub messages_bytes: [u64; 4],
    /// Bytes the device sends (message_1 and message_3).
    pub sent_bytes: u64,
    /// Round trips before the first OSCORE request.
    pub round_trips: u64,
    /// P-256 scalar multiplications on the device.
    pub scalar_mults: u64,
    /// Emulated cycles of one P-256 ECDH on the board.
    pub ecdh_cycles: f64,
    /// All of the device's scalar multiplications, in cycles.
    pub cycles: f64,
    /// Their time at the board's clock, in seconds.
    pub seconds: f64,
    /// Their energy plus sending message_1 and message_3, in µJ.
    pub energy_uj: f64,
    /// Where the figures come from.
    pub source: String,
}

impl EdhocCost {
    /// The handshake's energy spread over `messages` reports, in J.
    pub fn per_message_j(&self, messages: f64) -> f64 {
        self.energy_uj * 1e-6 / messages.max(1.0)
    }
    /// The answer's line.
    pub fn line(&self, board: &str, messages: f64) -> String {
        let m = self.messages_bytes;
        format!(
            "once per device: {} B in 4 messages ({}/{}/{}/{} B, without CoAP), {} round trips, {} P-256 scalar multiplications × {} cycles = {:.1} M cycles ({}) on {board}; {:.1} µJ with sending message_1 and message_3, {:.3} µJ per report over {} reports (in the energy above)",
            m.iter().sum::<u64>(), m[0], m[1], m[2], m[3], self.round_trips, self.scalar_mults,
            self.ecdh_cycles, self.cycles / 1e6, fmt::secs(self.seconds), self.energy_uj,
            self.energy_uj / messages.max(1.0), fmt::num(messages)
        )
    }
}

/// `--edhoc` on board `board` (priced with the emulated cycles of `cycles_from`) and `radio`:
/// the handshake from data/edhoc-cost.csv; a board without an emulated P-256 ECDH is refused.
pub fn edhoc_cost(
    board: &lwcbench_data::board::Board,
    cycles_from: &str,
    radio: &lwcbench_data::radio::Radio,
) -> Result<EdhocCost, String> {
    let origin = "data/edhoc-cost.csv";
    let rows =
        lwcbench_data::board::records(EDHOC_CSV, origin, &["item", "board", "value", "unit", "status", "source"])?;
    let get = |item: &str, board: &str| -> Option<(f64, String)> {
        rows.iter().find(|(_, f)| f[0] == item && f[1] == board).and_then(|(_, f)| {
            f[2].parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).map(|v| (v, f[5].clone()))
        })
    };
    let need = |item: &str| get(item, "").ok_or_else(|| format!("{origin}: no valid {item} row"));
    let mut messages = [0u64; 4];
    for (i, m) in messages.iter_mut().enumerate() {
        *m = need(&format!("message_{}", i + 1))?.0 as u64;
    }
    let (round_trips, _) = need("round_trips")?;
    let (mults, _) = need("scalar_mults")?;
    let boards: Vec<&str> = rows.iter().filter(|(_, f)| f[0] == "p256_ecdh").map(|(_, f)| f[1].as_str()).collect();
    let (ecdh, ecdh_source) = get("p256_ecdh", cycles_from).ok_or_else(|| {
        format!("--edhoc: no emulated P-256 ECDH for {} in {origin} (boards: {})", board.id, boards.join(", "))
    })?;
    let cycles = ecdh * mults;
    let sent = messages[0] + messages[2];
    let radio_j = radio.energy_j(messages[0] as usize) + radio.energy_j(messages[2] as usize);
    Ok(EdhocCost {
        messages_bytes: messages,
        sent_bytes: sent,
        round_trips: round_trips as u64,
        scalar_mults: mults as u64,
        ecdh_cycles: ecdh,
        cycles,
        seconds: cycles / (board.clock_mhz * 1e6),
        energy_uj: (board.energy_j(cycles) + radio_j) * 1e6,
        source: format!(
            "{origin}: {ecdh_source}; {} scalar multiplications per side (RFC 9528 method 3); the rest of the handshake (SHA-256, HKDF, AES-CCM, CBOR) and receiving message_2 and message_4 not counted",
            mults
        ),
    })
}
