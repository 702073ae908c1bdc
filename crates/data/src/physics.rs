//! The physics a schedule must obey, as pure checks over the data/ tables: time on air against
//! the report interval, a region's duty-cycle and dwell-time limits and uplink rates
//! (data/radio-regions.csv), the packet split, the receive energy a link spends besides its
//! transmission (data/radio-receive.csv), and battery life against a lifetime requirement.
//! No figure is typed in here: every number comes from a table row with its source.
use std::fmt;

use crate::radio::Radio;
use crate::receive::{BleEvent, ClassA, WifiIdle};
use crate::region::Region;

/// Seconds per LoRa symbol: 2^SF / BW (Semtech SX1276 datasheet 4.1.1.6).
pub fn lora_symbol_s(sf: u32, bw_hz: f64) -> f64 {
    f64::from(1u32 << sf.min(31)) / bw_hz
}

/// Packets a frame of `frame` bytes is split into at `max_payload` bytes each (at least one:
/// an empty frame still goes out as one packet).
pub fn packets(frame: usize, max_payload: usize) -> usize {
    frame.div_ceil(max_payload.max(1)).max(1)
}

/// Time on air of each packet of a `frame`-byte frame on `radio` (split as
/// [`Radio::air_time`] splits it: chunks of `max_payload`, each with the protocol overhead).
pub fn packet_air_times(radio: &Radio, frame: usize) -> Vec<f64> {
    let n = packets(frame, radio.max_payload);
    let mut left = frame;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let chunk = left.min(radio.max_payload);
        left -= chunk;
        let bytes = chunk + radio.overhead_bytes;
        out.push(match radio.lora {
            Some(l) => l.time_on_air(bytes),
            None => bytes as f64 * 8.0 / radio.bitrate_bps + radio.preamble_s,
        });
    }
    out
}

/// "2 packets" / "1 packet", as the output shows the split.
pub fn packets_label(n: usize) -> String {
    if n == 1 {
        "1 packet".to_string()
    } else {
        format!("{n} packets")
    }
}

/// Why a schedule cannot run, each with the figures that decide it.
#[derive(Clone, Debug, PartialEq)]
pub enum Violation {
    /// The frame takes longer on air than the interval between reports.
    Infeasible {
        /// Time on air of one report (all its packets).
        air_s: f64,
        /// Seconds between reports.
        interval_s: f64,
    },
    /// The share of time on air is above the region's duty-cycle limit.
    DutyCycle {
        /// The region's name.
        region: String,
        /// Time on air ÷ interval.
        on_air: f64,
        /// The limit, as a fraction.
        limit: f64,
    },
    /// A packet stays on air longer than the region's dwell time.
    Dwell {
        /// The region's name.
        region: String,
        /// The longest packet's time on air.
        packet_s: f64,
        /// The limit.
        dwell_s: f64,
    },
    /// The spreading factor is not an uplink rate of the region.
    SpreadingFactor {
        /// The region's name.
        region: String,
        /// The radio's spreading factor.
        sf: u32,
        /// The region's uplink spreading factors.
        min: u32,
        /// See `min`.
        max: u32,
    },
}

/// A duration as the reasons print it: milliseconds below a second, else seconds.
fn secs(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else if (s - s.round()).abs() < 1e-9 {
        format!("{s:.0} s")
    } else {
        format!("{s:.2} s")
    }
}

/// A percentage with one decimal, or more digits below 0.1 %.
fn pct(f: f64) -> String {
    let p = f * 100.0;
    if p >= 0.1 || p == 0.0 {
        format!("{p:.1} %")
    } else {
        format!("{p:.3} %")
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::Infeasible { air_s, interval_s } => write!(
                f,
                "infeasible: {} on air per report exceeds the {} interval (the next report is due before this one is sent)",
                secs(*air_s),
                secs(*interval_s)
            ),
            Violation::DutyCycle { region, on_air, limit } => {
                write!(f, "{} on air in {region}, where {} applies (data/radio-regions.csv)", pct(*on_air), pct(*limit))
            }
            Violation::Dwell { region, packet_s, dwell_s } => write!(
                f,
                "a packet takes {} on air; {region} allows {} per packet (data/radio-regions.csv)",
                secs(*packet_s),
                secs(*dwell_s)
            ),
            Violation::SpreadingFactor { region, sf, min, max } => {
                write!(f, "SF{sf} is not an uplink rate in {region} (SF{min} to SF{max}, data/radio-regions.csv)")
            }
        }
    }
}

