//! On-chip crypto engines (data/crypto-engines.csv) and NIST LWC implementations emulated on the
//! board (data/nistlwc-cycles.csv) as candidates beside this project's images: their facts, their
//! crypto priced on the board, the error band of their figures and their firmware line. An
//! engine candidate is named by its engine ("AES-128-CCM (CryptoCell-310)"), a NIST LWC one by its
//! implementation ("Ascon-128 (NIST LWC armv7m, inline-asm)"): each is distinct from the software
//! candidate of the same cipher, and only on the boards whose chip or emulation has it.
use lwcbench_data::engines::{Cpu, Engine};
use lwcbench_data::nistlwc::NistCycles;

use crate::data::{catalogue_facts, Data, ErrorBand, Facts, Source};
use crate::link_facts::{self, Kind, LinkSuite};
use crate::options::Request;
use crate::priced::Priced;

/// The link suite that carries `cipher` as an AEAD (the gateway's side of the same wire format),
/// with its nonce bytes.
fn link_suite(cipher: &str) -> Option<(LinkSuite, usize)> {
    let s = link_facts::suites().into_iter().find(|s| s.cipher == cipher && s.kind == Kind::Aead)?;
    let nonce = lwcbench_catalog::registry().iter().find(|e| e.id() == s.name)?.info.iv_bytes();
    Some((s, nonce))
}

/// The facts of an engine's AEAD: on the link when it can seal the link's frame (its suite's
/// key, nonce and tag), else with the engine's own longest tag and nonce.
fn engine_facts(e: &'static Engine) -> Facts {
    let link = link_suite(&e.algorithm).filter(|_| e.link_frame);
    Facts {
        cipher: e.algorithm.clone(),
        implementation: e.engine.clone(),
        tag_bytes: link.as_ref().map(|(s, _)| s.tag_bytes).unwrap_or(e.max_tag() as usize),
        nonce_bytes: link.as_ref().map(|(_, n)| *n).unwrap_or(e.nonce_bytes.1 as usize),
        key_bits: link.as_ref().map(|(s, _)| s.key_bits).unwrap_or(128),
        link: link.map(|(s, _)| s),
        block: false,
        random_nonce_bytes: 0,
        source: Source::Engine(e),
    }
}

/// The facts of a NIST LWC build: the catalogue cipher's link suite (the same cipher and wire
/// format; the gateway runs this project's implementation).
fn nist_facts(r: &'static NistCycles) -> Facts {
    let link = link_suite(&r.cipher);
    Facts {
        cipher: r.cipher.clone(),
        implementation: r.implementation.clone(),
        tag_bytes: link.as_ref().map(|(s, _)| s.tag_bytes).unwrap_or(0),
        nonce_bytes: link.as_ref().map(|(_, n)| *n).unwrap_or(0),
        key_bits: link.as_ref().map(|(s, _)| s.key_bits).unwrap_or(0),
        link: link.map(|(s, _)| s),
        block: false,
        random_nonce_bytes: 0,
        source: Source::NistLwc(r),
    }
}

/// The candidates of board `board_id` besides this project's images: its chip's AEAD engines
/// and the NIST LWC builds emulated on it.
pub fn board_facts(board_id: &str) -> Vec<Facts> {
    let engines = lwcbench_data::engines::of_board(board_id).into_iter().filter(|e| e.is_aead()).map(engine_facts);
    engines.chain(lwcbench_data::nistlwc::of_board(board_id).into_iter().map(nist_facts)).collect()
}

/// Every candidate of a request on `board_id`: the catalogue's and the board's own.
pub fn candidate_facts(data: &Data, board_id: &str) -> Vec<Facts> {
    let mut out = catalogue_facts(data);
    out.extend(board_facts(board_id));
    out
}

