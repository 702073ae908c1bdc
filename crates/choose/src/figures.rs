//! The figures of one candidate on the request's board and radio: crypto cycles and energy
//! from the emulated image, the frame on air, battery life, flash and RAM, each with its source.
use std::collections::BTreeMap;

use lwcbench_data::battery::Battery;
use lwcbench_data::board::Cycles;
use lwcbench_data::radio::Radio;
use serde::Serialize;

use crate::data::{Data, Facts, Size, Source};
use crate::link_facts::{Carrier, Kind, MAX_COUNTER, POLY_TAG, STREAM_SKIP};
use crate::options::Request;
pub use crate::priced::Priced;
use lwcbench_data::physics::{assess, check_lifetime, Receive, ReceiveLink, Violation};

/// A value with its interval under the error model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Span {
    /// Nominal value.
    pub value: f64,
    /// Favourable end.
    pub lo: f64,
    /// Unfavourable end.
    pub hi: f64,
}

impl Span {
    /// A value without error.
    pub fn exact(v: f64) -> Span {
        Span { value: v, lo: v, hi: v }
    }
}

/// The figures of one candidate on the board, each with its source.
#[derive(Clone, Debug, Serialize)]
pub struct Figures {
    /// Bytes of the frame the link sends.
    pub frame_bytes: usize,
    /// Tag bytes in it.
    pub tag_bytes: usize,
    /// Crypto cycles per message.
    pub crypto_cycles: f64,
    /// Crypto energy per message.
    pub crypto_uj: Span,
    /// Radio energy per message.
    pub radio_uj: f64,
    /// Time on air of every packet of the frame.
    pub air_time_ms: f64,
    /// Radio packets the frame takes (the radio's largest payload each).
    pub packets: usize,
    /// Crypto + radio (transmission and receive) energy per message.
    pub energy_uj: Span,
    /// Crypto time + time on air.
    pub latency_ms: Span,
    /// Modelled battery life.
    pub battery_days: Span,
    /// What ends the battery's life.
    pub battery_limited_by: String,
    /// Flash of the image (and the composition's Poly1305 share).
    pub flash_bytes: u64,
    /// Static RAM + stack.
    pub ram_bytes: u64,
    /// Distinct nonces the link's counter gives this cipher under one device key.
    pub counter_space: f64,
    /// Receive energy per message besides the transmission (class-A windows, BLE connection
    /// events, a Wi-Fi association; data/radio-receive.csv).
    pub receive_uj: f64,
    /// What the receive figure is, in one line.
    pub receive: String,
    /// The current drawn between reports (the board's sleep current, `--sleep-ua`, or a Wi-Fi
    /// station's average draw), in µA.
    pub sleep_ua: f64,
    /// The regional limits the schedule breaks (data/radio-regions.csv), each with its reason.
    pub region_violations: Vec<String>,
    /// "requirement not met: ..." when the battery lasts less than `--lifetime`.
    pub lifetime_shortfall: Option<String>,
    /// Where each figure comes from.
    pub sources: BTreeMap<String, String>,
}

fn poly_share<'a>(data: &'a Data, req: &Request) -> Option<(&'a Cycles, &'a Cycles, &'a Size, &'a Size)> {
    let b = &req.board;
    // The RustCrypto images; on a board no Rust image runs on (the ESP8266's LX106) this
    // project's own C ones (mcu/lx106/chacha).
    let imp = if req.cycles("ChaCha20-Poly1305", "rustcrypto").is_some() { "rustcrypto" } else { "c" };
    Some((
        req.cycles("ChaCha20-Poly1305", imp)?,
        req.cycles("ChaCha20", imp)?,
        data.size(&b.target, "ChaCha20-Poly1305", imp)?,
        data.size(&b.target, "ChaCha20", imp)?,
    ))
}

/// The link's counter sits in the first 8 nonce bytes (crates/link/src/wire/frame.rs `nonce`): a
/// shorter nonce would drop its low bytes, so every counter value would repeat a nonce.
pub fn counter_space(nonce_bytes: usize) -> f64 {
    if nonce_bytes >= 8 {
        MAX_COUNTER as f64 + 1.0
    } else {
        1.0
    }
}

/// Packets of at most the radio's largest payload for a `frame`-byte frame (as
/// [`Radio::air_time`] splits it).
pub fn packets(r: &Radio, frame: usize) -> usize {
    lwcbench_data::physics::packets(frame, r.max_payload)
}

/// The crypto of one candidate per message, with its flash and RAM, the tag it sends and the
/// sources of those figures.
struct Crypto {
    cycles: f64,
    flash: u64,
    ram: u64,
    tag: usize,
    source: String,
    flash_ram_source: String,
}