/// Everything that keeps one report of `frame` bytes every `interval_s` seconds on `radio`
/// from running, in `region` when one is given; empty when the schedule can run.
pub fn check_schedule(radio: &Radio, frame: usize, interval_s: f64, region: Option<&Region>) -> Vec<Violation> {
    let airs = packet_air_times(radio, frame);
    let air_s: f64 = airs.iter().sum();
    let mut out = Vec::new();
    if air_s > interval_s {
        out.push(Violation::Infeasible { air_s, interval_s });
    }
    if let Some(r) = region {
        if let Some(l) = radio.lora {
            if l.sf < r.sf_min || l.sf > r.sf_max {
                out.push(Violation::SpreadingFactor { region: r.name.clone(), sf: l.sf, min: r.sf_min, max: r.sf_max });
            }
        }
        if let Some(limit) = r.duty_cycle {
            let on_air = air_s / interval_s;
            if on_air > limit {
                out.push(Violation::DutyCycle { region: r.name.clone(), on_air, limit });
            }
        }
        if let Some(dwell_s) = r.dwell_s {
            let packet_s = airs.iter().copied().fold(0.0, f64::max);
            if packet_s > dwell_s {
                out.push(Violation::Dwell { region: r.name.clone(), packet_s, dwell_s });
            }
        }
    }
    out
}

/// Receive-window time of one class-A uplink packet at `uplink_sf`/`uplink_bw_hz` with no
/// downlink: RX1 at the uplink rate, then RX2 at the region's rate, each open for the table's
/// symbols plus the timing error on both sides (LoRaMac-node's sizing).
pub fn class_a_window_s(c: &ClassA, uplink_sf: u32, uplink_bw_hz: f64) -> f64 {
    let window = |sf: u32, bw: f64| c.window_symbols * lora_symbol_s(sf, bw) + 2.0 * c.timing_error_s;
    window(uplink_sf, uplink_bw_hz) + window(c.rx2_sf, c.rx2_bw_hz)
}

/// Joules the class-A receive windows cost per report of `packets` uplink packets.
pub fn class_a_rx_j(c: &ClassA, uplink_sf: u32, uplink_bw_hz: f64, packets: usize) -> f64 {
    packets as f64 * class_a_window_s(c, uplink_sf, uplink_bw_hz) * c.rx_ma * 1e-3 * c.volts
}

/// Connection events between two reports `interval_s` apart (at least the one that carries
/// the report).
pub fn ble_events(b: &BleEvent, interval_s: f64) -> f64 {
    (interval_s / b.connection_interval_s).ceil().max(1.0)
}

/// Joules a BLE peripheral spends per report on connection events besides sending the report
/// itself: in every event it listens through its window and receives the central's packet;
/// in the events without a report it also answers with an empty packet.
pub fn ble_receive_j(b: &BleEvent, interval_s: f64) -> f64 {
    let events = ble_events(b, interval_s);
    let listen = events * (b.rx_window_s + b.empty_pdu_s) * b.rx_ma * 1e-3 * b.volts;
    let empty_answers = (events - 1.0) * b.empty_pdu_s * b.tx_ma * 1e-3 * b.volts;
    listen + empty_answers
}

/// How a Wi-Fi station spends the time between reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WifiMode {
    /// Stays associated in auto light sleep, waking for every DTIM-th beacon.
    Associated {
        /// DTIM period (1, 3 or 10: the table's points).
        dtim: u32,
    },
    /// Deep sleep between reports, associating again for each one.
    Reconnect,
}

/// What a Wi-Fi station draws between reports: the current in place of the board's sleep
/// current, and the joules added per report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IdleDraw {
    /// Average current between reports, in microamps.
    pub sleep_ua: f64,
    /// Energy added to every report (an association), in joules.
    pub per_report_j: f64,
}

/// The idle draw of a Wi-Fi station in `mode`.
pub fn wifi_idle(w: &WifiIdle, mode: WifiMode) -> Result<IdleDraw, String> {
    Ok(match mode {
        WifiMode::Associated { dtim } => IdleDraw { sleep_ua: w.dtim_current_ma(dtim)? * 1e3, per_report_j: 0.0 },
        WifiMode::Reconnect => {
            IdleDraw { sleep_ua: w.deep_sleep_ua, per_report_j: w.association_s * w.association_ma * 1e-3 * w.volts }
        }
    })
}