/// The candidates of a request under its `--framing`: the link frame's, OSCORE's, or both.
pub fn framed_facts(data: &Data, req: &Request) -> Vec<Facts> {
    let mut out = if req.framing.link() { candidate_facts(data, &req.board.id) } else { Vec::new() };
    if req.framing.oscore() {
        out.extend(crate::oscore::oscore_facts(data, req));
    }
    out.retain(|f| req.ciphers.is_empty() || req.ciphers.iter().any(|n| crate::oscore::named(f, n)));
    out
}

/// An engine's AES-CCM over the link's header (associated data) and the payload: its set-up and
/// blocks at the board's clock, with the CPU waiting as the row says and the engine's own current.
pub fn engine_priced(req: &Request, f: &Facts, e: &Engine) -> Priced {
    let b = &req.board;
    // The associated data is what the deploy command's carrier authenticates (17 B on LoRaWAN).
    let ad = crate::link_facts::Carrier::of_radio(&req.radio).aad_len();
    let blocks = Engine::ccm_blocks(ad, req.payload);
    let cycles = e.cycles(ad, req.payload);
    let secs = cycles / (b.clock_mhz * 1e6);
    let cpu_ma = match e.cpu {
        Cpu::Active => b.active_ma,
        Cpu::Sleep => b.sleep_ua / 1e3,
    };
    Priced {
        cycles,
        crypto_j: secs * b.volts * (cpu_ma + e.engine_ma) / 1e3,
        crypto_s: secs,
        error: e.error_pct / 100.0,
        flash: e.flash_bytes,
        ram: e.ram_bytes,
        tag: f.tag_bytes,
        source: format!(
            "on-chip engine: the {} {} (data/crypto-engines.csv, {}): {} set-up cycles + {blocks} AES blocks (SP 800-38C CCM over {ad} bytes of associated data and {} payload bytes) × {} cycles at {} MHz = {:.1} µs, CPU {} ({cpu_ma} mA) + engine {} mA at {} V, ±{} %; call: {}; source: {}",
            e.chip, e.engine, e.status, e.setup_cycles, req.payload, e.block_cycles, b.clock_mhz, secs * 1e6,
            e.cpu.name(), e.engine_ma, b.volts, e.error_pct, e.call, e.source
        ),
        flash_ram_source: format!(
            "data/crypto-engines.csv ({}): the code and RAM of the call's driver or library as the row gives them",
            e.status
        ),
    }
}

/// A NIST LWC build's crypto_aead_encrypt over the header the frame authenticates and the
/// payload: warm cycles plus one cold start shared by the lifetime's reports (None when the row
/// is for another target or its timing model has no error band). The row was emulated with
/// `ad_bytes` of associated data; associated data the carrier's frame has beyond that (LoRaWAN's
/// compact frame authenticates 17 bytes) is counted like message bytes, as the images' is.
pub fn nist_priced(req: &Request, data: &Data, f: &Facts, r: &NistCycles) -> Option<Priced> {
    let b = &req.board;
    if r.target != b.target {
        return None;
    }
    let band = data.band(&r.timing_model)?;
    let ad = link_facts::Carrier::of_radio(&req.radio).aad_len();
    let extra_ad = ad as f64 - r.ad_bytes as f64;
    let cycles = r.per_message(req.payload as f64 + extra_ad, req.messages());
    Some(Priced {
        cycles,
        crypto_j: b.energy_j(cycles),
        crypto_s: cycles / (b.clock_mhz * 1e6),
        error: band.error_pct / 100.0,
        flash: r.flash_bytes,
        ram: r.ram_static_bytes + r.stack_bytes,
        tag: f.tag_bytes,
        source: format!(
            "emulated on {} ({} model, {} MHz) from the NIST LWC tree's {} ({}, config {}; data/nistlwc-cycles.csv: {}): one crypto_aead_encrypt over {} bytes of associated data (the frame authenticates {ad}{}) + payload, warm cache + one cold start over the lifetime's reports, ±{} % ({}), × datasheet active power {:.4} W (data/board-power.csv, {})",
            b.id, r.timing_model, b.clock_mhz, r.nist_implementation, r.kind, r.config, r.check, r.ad_bytes,
            if extra_ad == 0.0 { String::new() } else { format!(": {extra_ad:+} counted like message bytes") },
            band.error_pct,
            band.source, b.active_w(), b.status
        ),
        flash_ram_source: format!(
            "measured here on the NIST LWC image (data/nistlwc-cycles.csv: image minus the harness, encrypt and decrypt; RAM = static {} + stack {})",
            r.ram_static_bytes, r.stack_bytes
        ),
    })
}