/// The crypto of `f` per message: the stream + Poly1305 composition from its two images, an
/// AEAD from its own (None when the composition's images are missing).
fn crypto(req: &Request, data: &Data, f: &Facts, c: &Cycles, sz: &Size, emulated: &str) -> Option<Crypto> {
    // What the frame authenticates: the header the deploy command's carrier sends or implies.
    let ad = Carrier::of_radio(&req.radio).aad_len() as f64;
    let p = req.payload as f64;
    match f.kind() {
        Some(Kind::StreamPoly1305) => {
            let (cp, cc, scp, scc) = poly_share(data, req)?;
            // Poly1305's share: the ChaCha20-Poly1305 image minus the ChaCha20 image over the
            // same keystream (its 64-byte key block plus the message).
            let poly = |n: f64| (cp.message(n) - cc.message(n + STREAM_SKIP as f64)).max(0.0);
            // steady state (warm cache) plus the one cold start shared by the lifetime's reports
            let n = req.messages();
            let cyc =
                c.init + c.per_message(STREAM_SKIP as f64 + p, n) + poly(ad + p) + cp.cold_start(ad + p) / n.max(1.0);
            let flash = sz.flash + scp.flash.saturating_sub(scc.flash);
            let ram = sz.ram_static
                + sz.stack
                + scp.ram_static.saturating_sub(scc.ram_static)
                + scp.stack.saturating_sub(scc.stack);
            Some(Crypto {
                cycles: cyc,
                flash,
                ram,
                tag: POLY_TAG,
                source: format!(
                    "{emulated}; modelled composition: init + keystream over {STREAM_SKIP} + payload bytes + Poly1305 over header + payload (the {} image minus the {} image)",
                    cp.image, cc.image
                ),
                flash_ram_source: format!(
                    "measured here (data/mcu-sizes.csv: image {} on {}) + the Poly1305 share ({} minus {}), modelled",
                    sz.image, sz.target, scp.image, scc.image
                ),
            })
        }
        _ => {
            // The AEAD's key schedule runs once per key: per message the encrypt phase, with the
            // header (the associated data) counted like message bytes; the steady state (warm
            // cache) plus the one cold start shared by the lifetime's reports.
            let cyc = c.per_message(ad + p, req.messages());
            Some(Crypto {
                cycles: cyc,
                flash: sz.flash,
                ram: sz.ram_static + sz.stack,
                tag: f.tag_bytes,
                source: format!("{emulated}; encrypt + tag over header + payload bytes, warm cache + one cold start over the lifetime's reports"),
                flash_ram_source: format!(
                    "measured here (data/mcu-sizes.csv: image {} on {}; RAM = static + stack)",
                    sz.image, sz.target
                ),
            })
        }
    }
}

/// The battery a report draws on and where its sleep current comes from: a Wi-Fi station's
/// average draw between reports replaces the board's sleep current, unless --sleep-ua gives one.
fn report_battery(req: &Request, receive: &Receive) -> (Battery, String) {
    let mut battery = req.battery.clone();
    let mut sleep_source = req.sleep_source.clone();
    if let (Some(ua), false) = (receive.sleep_ua(), req.sleep_given) {
        battery.sleep_ua = ua;
        sleep_source = "the Wi-Fi station's average draw (data/radio-receive.csv)".into();
    }
    (battery, sleep_source)
}

/// Where the radio figure comes from: the `frame`-byte frame with its `tag`-byte tag.
fn radio_source(req: &Request, f: &Facts, frame: usize, tag: usize) -> String {
    format!(
        "modelled: time on air of the {frame}-byte frame ({} + {}payload + {tag}-byte tag) × transmit power, data/radio-profiles.csv {} ({}: {})",
        Carrier::of_radio(&req.radio).describe(),
        if f.random_nonce_bytes > 0 { format!("{}-byte random nonce + ", f.random_nonce_bytes) } else { String::new() },
        req.radio.name, req.radio.status, req.radio.source
    )
}

/// Where the battery figure comes from.
fn battery_source(req: &Request, battery: &Battery, sleep_source: &str) -> String {
    format!(
        "modelled: {} mAh at {} V, {} (data/battery-chemistries.csv, {}), sleep {:.1} µA from {sleep_source}, one report every {} s",
        battery.capacity_mah,
        battery.volts,
        battery.chemistry.name,
        battery.chemistry.status,
        battery.sleep_ua,
        req.interval_s
    )
}