/// Days a battery of `capacity_mah` at `volts` lasts with `e_report_j` joules every
/// `interval_s` seconds and `sleep_ua` in between (no self-discharge: the link's battery model
/// adds it; this is the bound the schedule itself sets).
pub fn battery_days(capacity_mah: f64, volts: f64, e_report_j: f64, interval_s: f64, sleep_ua: f64) -> f64 {
    let load_a = e_report_j / interval_s / volts + sleep_ua * 1e-6;
    capacity_mah * 1e-3 / load_a / 24.0
}

/// A battery life below the lifetime asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct Shortfall {
    /// Days the battery lasts.
    pub delivered_days: f64,
    /// Days `--lifetime` asks for.
    pub required_days: f64,
}

impl fmt::Display for Shortfall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Years from one year up, days below: "0.1 years" would hide a month.
        let span = |d: f64| if d >= 365.25 { format!("{:.1} years", d / 365.25) } else { format!("{d:.0} days") };
        write!(
            f,
            "requirement not met: the battery lasts {}, --lifetime asks {}",
            span(self.delivered_days),
            span(self.required_days)
        )
    }
}

/// `Err` with the shortfall when `delivered_days` is below the `required_s` lifetime.
pub fn check_lifetime(delivered_days: f64, required_s: f64) -> Result<(), Shortfall> {
    let required_days = required_s / 86_400.0;
    if delivered_days < required_days {
        Err(Shortfall { delivered_days, required_days })
    } else {
        Ok(())
    }
}

/// Which receive model of data/radio-receive.csv a radio profile follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiveLink {
    /// A LoRa radio: LoRaWAN class A.
    LoRaWan,
    /// A BLE radio (name starting "BLE"): connection events as a peripheral.
    Ble,
    /// A Wi-Fi radio (name starting "WiFi"): DTIM wake-ups or associations.
    Wifi,
    /// No receive model (802.15.4 and user radios of other names): not counted, and said so.
    None,
}

impl ReceiveLink {
    /// The model of `radio`: by its modulation for LoRa, by its name's prefix otherwise (the
    /// names of data/radio-profiles.csv).
    pub fn of(radio: &Radio) -> ReceiveLink {
        let name = radio.name.to_ascii_lowercase();
        if radio.lora.is_some() {
            ReceiveLink::LoRaWan
        } else if name.starts_with("ble") {
            ReceiveLink::Ble
        } else if name.starts_with("wifi") {
            ReceiveLink::Wifi
        } else {
            ReceiveLink::None
        }
    }
}

/// What a report costs the radio besides its transmission.
#[derive(Clone, Debug, PartialEq)]
pub enum Receive {
    /// LoRaWAN class-A windows after every packet.
    ClassA {
        /// Joules per report.
        j_per_report: f64,
        /// Window time per packet (RX1 + RX2).
        window_s: f64,
        /// Where RX2's rate comes from (the region, or the uplink rate without one).
        rx2: String,
    },
    /// BLE connection events between reports.
    Ble {
        /// Joules per report.
        j_per_report: f64,
        /// Connection events per report.
        events: f64,
    },
    /// Wi-Fi idle draw: the cheaper of staying associated and reconnecting per report.
    Wifi {
        /// The mode chosen.
        mode: WifiMode,
        /// Its draw.
        draw: IdleDraw,
    },
    /// No receive model for this radio.
    NotModelled,
}

impl Receive {
    /// Joules added to every report.
    pub fn j_per_report(&self) -> f64 {
        match self {
            Receive::ClassA { j_per_report, .. } | Receive::Ble { j_per_report, .. } => *j_per_report,
            Receive::Wifi { draw, .. } => draw.per_report_j,
            Receive::NotModelled => 0.0,
        }
    }

    /// The current that replaces the board's sleep current between reports (a Wi-Fi station's
    /// average), if the model sets one.
    pub fn sleep_ua(&self) -> Option<f64> {
        match self {
            Receive::Wifi { draw, .. } => Some(draw.sleep_ua),
            _ => None,
        }
    }