/// The error band of the chosen candidate's figures.
pub fn band_of(req: &Request, data: &Data, f: &Facts) -> Option<ErrorBand> {
    match f.source {
        Source::Image | Source::Oscore(_) => {
            req.cycles(&f.cipher, &f.implementation).and_then(|c| data.band(&c.timing_model)).cloned()
        }
        Source::NistLwc(r) => data.band(&r.timing_model).cloned(),
        Source::Engine(e) => Some(ErrorBand {
            timing_model: format!("engine ({})", e.engine),
            error_pct: e.error_pct,
            source: format!("data/crypto-engines.csv ({}): the band on the engine's figures", e.status),
        }),
    }
}

/// Where the candidate comes from, with its source, for its verdict line (None for this
/// project's images, whose source is the figures' own).
pub fn origin(f: &Facts) -> Option<String> {
    match f.source {
        Source::Image => None,
        Source::Engine(e) => Some(format!(
            "ON-CHIP ENGINE: {} of the {} ({}), call: {}; data/crypto-engines.csv ({})",
            e.engine, e.chip, e.algorithm, e.call, e.status
        )),
        Source::NistLwc(r) => Some(format!(
            "NIST LWC IMPLEMENTATION: {} ({}, config {}) from the shared NIST LWC tree, emulated here: {}; data/nistlwc-cycles.csv",
            r.nist_implementation, r.kind, r.config, r.check
        )),
        Source::Oscore(a) => Some(format!(
            "OSCORE (RFC 8613): {} (COSE {}) over CoAP, run by the {}/{} image: {} (data/oscore-aeads.csv, {}: {})",
            a.algorithm, a.cose_id, f.cipher, f.implementation, a.why, a.status, a.source
        )),
    }
}

/// The firmware line of an engine or NIST LWC candidate (None for this project's images).
pub fn firmware(f: &Facts) -> Option<String> {
    match f.source {
        Source::Image => None,
        Source::Engine(e) => Some(format!(
            "no image to build: the on-chip {} through {}{}",
            e.engine,
            e.call,
            f.link.as_ref().map(|s| format!("; the gateway side runs {}", s.name)).unwrap_or_default()
        )),
        Source::NistLwc(r) => Some(format!(
            "build {} from the shared NIST LWC tree with mcu/nistlwc.py's flags (config {}), as scripts/data/nistlwc-cycles.py does",
            r.nist_implementation, r.config
        )),
        // The AEAD's measured image, as for this project's candidates (handover.rs adds the
        // OSCORE stack it needs).
        Source::Oscore(_) => None,
    }
}