/// The crypto of `f` from this project's image on the board (None without an image).
fn image_priced(req: &Request, data: &Data, f: &Facts) -> Option<Priced> {
    let b = &req.board;
    let c = req.cycles(&f.cipher, &f.implementation)?;
    let sz = data.size(&b.target, &f.cipher, &f.implementation)?;
    let band = data.band(&c.timing_model)?;
    let emulated = format!(
        "emulated on {} ({} model, {} MHz; data/emulated-cycles.csv image {}), ±{} % ({}), × datasheet active power {:.4} W (data/board-power.csv, {})",
        if c.board == b.id { b.id.clone() } else { format!("{}'s memory profile for {}", c.board, b.id) },
        c.timing_model, b.clock_mhz, c.image, band.error_pct, band.source, b.active_w(), b.status
    );
    let Crypto { cycles, flash, ram, tag, source, flash_ram_source } = crypto(req, data, f, c, sz, &emulated)?;
    Some(Priced {
        cycles,
        crypto_j: b.energy_j(cycles),
        crypto_s: cycles / (b.clock_mhz * 1e6),
        error: band.error_pct / 100.0,
        flash,
        ram,
        tag,
        source,
        flash_ram_source,
    })
}

/// The figures of `f` on the request's board and radio (None without an image, engine or
/// emulated NIST LWC build on the board).
pub fn figures(req: &Request, data: &Data, f: &Facts) -> Option<Figures> {
    // An OSCORE candidate's frame is its whole protected CoAP request, with its own radio line.
    let mut oscore = None;
    let p = match f.source {
        Source::Image => image_priced(req, data, f)?,
        Source::Engine(e) => crate::engines::engine_priced(req, f, e),
        Source::NistLwc(r) => crate::engines::nist_priced(req, data, f, r)?,
        Source::Oscore(a) => {
            let (p, frame, radio) = crate::oscore::oscore_priced(req, data, f, a)?;
            oscore = Some((frame, radio));
            p
        }
    };
    let Priced { cycles, crypto_j, crypto_s, error: e, flash, ram, tag, source, flash_ram_source } = p;
    let frame = match &oscore {
        Some((frame, _)) => *frame,
        None => Carrier::of_radio(&req.radio).header_len() + f.random_nonce_bytes + req.payload + tag,
    };
    let phys = assess(&req.radio, frame, req.interval_s, req.region.as_ref(), &req.receive, req.dtim).ok()?;
    // Receive energy is reported apart from the transmission and counted in the total.
    let receive_j = phys.receive.j_per_report();
    let radio_j = req.radio.energy_j(frame);
    let air = phys.air_s;
    let (battery, sleep_source) = report_battery(req, &phys.receive);
    let mut sources = BTreeMap::new();
    sources.insert("crypto".into(), source);
    sources.insert("flash_ram".into(), flash_ram_source);
    sources.insert("radio".into(), oscore.map(|(_, r)| r).unwrap_or_else(|| radio_source(req, f, frame, tag)));
    sources.insert("battery".into(), battery_source(req, &battery, &sleep_source));
    sources.insert("receive".into(), phys.receive.describe());
    if ReceiveLink::of(&req.radio) == ReceiveLink::Wifi {
        sources.insert("dtim".into(), req.dtim_source.clone());
    }
    if let Some(r) = &req.region {
        sources
            .insert("region".into(), format!("{} limits (data/radio-regions.csv, {}): {}", r.name, r.status, r.source));
    }
    let air_j = radio_j + receive_j;
    let energy = Span { value: crypto_j + air_j, lo: crypto_j * (1.0 - e) + air_j, hi: crypto_j * (1.0 + e) + air_j };
    let life = |j: f64| battery.life(j);
    let mid = life(energy.value);
    let region_violations = phys
        .violations
        .iter()
        // Time on air above the interval is the schedule filter's (with the crypto time).
        .filter(|v| !matches!(v, Violation::Infeasible { .. }))
        .map(|v| v.to_string())
        .collect();
    Some(Figures {
        frame_bytes: frame,
        tag_bytes: tag,
        crypto_cycles: cycles,
        crypto_uj: Span { value: crypto_j * 1e6, lo: crypto_j * (1.0 - e) * 1e6, hi: crypto_j * (1.0 + e) * 1e6 },
        radio_uj: radio_j * 1e6,
        air_time_ms: air * 1e3,
        packets: phys.packets,
        energy_uj: Span { value: energy.value * 1e6, lo: energy.lo * 1e6, hi: energy.hi * 1e6 },
        latency_ms: Span {
            value: (crypto_s + air) * 1e3,
            lo: (crypto_s * (1.0 - e) + air) * 1e3,
            hi: (crypto_s * (1.0 + e) + air) * 1e3,
        },
        battery_days: Span { value: mid.days, lo: life(energy.hi).days, hi: life(energy.lo).days },
        battery_limited_by: mid.limited_by.to_string(),
        flash_bytes: flash,
        ram_bytes: ram,
        counter_space: match f.source {
            Source::Oscore(_) => crate::oscore::SEQ_SPACE,
            _ => counter_space(f.nonce_bytes),
        },
        receive_uj: receive_j * 1e6,
        receive: phys.receive.describe(),
        sleep_ua: battery.sleep_ua,
        region_violations,
        lifetime_shortfall: check_lifetime(mid.days, req.lifetime_s).err().map(|s| s.to_string()),
        sources,
    })
}