    /// One line for the output.
    pub fn describe(&self) -> String {
        match self {
            Receive::ClassA { j_per_report, window_s, rx2 } => format!(
                "class-A receive windows {:.0} ms per packet (RX2 {rx2}): {:.1} mJ per report (data/radio-receive.csv)",
                window_s * 1e3,
                j_per_report * 1e3
            ),
            Receive::Ble { j_per_report, events } => format!(
                "{events:.0} connection event(s) per report: {:.1} µJ of receive (data/radio-receive.csv)",
                j_per_report * 1e6
            ),
            Receive::Wifi { mode: WifiMode::Associated { dtim }, draw } => format!(
                "stays associated, DTIM {dtim}: {:.0} µA between reports (data/radio-receive.csv)",
                draw.sleep_ua
            ),
            Receive::Wifi { mode: WifiMode::Reconnect, draw } => format!(
                "deep sleep and one association per report: {:.0} mJ each, {:.1} µA between (data/radio-receive.csv)",
                draw.per_report_j * 1e3,
                draw.sleep_ua
            ),
            Receive::NotModelled => "no receive model for this radio: receive energy not counted".to_string(),
        }
    }
}

/// The physics of one schedule: its packets, time on air, violations and receive cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Assessment {
    /// Packets per report.
    pub packets: usize,
    /// Time on air per report.
    pub air_s: f64,
    /// Why it cannot run (empty: it can).
    pub violations: Vec<Violation>,
    /// What a report costs besides its transmission.
    pub receive: Receive,
}