/// How an engine or NIST LWC candidate gets integrity (None for this project's images).
pub fn protection(f: &Facts) -> Option<String> {
    match (f.source, &f.link) {
        (Source::Image, _) => None,
        (Source::Engine(e), Some(s)) => {
            Some(format!("the link's {} frame sealed by the on-chip {} (the gateway runs {})", e.algorithm, e.engine, s.name))
        }
        (Source::Engine(e), None) => Some(format!(
            "none on the link: the {} seals only its own packet format ({}-byte MIC, {}-byte nonce), not the link's frame",
            e.engine, e.max_tag(), e.nonce_bytes.1
        )),
        (Source::NistLwc(_), Some(s)) => Some(format!("the cipher's own AEAD (the gateway runs {})", s.name)),
        (Source::NistLwc(_), None) => Some("none: not on the link".to_string()),
        (Source::Oscore(a), _) => Some(format!(
            "OSCORE: COSE_Encrypt0 with {} over the CoAP request (RFC 8613 §5), the tag on the request",
            a.algorithm
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::options::Options;
    use crate::report::choose;

    fn wearable() -> Options {
        Options {
            board: "nrf52840".into(),
            radio: "BLE-1M".into(),
            interval: "1s".into(),
            payload: "20B".into(),
            chemistry: "CR2032".into(),
            battery_mah: 225.0,
            battery_v: 3.0,
            ..Options::default()
        }
    }

    /// Issue #38's "done when": the nRF52840 BLE wearable (1 s, 20 B, CR2032) offers the hardware
    /// CCM candidate with its source.
    #[test]
    fn the_nrf52840_ble_wearable_offers_the_hardware_ccm_with_its_source() {
        let rep = choose(&wearable(), None).unwrap();
        let cc = rep.candidate("AES-128-CCM (CryptoCell-310)").expect("the CryptoCell-310 CCM is a candidate");
        assert!(cc.passed, "{:?}", cc.reasons);
        assert!(cc.rank.is_some());
        let g = cc.figures.as_ref().unwrap();
        assert!(g.sources["crypto"].contains("data/crypto-engines.csv"), "{}", g.sources["crypto"]);
        assert!(cc.reasons.iter().any(|r| r.contains("CRYS_AESCCM")), "the call that uses it: {:?}", cc.reasons);
        // The BLE CCM peripheral is offered too, and out: BLE's 4-byte MIC is below --tag 128.
        let p = rep.candidate("AES-128-CCM (CCM peripheral)").expect("the CCM peripheral is a candidate");
        assert!(!p.passed);
        assert!(p.reasons.iter().any(|r| r.starts_with("tag: ") && r.contains("32-bit")), "{:?}", p.reasons);
        // The software AES-CCM stays a separate candidate.
        assert!(rep.candidates.iter().filter(|c| c.cipher == "AES-128-CCM").count() >= 3);
        // The source reaches every format: the verdict line in text and HTML, `origin` in JSON.
        let line = "ON-CHIP ENGINE: CryptoCell-310 of the nRF52840 (AES-128-CCM), call: nrf_cc310";
        assert!(crate::render::text::text(&rep).contains(line));
        assert!(crate::render::html::html(&rep).contains(line));
        let v: serde_json::Value = serde_json::from_str(&crate::render::json::json(&rep).unwrap()).unwrap();
        let c = v["candidates"].as_array().unwrap().iter().find(|c| c["id"] == "AES-128-CCM (CryptoCell-310)").unwrap();
        assert!(c["origin"].as_str().unwrap().starts_with(line), "{}", c["origin"]);
    }

    /// A NIST LWC row was emulated with 16 bytes of associated data (the link's own header); the
    /// LoRaWAN compact frame authenticates 17 (16-byte rebuilt header + 1 compact byte), and that
    /// extra byte is priced like a message byte. By hand from data/nistlwc-cycles.csv's mkrzero
    /// ascon128v12/ref row (warm 19,070 cycles at 16 B, 49,870 at 128 B; cold = warm on the
    /// MKR Zero): (49,870 − 19,070) / 112 = 275 cycles more on LoRa than on BLE.
    #[test]
    fn a_nist_row_prices_the_carriers_associated_data() {
        let cycles = |radio: &str| -> f64 {
            let rep = choose(&on("mkrzero", radio, "any"), None).unwrap();
            let c = rep.candidate("Ascon-128 (NIST LWC ref, c)").expect("the NIST LWC Ascon-128 ref is a candidate");
            let g = c.figures.as_ref().expect("priced");
            if radio.starts_with("LoRa") {
                assert!(
                    g.sources["crypto"].contains(
                        "16 bytes of associated data (the frame authenticates 17: +1 counted like message bytes)"
                    ),
                    "{}",
                    g.sources["crypto"]
                );
            }
            g.crypto_cycles
        };
        let d = cycles("LoRa-SF9") - cycles("BLE-1M");
        assert!((d - 275.0).abs() < 1e-6, "{d}");
    }

    fn on(board: &str, radio: &str, require: &str) -> Options {
        Options {
            board: board.into(),
            radio: radio.into(),
            interval: "10s".into(),
            require: Some(require.into()),
            ..Options::default()
        }
    }

    /// Engines only where the chip has one: the nRF52840 boards and the ESP32-C3, none on the
    /// RP2040 or the SAMD21 (data/crypto-engines.csv header).
    #[test]
    fn engine_candidates_only_on_the_boards_that_have_them() {
        let engines = |board: &str| -> Vec<String> {
            let rep = choose(&on(board, "BLE-1M", "any"), None).unwrap();
            rep.candidates
                .iter()
                .filter(|c| c.origin.as_deref().is_some_and(|o| o.starts_with("ON-CHIP")))
                .map(|c| c.id.clone())
                .collect()
        };
        assert_eq!(engines("nrf52840"), ["AES-128-CCM (CCM peripheral)", "AES-128-CCM (CryptoCell-310)"]);
        assert_eq!(engines("nano33ble"), ["AES-128-CCM (CCM peripheral)", "AES-128-CCM (CryptoCell-310)"]);
        assert_eq!(engines("esp32c3"), ["AES-128-CCM (AES accelerator)"]);
        assert!(engines("rp2040").is_empty());
        assert!(engines("mkrzero").is_empty());
    }

    /// The CryptoCell-310's energy per message by hand from its row (2000 set-up cycles, 30 per
    /// block, CPU active 3.3 mA + engine 3.3 mA at 3 V, 64 MHz): 20 B payload after the 16-byte
    /// header is 1 + 2 + 2 + 2 + 1 = 8 blocks (SP 800-38C) → 2240 cycles = 35 µs × 3 V × 6.6 mA
    /// = 0.693 µJ.
    #[test]
    fn the_cryptocell_ccm_is_priced_from_its_row() {
        let rep = choose(&wearable(), None).unwrap();
        let g = rep.candidate("AES-128-CCM (CryptoCell-310)").and_then(|c| c.figures.as_ref()).unwrap();
        assert_eq!(g.crypto_cycles, 2240.0);
        assert!((g.crypto_uj.value - 0.693).abs() < 1e-9, "{}", g.crypto_uj.value);
        // ±50 % (the row's band on its estimates)
        assert!((g.crypto_uj.hi - 0.693 * 1.5).abs() < 1e-9 && (g.crypto_uj.lo - 0.693 * 0.5).abs() < 1e-9);
        // the link's AES-128-CCM frame: 16-byte header + 20 B + 16-byte tag
        assert_eq!((g.frame_bytes, g.tag_bytes), (52, 16));
        assert_eq!((g.flash_bytes, g.ram_bytes), (12000, 1024));
    }

    /// `--require fips` means an approved algorithm: the CryptoCell's AES-CCM (SP 800-38C) passes
    /// it like the software AES-CCM, and its verdict says FIPS 140-3 approved (docs/choose.md: an
    /// approved algorithm, not a validated module).
    #[test]
    fn fips_admits_the_engine_ccm_as_an_approved_algorithm() {
        let rep = choose(&Options { require: Some("fips".into()), ..wearable() }, None).unwrap();
        let cc = rep.candidate("AES-128-CCM (CryptoCell-310)").unwrap();
        assert!(cc.passed && cc.fips, "{:?}", cc.reasons);
        assert!(cc.reasons[0].contains("FIPS 140-3 approved"), "{}", cc.reasons[0]);
        for c in rep.candidates.iter().filter(|c| c.passed) {
            assert!(c.fips, "{} passed --require fips", c.id);
        }
    }

    /// A chosen engine deploys as the link's own AES-128-CCM suite (the same frame), and its
    /// firmware line names the call, not an image.
    #[test]
    fn a_chosen_engine_hands_over_the_links_ccm_suite() {
        let rep = choose(&Options { require: Some("fips".into()), ..wearable() }, None).unwrap();
        let facts = crate::engines::candidate_facts(&crate::data::Data::builtin(), "nrf52840");
        let f = facts.iter().find(|f| f.id() == "AES-128-CCM (CryptoCell-310)").unwrap();
        let req = crate::options::Request::resolve(&wearable()).unwrap();
        let c = rep.candidate("AES-128-CCM (CryptoCell-310)").unwrap();
        let h = crate::handover::handover(&req, c, f, &crate::data::Data::builtin(), None);
        assert_eq!(h.link_command[3], "AES-128-CCM/rustcrypto");
        assert!(h.firmware_build.contains("CRYS_AESCCM"), "{}", h.firmware_build);
    }

    /// The NIST LWC builds are candidates on the boards they were emulated for, named by their
    /// source, priced from their own row: the expected cycles come from the CSV text by column
    /// position, not from the loader.
    #[test]
    fn nist_lwc_builds_are_candidates_with_their_own_cycles() {
        let text = include_str!("../../../data/nistlwc-cycles.csv");
        // (warm mean, cold mean, flash) at 72 B, halfway between 16 and 128: the means of the
        // two counts
        let means = |board: &str| -> (f64, f64, u64) {
            let row: Vec<&str> = text
                .lines()
                .find(|l| l.starts_with(&format!("{board},Ascon-128,nist-lwc-armv7m,")))
                .expect("the armv7m build passes on the nRF52840 boards")
                .split(',')
                .collect();
            let n = |i: usize| -> f64 { row[i].parse().unwrap() };
            ((n(11) + n(12)) / 2.0, (n(9) + n(10)) / 2.0, row[13].parse::<u64>().unwrap())
        };
        let priced = |board: &str| {
            let rep = choose(&Options { payload: "72B".into(), ..on(board, "BLE-1M", "any") }, None).unwrap();
            let c = rep.candidate("Ascon-128 (NIST LWC armv7m, inline-asm)").expect("a candidate").clone();
            assert!(c.reasons.iter().any(|r| r.starts_with("NIST LWC IMPLEMENTATION: ascon/ascon128v12/armv7m")));
            c.figures.unwrap()
        };
        // The two nRF52840 boards share the Nano 33 BLE's fitted cache: the warm mean plus one
        // cold start (cold mean - warm mean) shared by the lifetime's messages, the default 10
        // years of 365.25 days at one every 10 s.
        let n = 10.0 * 365.25 * 86_400.0 / 10.0;
        for board in ["nano33ble", "nrf52840"] {
            let (warm, cold, flash) = means(board);
            let g = priced(board);
            assert!(cold > warm, "{board}: {cold} vs {warm}");
            let want = warm + (cold - warm) / n;
            assert!((g.crypto_cycles - want).abs() < 1e-6, "{board}: {} vs {want}", g.crypto_cycles);
            assert_eq!(g.flash_bytes, flash);
        }
        // Ascon-128 v1.2 is superseded: out by default, like the software Ascon-128.
        let def = choose(&on("nano33ble", "BLE-1M", "standard"), None).unwrap();
        let c = def.candidate("Ascon-128 (NIST LWC armv7m, inline-asm)").unwrap();
        assert!(!c.passed && c.removed_by.contains(&crate::filter::Filter::Superseded));
        // none on a board no NIST table covers
        let pico = choose(&on("rp2040", "BLE-1M", "any"), None).unwrap();
        assert!(pico.candidates.iter().all(|c| !c.id.contains("NIST LWC")));
    }
}