/// Assess one report of `frame` bytes every `interval_s` on `radio`, in `region` when given,
/// with the receive figures `table` (data/radio-receive.csv) and a Wi-Fi AP's `dtim` period.
pub fn assess(
    radio: &Radio,
    frame: usize,
    interval_s: f64,
    region: Option<&Region>,
    table: &[crate::receive::Figure],
    dtim: u32,
) -> Result<Assessment, String> {
    let airs = packet_air_times(radio, frame);
    let receive = match ReceiveLink::of(radio) {
        ReceiveLink::LoRaWan => {
            let (sf, bw) = radio.lora.map(|l| (l.sf, l.bw_hz)).unwrap_or((12, 125_000.0));
            // Without a region the RX2 rate is unknown: the uplink rate stands in, and is named.
            let (c, rx2) = match region {
                Some(r) => (ClassA::from_table(table, &r.name)?, format!("{}'s default", r.name)),
                None => {
                    let mut c = ClassA::from_table(table, "EU868")?;
                    (c.rx2_sf, c.rx2_bw_hz) = (sf, bw);
                    (c, "at the uplink rate: no --region".to_string())
                }
            };
            Receive::ClassA {
                j_per_report: class_a_rx_j(&c, sf, bw, airs.len()),
                window_s: class_a_window_s(&c, sf, bw),
                rx2,
            }
        }
        ReceiveLink::Ble => {
            let b = BleEvent::from_table(table)?;
            Receive::Ble { j_per_report: ble_receive_j(&b, interval_s), events: ble_events(&b, interval_s) }
        }
        ReceiveLink::Wifi => {
            let w = WifiIdle::from_table(table)?;
            let stay = wifi_idle(&w, WifiMode::Associated { dtim })?;
            let again = wifi_idle(&w, WifiMode::Reconnect)?;
            // Energy over one interval decides: the average current × interval × supply, plus the association.
            let cost = |d: &IdleDraw| d.per_report_j + d.sleep_ua * 1e-6 * interval_s * w.volts;
            if cost(&again) < cost(&stay) {
                Receive::Wifi { mode: WifiMode::Reconnect, draw: again }
            } else {
                Receive::Wifi { mode: WifiMode::Associated { dtim }, draw: stay }
            }
        }
        ReceiveLink::None => Receive::NotModelled,
    };
    Ok(Assessment {
        packets: airs.len(),
        air_s: airs.iter().sum(),
        violations: check_schedule(radio, frame, interval_s, region),
        receive,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::radio::find_radio;
    use crate::receive;
    use crate::region;

    fn eu868() -> Region {
        region::find(&region::builtin(), "EU868").unwrap()
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-30)
    }

    #[test]
    fn lora_time_on_air_matches_a_hand_computation() {
        // SF7, 125 kHz, CR 4/5, 8-symbol preamble, explicit header, CRC: 25 bytes.
        // T_sym = 128/125000 = 1.024 ms; ceil((200 - 28 + 28 + 16)/28) = ceil(7.71) = 8;
        // 8 × 5 + 8 = 48 payload symbols + 12.25 preamble = 60.25 symbols = 61.696 ms.
        let r = find_radio("LoRa-SF7").unwrap();
        assert!(close(r.lora.unwrap().time_on_air(25), 0.061696, 1e-12));
        // SF12 (low data rate optimisation on), 64 bytes: T_sym = 32.768 ms;
        // ceil((512 - 48 + 28 + 16)/40) = ceil(12.7) = 13; 13 × 5 + 8 + 12.25 = 85.25 symbols = 2.793472 s.
        let r = find_radio("LoRa-SF12").unwrap();
        assert!(close(r.lora.unwrap().time_on_air(64), 2.793472, 1e-12));
    }

    #[test]
    fn packet_split_is_shown() {
        assert_eq!(packets(331, 51), 7);
        assert_eq!(packets(51, 51), 1);
        assert_eq!(packets(0, 51), 1);
        assert_eq!(packets(52, 51), 2);
        assert_eq!(packets_label(2), "2 packets");
        assert_eq!(packets_label(1), "1 packet");
        let r = find_radio("LoRa-SF12").unwrap();
        assert_eq!(packet_air_times(&r, 331).len(), 7);
    }

    #[test]
    fn eu868_duty_cycle_refuses_300_bytes_at_sf12_every_10_minutes() {
        // The case: a 300 B reading in a 331 B link frame (15 B header + 16 B tag),
        // SF12 (max 51 B per packet): 6 packets of 51 + 13 = 64 B (2.793472 s each) and one of
        // 25 + 13 = 38 B: ceil((304 - 48 + 44)/40) = 8; 8 × 5 + 8 + 12.25 = 60.25 symbols = 1.974272 s.
        // 6 × 2.793472 + 1.974272 = 18.735104 s on air every 600 s = 3.12 %, above EU868's 1 %.
        let r = find_radio("LoRa-SF12").unwrap();
        let v = check_schedule(&r, 331, 600.0, Some(&eu868()));
        assert_eq!(v.len(), 1, "{v:?}");
        match &v[0] {
            Violation::DutyCycle { on_air, limit, .. } => {
                assert!(close(*on_air, 18.735104 / 600.0, 1e-12), "{on_air}");
                assert_eq!(*limit, 0.01);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(v[0].to_string(), "3.1 % on air in EU868, where 1.0 % applies (data/radio-regions.csv)");
        // The same frame every hour is 0.52 % on air: it runs.
        assert!(check_schedule(&r, 331, 3600.0, Some(&eu868())).is_empty());
    }

    #[test]
    fn airtime_above_the_interval_is_infeasible_with_or_without_a_region() {
        // 51 B at SF12 is one 64 B packet, 2.793472 s on air (hand computation above), every 1 s.
        let r = find_radio("LoRa-SF12").unwrap();
        let v = check_schedule(&r, 51, 1.0, None);
        assert_eq!(v, vec![Violation::Infeasible { air_s: 2.793472, interval_s: 1.0 }]);
        assert_eq!(
            v[0].to_string(),
            "infeasible: 2.79 s on air per report exceeds the 1 s interval (the next report is due before this one is sent)"
        );
        // With EU868 the duty cycle (279 %) is broken too, and both are reported.
        let v = check_schedule(&r, 51, 1.0, Some(&eu868()));
        assert!(matches!(v[0], Violation::Infeasible { .. }) && matches!(v[1], Violation::DutyCycle { .. }), "{v:?}");
    }

    #[test]
    fn us915_dwell_time_and_uplink_rates() {
        let us = region::find(&region::builtin(), "US915").unwrap();
        // SF9, 100 B + 13 B overhead = 113 B: ceil((904 - 36 + 44)/36) = ceil(25.33) = 26;
        // 26 × 5 + 8 + 12.25 = 150.25 symbols × 4.096 ms = 615.424 ms > 400 ms.
        let r = find_radio("LoRa-SF9").unwrap();
        let v = check_schedule(&r, 100, 60.0, Some(&us));
        assert_eq!(v.len(), 1, "{v:?}");
        match &v[0] {
            Violation::Dwell { packet_s, dwell_s, .. } => {
                assert!(close(*packet_s, 0.615424, 1e-12));
                assert_eq!(*dwell_s, 0.4);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            v[0].to_string(),
            "a packet takes 615 ms on air; US915 allows 400 ms per packet (data/radio-regions.csv)"
        );
        // SF12 is no uplink rate there; US915 sets no duty cycle, so 51 B every minute passes that.
        let v = check_schedule(&find_radio("LoRa-SF12").unwrap(), 10, 60.0, Some(&us));
        assert!(v
            .iter()
            .any(|x| x.to_string() == "SF12 is not an uplink rate in US915 (SF7 to SF10, data/radio-regions.csv)"));
        assert!(!v.iter().any(|x| matches!(x, Violation::DutyCycle { .. })));
    }

    #[test]
    fn a_feasible_eu868_soil_sensor_passes() {
        // 12 B reading + 31 B link overhead = 43 B at SF9 every 15 min: one 56 B packet,
        // ceil((448 - 36 + 44)/36) = 13; 13 × 5 + 8 + 12.25 = 85.25 symbols = 349.184 ms: 0.039 %.
        let r = find_radio("LoRa-SF9").unwrap();
        assert!(close(packet_air_times(&r, 43)[0], 0.349184, 1e-12));
        assert!(check_schedule(&r, 43, 900.0, Some(&eu868())).is_empty());
    }

    #[test]
    fn class_a_receive_windows_per_report() {
        let c = receive::ClassA::from_table(&receive::builtin(), "EU868").unwrap();
        // SF9 uplink: RX1 = 16 × 4.096 ms + 2 × 50 ms = 165.536 ms; RX2 at SF12/125 kHz:
        // 16 × 32.768 ms + 100 ms = 624.288 ms; 0.789824 s × 9.9 mA × 3.3 V = 25.80355 mJ.
        assert!(close(class_a_window_s(&c, 9, 125_000.0), 0.789824, 1e-12));
        assert!(close(class_a_rx_j(&c, 9, 125_000.0, 1), 0.789824 * 0.0099 * 3.3, 1e-12));
        assert!(close(class_a_rx_j(&c, 9, 125_000.0, 1), 0.02580355, 1e-6));
        // Every packet of a split frame opens its own windows.
        assert!(close(class_a_rx_j(&c, 9, 125_000.0, 3), 3.0 * 0.02580355, 1e-6));
        // More than the 33.4 mJ transmission of the 43 B frame is not far: the windows matter.
        let tx = find_radio("LoRa-SF9").unwrap().energy_j(43);
        assert!(class_a_rx_j(&c, 9, 125_000.0, 1) > 0.5 * tx, "rx {} tx {tx}", class_a_rx_j(&c, 9, 125_000.0, 1));
    }

    #[test]
    fn ble_connection_events_per_report() {
        let b = receive::BleEvent::from_table(&receive::builtin()).unwrap();
        // One report a second at a 1 s interval: one event, (1064 + 80) µs × 6.26 mA × 3 V = 21.48432 µJ.
        assert!(close(ble_receive_j(&b, 1.0), 0.001144 * 0.00626 * 3.0, 1e-12));
        // Every 10 s: 10 events listening, 9 of them answered with an empty 80 µs packet at 6.40 mA:
        // 10 × 21.48432 µJ + 9 × 80 µs × 6.40 mA × 3 V = 214.8432 + 13.824 = 228.6672 µJ.
        assert!(close(ble_receive_j(&b, 10.0), 228.6672e-6, 1e-9));
        assert_eq!(ble_events(&b, 0.2), 1.0);
    }

    #[test]
    fn wifi_idle_and_the_ten_hertz_sensor() {
        let w = receive::WifiIdle::from_table(&receive::builtin()).unwrap();
        let assoc = wifi_idle(&w, WifiMode::Associated { dtim: 1 }).unwrap();
        assert_eq!(assoc, IdleDraw { sleep_ua: 1400.0, per_report_j: 0.0 });
        // Reconnecting costs 1 s × 63 mA × 3.3 V = 0.2079 J per report, 4.8 µA between.
        let re = wifi_idle(&w, WifiMode::Reconnect).unwrap();
        assert!(close(re.per_report_j, 0.2079, 1e-12) && re.sleep_ua == 4.8);
        assert!(wifi_idle(&w, WifiMode::Associated { dtim: 2 }).is_err());
        // A 10 Hz sensor stays associated; 1.4 mA alone empties two AA cells (2400 mAh) in
        // 2400 / 1.4 = 1714.29 h = 71.43 days, whatever the cipher: not the 824 days of the issue.
        let days = battery_days(2400.0, 3.0, 0.0, 0.1, assoc.sleep_ua);
        assert!(close(days, 2400.0 / 1.4 / 24.0, 1e-12), "{days}");
        assert!(days < 72.0);
    }

    #[test]
    fn battery_life_below_the_lifetime_is_requirement_not_met() {
        // 1 mJ every 10 s at 3 V is 33.33 µA, plus 10 µA asleep: 2400 mAh / 43.33 µA = 55384.6 h = 2307.7 days.
        let days = battery_days(2400.0, 3.0, 1e-3, 10.0, 10.0);
        assert!(close(days, 2.4 / (1e-3 / 10.0 / 3.0 + 10e-6) / 24.0, 1e-12));
        assert!(close(days, 2307.69, 1e-5), "{days}");
        let fifteen_years = 15.0 * 365.25 * 86_400.0;
        let e = check_lifetime(8.0 * 365.25, fifteen_years).unwrap_err();
        assert_eq!(e.to_string(), "requirement not met: the battery lasts 8.0 years, --lifetime asks 15.0 years");
        assert!(check_lifetime(15.0 * 365.25, fifteen_years).is_ok());
        let e = check_lifetime(30.0, fifteen_years).unwrap_err();
        assert_eq!(e.to_string(), "requirement not met: the battery lasts 30 days, --lifetime asks 15.0 years");
        let e = check_lifetime(20.0, 30.0 * 86_400.0).unwrap_err();
        assert_eq!(e.to_string(), "requirement not met: the battery lasts 20 days, --lifetime asks 30 days");
    }

    #[test]
    fn assess_gathers_packets_violations_and_receive_cost() {
        let table = receive::builtin();
        let sf12 = find_radio("LoRa-SF12").unwrap();
        let a = assess(&sf12, 331, 600.0, Some(&eu868()), &table, 3).unwrap();
        assert_eq!(a.packets, 7);
        assert!(close(a.air_s, 18.735104, 1e-12));
        assert_eq!(a.violations.len(), 1);
        // 7 packets × (16 × 32.768 ms + 100 ms) × 2 windows (RX1 and RX2 both SF12 in EU868)
        // = 7 × 1.248576 s = 8.740032 s × 9.9 mA × 3.3 V = 285.53684544 mJ.
        assert!(close(a.receive.j_per_report(), 8.740032 * 0.0099 * 3.3, 1e-12));
        assert!(a.receive.describe().contains("RX2 EU868's default"), "{}", a.receive.describe());
        // Without a region RX2 runs at the uplink rate, and the output says so.
        let sf9 = find_radio("LoRa-SF9").unwrap();
        let a = assess(&sf9, 43, 900.0, None, &table, 3).unwrap();
        assert!(close(a.receive.j_per_report(), 2.0 * (16.0 * 0.004096 + 0.1) * 0.0099 * 3.3, 1e-12));
        assert!(a.receive.describe().contains("no --region"));
        // BLE: 1 report a second, one event (hand value of ble_connection_events_per_report).
        let a = assess(&find_radio("BLE-1M").unwrap(), 48, 1.0, None, &table, 3).unwrap();
        assert!(close(a.receive.j_per_report(), 21.48432e-6, 1e-9));
        assert_eq!(a.receive.sleep_ua(), None);
        // Wi-Fi every 0.1 s stays associated (DTIM3: 0.62 mA × 0.1 s × 3.3 V = 0.2 mJ against a
        // 0.2079 J association); every hour it reconnects (0.2079 J + 4.8 µA × 3600 s × 3.3 V
        // = 0.2649 J against 0.62 mA × 3600 s × 3.3 V = 7.366 J).
        let wifi = find_radio("WiFi-n-MCS7").unwrap();
        let fast = assess(&wifi, 48, 0.1, None, &table, 3).unwrap();
        assert_eq!(fast.receive.sleep_ua(), Some(620.0));
        let slow = assess(&wifi, 48, 3600.0, None, &table, 3).unwrap();
        assert!(matches!(slow.receive, Receive::Wifi { mode: WifiMode::Reconnect, .. }));
        assert!(close(slow.receive.j_per_report(), 0.2079, 1e-12));
        let none = assess(&find_radio("802.15.4").unwrap(), 48, 10.0, None, &table, 3).unwrap();
        assert_eq!(none.receive, Receive::NotModelled);
        assert!(assess(&wifi, 48, 1.0, None, &table, 2).unwrap_err().contains("DTIM 2"));
    }
}
