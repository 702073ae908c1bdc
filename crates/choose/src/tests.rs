//! The choose crate's tests: filters, figures by hand, the tie rule, the budgets, the request's
//! ranges, and the JSON's nulls.
use std::collections::BTreeMap;

use crate::data::{catalogue_facts, parse_errors, parse_sizes, parse_status, Data};
use crate::evaluate::{evaluate, Evaluation};
use crate::figures::Span;
use crate::filter::{Candidate, Filter, Level};
use crate::options::{Options, Request, Weights};
use crate::render::text::text;
use crate::report::choose;
use crate::robust::robustness;
use crate::score::{scores, Budgets, Criteria};
use crate::ties::{place, Placed};

fn opts(board: &str, radio: &str, interval: &str) -> Options {
    Options { board: board.into(), radio: radio.into(), interval: interval.into(), ..Options::default() }
}

/// Every candidate the status, claim, constant-time and tag filters admit at their widest,
/// for the tests of the other filters.
fn wide(board: &str, radio: &str, interval: &str) -> Options {
    Options {
        require: Some("any".into()),
        allow_variable_time: true,
        tag: 64,
        security: 80,
        ..opts(board, radio, interval)
    }
}

fn rank(items: &[Criteria], w: &Weights, budgets: Budgets) -> Vec<Placed> {
    place(&scores(items, w, budgets))
}

fn eval(o: &Options) -> Evaluation {
    let req = Request::resolve(o).unwrap();
    let data = Data::builtin();
    let facts = catalogue_facts(&data);
    evaluate(&req, &data, &facts)
}

fn by<'a>(ev: &'a Evaluation, id: &str) -> &'a Candidate {
    ev.candidates.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("{id} is a candidate"))
}

/// (image flash, static RAM + stack) per cipher/implementation on a target, read from
/// data/mcu-sizes.csv with this test's own line splitting (no quoted fields in that file).
fn sizes_by_hand(target: &str) -> BTreeMap<String, (u64, u64)> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/mcu-sizes.csv")).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (ci, ii, ti, fi, ri, si) = (
        col("cipher"),
        col("implementation"),
        col("target"),
        col("flash_bytes"),
        col("ram_static_bytes"),
        col("stack_bytes"),
    );
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[ti] == target)
        .map(|f| {
            let n = |i: usize| f[i].parse::<u64>().unwrap();
            (format!("{}/{}", f[ci], f[ii]), (n(fi), n(ri) + n(si)))
        })
        .collect()
}

/// Flash of a candidate as the rule in docs/choose.md states it: its own image, plus for the
/// stream + Poly1305 composition the ChaCha20-Poly1305 image minus the ChaCha20 image.
fn flash_by_hand(c: &Candidate, sizes: &BTreeMap<String, (u64, u64)>) -> u64 {
    let own = sizes[&c.id].0;
    if c.protection.starts_with("this project's composition") {
        own + sizes["ChaCha20-Poly1305/rustcrypto"].0 - sizes["ChaCha20/rustcrypto"].0
    } else {
        own
    }
}

#[test]
fn flash_budget_removes_exactly_the_larger_images() {
    let sizes = sizes_by_hand("thumbv6m-none-eabi");
    let free = eval(&wide("rp2040", "LoRa-SF9", "10m"));
    let mut o = wide("rp2040", "LoRa-SF9", "10m");
    o.flash = Some("3KiB".into());
    let tight = eval(&o);
    let before: Vec<&Candidate> = free.candidates.iter().filter(|c| c.passed).collect();
    assert!(before.len() >= 5, "enough candidates pass without a budget: {}", before.len());
    let want: Vec<String> = before.iter().filter(|c| flash_by_hand(c, &sizes) > 3072).map(|c| c.id.clone()).collect();
    let got: Vec<String> = tight
        .candidates
        .iter()
        .filter(|c| c.removed_by.contains(&Filter::Flash))
        .filter(|c| before.iter().any(|b| b.id == c.id))
        .map(|c| c.id.clone())
        .collect();
    assert_eq!(got, want);
    assert!(!want.is_empty() && want.len() < before.len(), "3 KiB splits the field: {want:?}");
    // Nothing else changes: the others still pass.
    for b in &before {
        assert_eq!(by(&tight, &b.id).passed, !want.contains(&b.id), "{}", b.id);
    }
}

#[test]
fn ram_budget_removes_exactly_the_larger_footprints() {
    let sizes = sizes_by_hand("thumbv7em-none-eabihf");
    let free = eval(&wide("nrf52840", "BLE-1M", "1s"));
    let mut o = wide("nrf52840", "BLE-1M", "1s");
    o.ram = Some("512B".into());
    let tight = eval(&o);
    for b in free.candidates.iter().filter(|c| c.passed) {
        let (_, ram) = sizes[&b.id];
        let ram = if b.protection.starts_with("this project's composition") {
            let (cp, cc) = (sizes["ChaCha20-Poly1305/rustcrypto"].1, sizes["ChaCha20/rustcrypto"].1);
            // static and stack shares separately may each be clamped at 0; the sum bounds it below
            ram + cp.saturating_sub(cc)
        } else {
            ram
        };
        let c = by(&tight, &b.id);
        if !b.protection.starts_with("this project's composition") {
            assert_eq!(c.passed, ram <= 512, "{}: RAM {ram}", b.id);
        } else if ram > 512 {
            assert!(!c.passed, "{}: RAM at least {ram}", b.id);
        }
    }
}

#[test]
fn provisional_draco_only_with_allow_provisional_and_labelled() {
    let ev = eval(&wide("rp2040", "LoRa-SF9", "10m"));
    let d = by(&ev, "DRACO/rust-fast");
    assert_eq!(d.removed_by, vec![Filter::Status]);
    assert!(d.reasons[0].contains("--allow-provisional"), "{:?}", d.reasons);
    let mut o = wide("rp2040", "LoRa-SF9", "10m");
    o.allow_provisional = true;
    let ev = eval(&o);
    let d = by(&ev, "DRACO/rust-fast");
    assert!(d.passed && d.rank.is_some());
    assert_eq!(d.status, Level::Provisional);
    // The Pico's 2 mA board sleep ends the battery in about 50 days: 10 years is not met.
    assert_eq!(d.labels, ["PROVISIONAL", "REQUIREMENT NOT MET"]);
    assert!(d.reasons.iter().any(|r| r.starts_with("PROVISIONAL")), "{:?}", d.reasons);
}

#[test]
fn security_is_the_designers_claim_not_the_key_length() {
    // Trivium, Grain v1 and MICKEY 2.0 claim 80 bits (their eSTREAM specifications);
    // TinyJAMBU-128 claims 112 bits and SCHWAEMM256-128 120 bits with 128-bit keys (their
    // NIST LWC final-round specifications).
    let ev = eval(&Options { security: 128, ..wide("rp2040", "LoRa-SF9", "10m") });
    let mut low: Vec<&str> =
        ev.candidates.iter().filter(|c| c.removed_by.contains(&Filter::Security)).map(|c| c.id.as_str()).collect();
    low.sort_unstable();
    assert_eq!(
        low,
        [
            "Grain-v1/rust",
            "MICKEY-2.0/rust",
            "SCHWAEMM256-128/rust-ref",
            "TinyJAMBU-128/nist-opt",
            "TinyJAMBU-128/nist-ref",
            "TinyJAMBU-128/rust-ref",
            "Trivium/cpp-arduino",
            "Trivium/rust"
        ]
    );
    let t = by(&ev, "TinyJAMBU-128/rust-ref");
    assert_eq!((t.key_bits, t.claimed_bits), (128, 112));
    assert!(t.reasons[0].starts_with("security: claimed security 112 bits ("), "{:?}", t.reasons);
    let ev = eval(&Options { security: 112, ..wide("rp2040", "LoRa-SF9", "10m") });
    assert!(by(&ev, "TinyJAMBU-128/rust-ref").passed);
    assert!(!by(&ev, "Trivium/rust").passed);
    let ev = eval(&wide("rp2040", "LoRa-SF9", "10m"));
    assert!(by(&ev, "Trivium/rust").passed);
}

/// The status rows, read with this test's own parsing of data/cipher-status.csv:
/// cipher → (status, fips, superseded).
fn statuses_by_hand() -> BTreeMap<String, (String, bool, bool)> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/cipher-status.csv")).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(head[..6], ["cipher", "status", "fips", "claimed_bits", "constant_time", "superseded_by"]);
    // The first six columns hold no commas.
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .map(|f| (f[0].to_string(), (f[1].to_string(), f[2] == "yes", !f[5].is_empty())))
        .collect()
}

#[test]
fn each_require_level_admits_what_it_says_and_labels_the_rest() {
    let rows = statuses_by_hand();
    let comp = |c: &Candidate| c.protection.starts_with("this project's composition");
    let level = |req: &str| eval(&Options { require: Some(req.into()), ..wide("nrf52840", "BLE-1M", "1s") });
    // standard: the primitive and mode as a standard specifies them; never a composition.
    let ev = level("standard");
    let passed: Vec<&Candidate> = ev.candidates.iter().filter(|c| c.passed).collect();
    assert!(passed.len() >= 2);
    for c in &passed {
        assert!(!comp(c) && rows[&c.cipher].0 == "standard" && c.labels.iter().all(|l| l.ends_with("BIT TAG")));
    }
    // A reconstruction stays provisional whatever wraps it.
    for c in ev.candidates.iter().filter(|c| comp(c)) {
        let want = if rows[&c.cipher].0 == "provisional" { Level::Provisional } else { Level::Composition };
        assert_eq!(c.status, want, "{}", c.id);
        assert!(c.removed_by.contains(&Filter::Status), "{}", c.id);
    }
    // reviewed: adds portfolios, finalists and compositions of such stream ciphers, labelled;
    // status none (MICKEY-128 2.0) and superseded versions (Ascon-128 v1.2) stay out.
    let ev = level("reviewed");
    for c in ev.candidates.iter().filter(|c| c.passed) {
        let (st, _, sup) = &rows[&c.cipher];
        assert!(st == "standard" || st == "portfolio" || st == "finalist", "{}", c.id);
        assert!(!sup, "{}", c.id);
        let label = if comp(c) {
            Some("COMPOSITION")
        } else if st != "standard" {
            Some("NOT A STANDARD")
        } else {
            None
        };
        assert_eq!(c.labels.first().map(String::as_str).filter(|l| !l.ends_with("BIT TAG")), label, "{}", c.id);
    }
    assert!(by(&ev, "Rabbit/rustcrypto").passed && by(&ev, "TinyJAMBU-128/rust-ref").passed);
    assert_eq!(by(&ev, "MICKEY-128-2.0/rust").removed_by, [Filter::Status]);
    assert_eq!(by(&ev, "Ascon-128/rustcrypto").removed_by, [Filter::Superseded]);
    // any: everything with an image on the board, the superseded version labelled.
    let ev = level("any");
    let a = by(&ev, "Ascon-128/rustcrypto");
    assert!(a.passed && a.labels.contains(&"SUPERSEDED".to_string()), "{:?}", a.labels);
    assert!(a.reasons.iter().any(|r| r.starts_with("SUPERSEDED by Ascon-AEAD128")));
    assert!(by(&ev, "MICKEY-128-2.0/rust").passed);
    // fips: exactly the approved algorithms pass (RustCrypto's AES-128-CCM and AES-128-GCM images;
    // on the nRF52840 also the CryptoCell-310's AES-CCM); every other candidate with figures is out
    // by status. On the RP2040 (no engine) the two images are the whole answer.
    for c in level("fips").candidates.iter().filter(|c| c.figures.is_some() && c.link_id.is_some()) {
        assert_eq!(c.passed, rows[&c.cipher].1, "{}", c.id);
        assert_eq!(c.removed_by.contains(&Filter::Status), !rows[&c.cipher].1, "{}", c.id);
    }
    let r = choose(&Options { require: Some("fips".into()), ..opts("rp2040", "BLE-1M", "1s") }, None).unwrap();
    let passed: Vec<&str> = r.candidates.iter().filter(|c| c.passed).map(|c| c.id.as_str()).collect();
    assert_eq!(passed, ["AES-128-CCM/rustcrypto", "AES-128-GCM/rustcrypto"]);
    // On the ESP8266 (no Rust image, no engine) the approved modes are our C AES-128-CCM and
    // AES-128-GCM LX106 images (mcu/lx106/aes), and nothing else passes.
    let r = choose(&Options { require: Some("fips".into()), ..opts("esp8266", "WiFi-n-MCS7-ESP8266", "1m") }, None)
        .unwrap();
    let mut passed: Vec<&str> = r.candidates.iter().filter(|c| c.passed).map(|c| c.id.as_str()).collect();
    passed.sort_unstable();
    assert_eq!(passed, ["AES-128-CCM/c", "AES-128-GCM/c"]);
}

#[test]
fn variable_time_ciphers_only_with_allow_variable_time_and_labelled() {
    let base = Options { require: Some("reviewed".into()), ..opts("nrf52840", "BLE-1M", "1s") };
    let ev = eval(&base);
    for id in ["HC-128/rust", "Sosemanuk/rust"] {
        let c = by(&ev, id);
        assert_eq!(c.removed_by, [Filter::ConstantTime], "{id}");
        assert!(c.reasons[0].contains("table") && c.reasons[0].ends_with("--allow-variable-time shows it"));
    }
    assert_eq!(ev.candidates.iter().filter(|c| c.removed_by.contains(&Filter::ConstantTime)).count(), 2);
    let ev = eval(&Options { allow_variable_time: true, ..base });
    for id in ["HC-128/rust", "Sosemanuk/rust"] {
        let c = by(&ev, id);
        assert!(c.passed && c.labels.contains(&"VARIABLE-TIME".to_string()), "{id}: {:?}", c.labels);
    }
}

#[test]
fn the_tag_filter_compares_at_the_tag_the_link_sends() {
    let ev = eval(&Options { tag: 128, ..wide("rp2040", "LoRa-SF9", "10m") });
    let mut short: Vec<&str> =
        ev.candidates.iter().filter(|c| c.removed_by.contains(&Filter::Tag)).map(|c| c.id.as_str()).collect();
    short.sort_unstable();
    // The two 64-bit tags of the catalogue (`lwcbench list`: tag 64), and CCM*'s 32- and 64-bit
    // MICs (IEEE 802.15.4; the Rust and the ESP8266's C images), which the link does not carry.
    assert_eq!(
        short,
        [
            "AES-128-CCM*-4/c",
            "AES-128-CCM*-4/rustcrypto",
            "AES-128-CCM*-8/c",
            "AES-128-CCM*-8/rustcrypto",
            "Grain-128AEADv2/rust-ref",
            "TinyJAMBU-128/nist-opt",
            "TinyJAMBU-128/nist-ref",
            "TinyJAMBU-128/rust-ref"
        ]
    );
    assert!(ev.candidates.iter().filter(|c| c.passed).all(|c| c.figures.as_ref().unwrap().tag_bytes == 16));
    // --tag 96 keeps them out: no cipher here has a 96-bit tag, and the link does not truncate.
    let ev = eval(&Options { tag: 96, ..wide("rp2040", "LoRa-SF9", "10m") });
    assert!(by(&ev, "TinyJAMBU-128/rust-ref").removed_by.contains(&Filter::Tag));
    let e = Request::resolve(&Options { tag: 32, ..opts("rp2040", "LoRa-SF9", "10m") }).unwrap_err();
    assert_eq!(e, "--tag: 32 is not a tag length the link's ciphers have (64, 96 or 128 bits)");
}

#[test]
fn a_short_nonce_fails_the_counter_filter() {
    let req = Request::resolve(&opts("rp2040", "LoRa-SF9", "10m")).unwrap();
    let data = Data::builtin();
    let mut f = catalogue_facts(&data).into_iter().find(|f| f.id() == "Ascon-AEAD128/rustcrypto").unwrap();
    assert!(evaluate(&req, &data, std::slice::from_ref(&f)).candidates[0].passed);
    // A 4-byte nonce would take only the counter's top 4 bytes: counters 0..2^32 share nonce 0.
    f.nonce_bytes = 4;
    let c = &evaluate(&req, &data, &[f]).candidates[0];
    assert_eq!(c.removed_by, vec![Filter::Counter]);
    // 10 years every 10 minutes: 3652.5 days × 144 = 525,960 reports.
    assert_eq!(req.messages(), 525_960.0);
}

#[test]
fn energy_of_ascon_on_rp2040_lora_sf9_by_hand() {
    // Hand computation from the data files' rows:
    // LoRa rides LoRaWAN, so the deploy command sends the compact header (docs/link.md
    // "Compact header (LoRaWAN)"): frame 1 + 16 + 16 = 33 B; LoRa packet 33 + 13 = 46 B. SF9,
    // 125 kHz: T_sym = 4.096 ms; (8·46 − 36 + 28 + 16) / 36 = 10.44 → 11 × 5 = 55 + 8 = 63
    // payload symbols + 12.25 preamble = 75.25 × 4.096 ms = 308.224 ms; × 0.0957 W = 29,497.037 µJ.
    // Crypto: rc_ascon_aead128 on thumbv6m over the 17-byte associated data + 16 B, warm
    // (steady state) 10,426 + (33 − 16) × (28,290 − 10,426) / 112 = 13,137.5 cycles, plus one
    // cold start over the 525,960 reports: (2,434 − 250) + (20,898 + 17 × 159.5 − 13,137.5) =
    // 2,184 + 10,472 = 12,656 cycles, 12,656 / 525,960 = 0.024062… per report; / 125 MHz ×
    // 0.125 W (25 mA × 5 V): µJ = cycles / 1000.
    let cyc = 13_137.5 + 12_656.0 / 525_960.0;
    let ev = eval(&opts("rp2040", "LoRa-SF9", "10m"));
    let g = by(&ev, "Ascon-AEAD128/rustcrypto").figures.clone().unwrap();
    assert_eq!(g.frame_bytes, 33);
    assert!((g.air_time_ms - 308.224).abs() < 1e-6, "{}", g.air_time_ms);
    assert!((g.radio_uj - 29_497.036_8).abs() < 1e-3, "{}", g.radio_uj);
    assert!((g.crypto_cycles - cyc).abs() < 1e-6, "{}", g.crypto_cycles);
    assert!((g.crypto_uj.value - cyc / 1000.0).abs() < 1e-9, "{}", g.crypto_uj.value);
    // ±5.5 % (m0plus band) on the crypto share only.
    assert!((g.crypto_uj.hi - cyc / 1000.0 * 1.055).abs() < 1e-9);
    // Class-A receive windows (data/radio-receive.csv), no --region so RX2 at the uplink rate:
    // 2 × (16 × 4.096 ms + 2 × 50 ms) = 331.072 ms × 9.9 mA × 3.3 V = 10,816.122 µJ.
    assert!((g.receive_uj - 10_816.122_24).abs() < 1e-3, "{}", g.receive_uj);
    assert!((g.energy_uj.value - (29_497.036_8 + 10_816.122_24 + cyc / 1000.0)).abs() < 1e-3);
}

fn crit(e: f64, elo: f64, ehi: f64, flash: f64) -> Criteria {
    Criteria {
        energy: Span { value: e, lo: elo, hi: ehi },
        battery: Span::exact(1.0),
        latency: Span::exact(1.0),
        flash,
        ram: 1.0,
    }
}

#[test]
fn tie_rule_on_hand_made_inputs() {
    let w = Weights { energy: 1.0, battery: 0.0, latency: 0.0, flash: 0.0, ram: 0.0 };
    // Scores are energy / 100: A 1.00 [0.95, 1.05], B 1.04 [1.00, 1.08] overlaps A → tied;
    // C 1.20 [1.18, 1.22] starts a new group (its lo 1.18 > A's hi 1.05), D 1.21 overlaps C
    // (lo 1.19 ≤ C's hi 1.22), E 1.30 [1.29, 1.31] is above C's hi → alone.
    let items = [
        crit(104.0, 100.0, 108.0, 1.0), // B
        crit(100.0, 95.0, 105.0, 1.0),  // A
        crit(121.0, 119.0, 123.0, 1.0), // D
        crit(120.0, 118.0, 122.0, 1.0), // C
        crit(130.0, 129.0, 131.0, 1.0), // E
    ];
    let p = rank(&items, &w, Budgets::default());
    let order: Vec<usize> = p.iter().map(|x| x.index).collect();
    let ranks: Vec<usize> = p.iter().map(|x| x.rank).collect();
    assert_eq!(order, [1, 0, 3, 2, 4]);
    assert_eq!(ranks, [1, 1, 3, 3, 5]);
    assert!((p[0].score.hi - 1.05).abs() < 1e-12 && (p[1].score.lo - 1.0).abs() < 1e-12);
    // A group is measured from its leader: X overlaps Y (1.06 ≤ 1.08) but not the leader
    // A (1.06 > 1.05), so it starts rank 3; chaining through Y would have tied it.
    let chain = [crit(100.0, 95.0, 105.0, 1.0), crit(104.0, 100.0, 108.0, 1.0), crit(107.0, 106.0, 110.0, 1.0)];
    assert_eq!(rank(&chain, &w, Budgets::default()).iter().map(|x| x.rank).collect::<Vec<_>>(), [1, 1, 3]);
    let exact = [crit(100.0, 100.0, 100.0, 1.0), crit(100.5, 100.5, 100.5, 1.0)];
    assert_eq!(rank(&exact, &w, Budgets::default()).iter().map(|x| x.rank).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn flash_counts_only_against_a_budget() {
    let w = Weights { energy: 1.0, battery: 0.0, latency: 0.0, flash: 1.0, ram: 0.0 };
    let items = [crit(100.0, 99.0, 101.0, 1000.0), crit(102.0, 101.0, 103.0, 2000.0)];
    // No budget: flash is no cost, the scores are energy ÷ best alone: 1 and 1.02.
    let p = rank(&items, &w, Budgets::default());
    assert!((p[0].score.value - 1.0).abs() < 1e-12 && (p[1].score.value - 1.02).abs() < 1e-12, "{p:?}");
    // Flipped sizes change nothing without a budget.
    let flipped = [crit(100.0, 99.0, 101.0, 2000.0), crit(102.0, 101.0, 103.0, 1000.0)];
    assert_eq!(rank(&flipped, &w, Budgets::default()), p);
    // A 4000-byte budget: 1 + 1000/4000 = 1.25 and 1 + 2000/4000 = 1.5, so the scores are
    // (1 + 1.25) / 2 = 1.125 and (1.02 + 1.5) / 2 = 1.26.
    let p = rank(&items, &w, Budgets { flash: Some(4000), ram: None });
    assert!((p[0].score.value - 1.125).abs() < 1e-12 && (p[1].score.value - 1.26).abs() < 1e-12, "{p:?}");
    assert_eq!(p[1].rank, 2);
    // Flipped under the budget: (1 + 1.5) / 2 = 1.25 against (1.02 + 1.25) / 2 = 1.135:
    // the smaller image now comes first.
    let p = rank(&flipped, &w, Budgets { flash: Some(4000), ram: None });
    assert_eq!(p[0].index, 1);
    assert!((p[0].score.value - 1.135).abs() < 1e-12 && (p[1].score.value - 1.25).abs() < 1e-12, "{p:?}");
}

#[test]
fn a_flash_or_ram_weight_without_its_budget_is_refused_and_the_default_drops_them() {
    let base = opts("nrf52840", "BLE-1M", "1s");
    let e = Request::resolve(&Options { weights: Some("flash=2".into()), ..base.clone() }).unwrap_err();
    assert_eq!(
        e,
        "--weights: flash=2 ranks against a budget: give --flash too (without it the image's size is not a cost)"
    );
    let r = Request::resolve(&base).unwrap();
    assert_eq!((r.weights.flash, r.weights.ram), (0.0, 0.0));
    let r = Request::resolve(&Options { ram: Some("8KiB".into()), ..base.clone() }).unwrap();
    assert_eq!((r.weights.flash, r.weights.ram), (0.0, 1.0));
    let e = Request::resolve(&Options { weights: Some("energy=0,latency=0".into()), ..base }).unwrap_err();
    assert!(e.starts_with("--weights: every weight in use is 0"), "{e}");
}

#[test]
fn bad_input_names_the_option() {
    let check = |o: Options, needle: &str| {
        let e = Request::resolve(&o).unwrap_err();
        assert!(e.starts_with(needle), "{e}");
        assert!(!e.contains('\n'));
    };
    check(opts("uno", "LoRa-SF9", "10m"), "--board");
    check(opts("rp2040", "LoRa-SF10", "10m"), "--radio");
    check(opts("rp2040", "LoRa-SF9", "10"), "--interval");
    check(opts("rp2040", "LoRa-SF9", "25h"), "--interval");
    check(opts("rp2040", "LoRa-SF9", "-1s"), "--interval");
    check(Options { payload: "16 bytes".into(), ..opts("rp2040", "LoRa-SF9", "10m") }, "--payload");
    check(Options { payload: "0B".into(), ..opts("rp2040", "LoRa-SF9", "10m") }, "--payload");
    check(Options { flash: Some("32kb".into()), ..opts("rp2040", "LoRa-SF9", "10m") }, "--flash");
    check(Options { ram: Some("99999999999999KiB".into()), ..opts("rp2040", "LoRa-SF9", "10m") }, "--ram");
    check(Options { lifetime: "10 years".into(), ..opts("rp2040", "LoRa-SF9", "10m") }, "--lifetime");
    check(Options { require: Some("aead".into()), ..opts("rp2040", "LoRa-SF9", "10m") }, "--require");
    check(Options { tag: 100, ..opts("rp2040", "LoRa-SF9", "10m") }, "--tag");
    check(Options { weights: Some("speed=1".into()), ..opts("rp2040", "LoRa-SF9", "10m") }, "--weights");
    check(
        Options { weights: Some("energy=0,flash=0,latency=0,ram=0".into()), ..opts("rp2040", "LoRa-SF9", "10m") },
        "--weights",
    );
    check(Options { security: 0, ..opts("rp2040", "LoRa-SF9", "10m") }, "--security");
    let e = choose(&Options { flash: Some("100B".into()), ..opts("rp2040", "LoRa-SF9", "10m") }, None).unwrap_err();
    assert!(e.starts_with("--flash: no candidate fits 100 B of flash; --flash 2376B admits "), "{e}");
}

#[test]
fn data_tables_refuse_bad_rows() {
    let head = "cipher,status,fips,claimed_bits,constant_time,superseded_by,document,checked,source,claim_source,constant_time_source\n";
    let bad = |row: &str| parse_status(&format!("{head}{row}\n"), "f").unwrap_err();
    assert_eq!(
        bad("X,great,no,128,yes,,d,c,s,s,s"),
        "f: line 2: status 'great' is not one of standard, portfolio, finalist, provisional, none"
    );
    assert_eq!(bad("X,none,no,128,yes,,d,c,,s,s"), "f: line 2: no source");
    assert_eq!(bad("X,none,no,128,yes,,d,c,s,,s"), "f: line 2: no claim_source");
    assert_eq!(bad("X,none,no,128,yes,,d,c,s,s,"), "f: line 2: no constant_time_source");
    assert_eq!(bad("X,none,maybe,128,yes,,d,c,s,s,s"), "f: line 2: fips 'maybe' is not yes or no");
    assert_eq!(bad("X,none,no,128,sometimes,,d,c,s,s,s"), "f: line 2: constant_time 'sometimes' is not yes or no");
    assert_eq!(bad("X,none,no,0,yes,,d,c,s,s,s"), "f: line 2: claimed_bits '0' is not a number of bits in 1..=512");
    assert_eq!(bad("X,none,no,1e3,yes,,d,c,s,s,s"), "f: line 2: claimed_bits '1e3' is not a number of bits in 1..=512");
    assert!(bad("X,none,no,128,yes,,d,c,s,s,s\nX,none,no,128,yes,,d,c,s,s,s").contains("appears twice"));
    let ok = parse_status(&format!("{head}X,portfolio,no,120,no,Y,d,c,s,s,s\n"), "f").unwrap();
    assert_eq!((ok[0].claimed_bits, ok[0].constant_time, ok[0].superseded_by.as_deref()), (120, false, Some("Y")));
    assert!(parse_sizes(
        "cipher,implementation,image,target,flash_bytes,ram_static_bytes,stack_bytes\na,b,c,d,1,x,3\n",
        "f"
    )
    .unwrap_err()
    .contains("ram_static_bytes 'x'"));
    assert!(parse_errors("timing_model,error_pct,source\nm0plus,-1,s\n", "f").is_err());
    // Every candidate the link carries on a board has a status row.
    let data = Data::builtin();
    for f in catalogue_facts(&data) {
        if f.link.is_some() || data.cycles.iter().any(|c| c.cipher == f.cipher) {
            assert!(data.status.iter().any(|s| s.cipher == f.cipher), "{} has no status row", f.cipher);
        }
    }
}

#[test]
fn robustness_moves_one_step_and_reports_the_first_place() {
    let req = Request::resolve(&opts("rp2040", "LoRa-SF9", "10m")).unwrap();
    let data = Data::builtin();
    let facts = catalogue_facts(&data);
    let rows = robustness(&req, &data, &facts, "none/such");
    let settings: Vec<&str> = rows.iter().map(|r| r.setting.as_str()).collect();
    assert_eq!(
        settings[..4],
        ["interval ÷ 2 = 300 s", "interval × 2 = 1200 s", "payload ÷ 2 = 8 B", "payload × 2 = 32 B"]
    );
    // LoRa SF9 sits between SF12 (slower) and SF7 (faster) for this frame.
    assert_eq!(settings[4..], ["radio one step slower = LoRa-SF12", "radio one step faster = LoRa-SF7"]);
    assert!(rows.iter().all(|r| !r.same && r.top.is_some()));
}

// A report that cannot end before the next one, and every float option's range (issue 36).

#[test]
fn a_report_longer_than_the_interval_is_refused_naming_both() {
    // Hand computation (the SX1276 formula, as in energy_of_ascon_on_rp2040_lora_sf9_by_hand):
    // SF12, 125 kHz: T_sym = 4096 / 125,000 s = 32.768 ms, low data rate optimisation on.
    // Every default candidate has a 16-byte tag; the compact header of LoRaWAN is 1 B:
    // 1 + 262,112 + 16 = 262,129 B = 5,139 packets of 51 B + one of 40 B, each with 13 B of
    // LoRaWAN overhead.
    // 64 B: (512 − 48 + 28 + 16) / 40 = 12.7 → 13 × 5 + 8 = 73 + 12.25 = 85.25 symbols = 2,793.472 ms;
    // 53 B: (424 − 48 + 28 + 16) / 40 = 10.5 → 11 × 5 + 8 = 63 + 12.25 = 75.25 symbols = 2,465.792 ms;
    // 5,139 × 2,793.472 + 2,465.792 = 14,358,118.4 ms: 14,358.118 s (4 h) in 5,140 packets.
    let o = Options { payload: "262112B".into(), ..opts("rp2040", "LoRa-SF12", "200ms") };
    let e = choose(&o, None).unwrap_err();
    assert!(e.starts_with("--interval: 200 ms is shorter than the quickest report: "), "{e}");
    assert!(e.contains("14358.118 s on air in 5140 packets of LoRa-SF12 for the 262129-byte frame"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    // With --tag 64 the 8-byte tags come in: 1 + 262,112 + 8 = 262,121 B = 5,139 packets of
    // 51 B + one of 32 B; 45 B: (360 − 48 + 28 + 16) / 40 = 8.9 → 9 × 5 + 8 = 53 + 12.25 =
    // 65.25 symbols = 2,138.112 ms; 5,139 × 2,793.472 + 2,138.112 = 14,357,790.72 ms.
    let o = Options { payload: "262112B".into(), ..wide("rp2040", "LoRa-SF12", "200ms") };
    let e = choose(&o, None).unwrap_err();
    assert!(e.contains("14357.791 s on air in 5140 packets of LoRa-SF12 for the 262121-byte frame"), "{e}");
}

/// A 64-bit-tag candidate states its forgery bound: 100 days at one message per 10 minutes
/// is 14,400 messages; 14,400 / 2^64 = 7.8e-16, the default budget 2^16 / 2^64 = 2^-48 =
/// 3.6e-15. A 128-bit tag gets no such line.
#[test]
fn a_64_bit_tag_candidate_states_its_forgery_bound() {
    let ev = eval(&Options { lifetime: "100d".into(), ..wide("rp2040", "LoRa-SF9", "10m") });
    let (mut short, mut long) = (0, 0);
    for c in ev.candidates.iter().filter(|c| c.passed) {
        let line = c.reasons.iter().find(|r| r.starts_with("forgery bound"));
        match c.figures.as_ref().unwrap().tag_bytes {
            8 => {
                let l = line.unwrap_or_else(|| panic!("{}: {:?}", c.id, c.reasons));
                assert!(l.contains("(q = 14400): 7.8e-16") && l.contains("65536): 3.6e-15"), "{l}");
                assert!(c.labels.contains(&"64-BIT TAG".to_string()), "{:?}", c.labels);
                short += 1;
            }
            _ => {
                assert!(line.is_none(), "{}: {:?}", c.id, c.reasons);
                long += 1;
            }
        }
    }
    assert!(short > 0 && long > 0, "{short} 64-bit and {long} 128-bit candidates");
}

#[test]
fn the_schedule_removes_exactly_the_reports_longer_than_the_interval() {
    // LoRa SF9 (T_sym 4.096 ms) with LoRaWAN's 1-byte compact header, 16 B: an 8-byte tag
    // gives a 25-byte frame in one 38-byte packet: (304 − 36 + 28 + 16) / 36 = 8.67 → 9 × 5
    // + 8 = 53 + 12.25 = 65.25 symbols = 267.264 ms; a 16-byte tag 33 → 46 B: 308.224 ms. The
    // crypto adds under 10 ms on the RP2040 (MICKEY-128 2.0, the slowest: 1,029 µJ at 0.125 W
    // = 8.2 ms), so at 300 ms the 8-byte tags fit and every 16-byte tag does not.
    let free = eval(&wide("rp2040", "LoRa-SF9", "10m"));
    let ev = eval(&wide("rp2040", "LoRa-SF9", "300ms"));
    let (mut fit, mut late) = (0, 0);
    for b in free.candidates.iter().filter(|c| c.passed) {
        let c = by(&ev, &b.id);
        match b.figures.as_ref().unwrap().tag_bytes {
            8 => {
                assert!(c.passed, "{}: {:?}", c.id, c.reasons);
                fit += 1;
            }
            16 => {
                assert_eq!(c.removed_by, [Filter::Schedule], "{}", c.id);
                assert!(
                    c.reasons[0].contains("308.224 ms on air in 1 packet of LoRa-SF9 for the 33-byte frame")
                        && c.reasons[0].ends_with("longer than --interval 300 ms"),
                    "{:?}",
                    c.reasons
                );
                late += 1;
            }
            t => panic!("{}: a {t}-byte tag", b.id),
        }
    }
    assert!(fit >= 2 && late >= 5, "{fit} fit, {late} late");
    // The crypto counts too: MICKEY-128 2.0 on the ESP32-C3 needs about a second for a
    // 28,800-byte frame (74 mJ at 0.066 W), far above the 4.4 ms on air over Wi-Fi.
    let cam = eval(&Options { payload: "28800B".into(), ..wide("esp32c3", "WiFi-n-MCS7", "200ms") });
    let m = by(&cam, "MICKEY-128-2.0/rust");
    assert_eq!(m.removed_by, [Filter::Schedule], "{:?}", m.reasons);
    assert!(m.figures.as_ref().unwrap().air_time_ms < 5.0);
    // One step slower is BLE-1M: a 28,831-byte frame is 118 packets of 244 B + one of 39 B,
    // each + 17 B at 1 Mb/s + 140 µs: 118 × 2,228 µs + 588 µs = 263.5 ms on air, above
    // 200 ms for every candidate, so nothing passes there and the row says so.
    let o = Options { payload: "28800B".into(), ..opts("esp32c3", "WiFi-n-MCS7", "200ms") };
    let rep = choose(&o, None).unwrap();
    let slower = rep.robustness.iter().find(|r| r.setting == "radio one step slower = BLE-1M").unwrap();
    assert!(slower.top.is_none() && slower.top_group.is_empty() && !slower.same && rep.flips);
    assert!(text(&rep).lines().any(|l| l.contains("= BLE-1M") && l.contains("none passes")), "{}", text(&rep));
}

#[test]
fn intervals_and_lifetimes_are_bounded_and_read_with_exponents() {
    let base = opts("nrf52840", "BLE-1M", "1s");
    let err = |o: Options| Request::resolve(&o).unwrap_err();
    for bad in ["0.0000001ms", "0.999ms", "1e-300s", "24.001h", "2d", "1e300s", "NaNs", "infs", "-1s", "0s"] {
        let e = err(Options { interval: bad.into(), ..base.clone() });
        assert_eq!(e, format!("--interval: '{bad}' is not between 1 ms and 24 h"));
    }
    let interval = |v: &str| Request::resolve(&Options { interval: v.into(), ..base.clone() }).unwrap().interval_s;
    assert_eq!(interval("1ms"), 0.001);
    assert_eq!(interval("24h"), 86_400.0);
    assert_eq!(interval("1e3ms"), 1.0);
    assert_eq!(interval("300ms"), 0.3);
    assert_eq!(interval("1.5min"), 90.0);
    for bad in ["1e9y", "101y", "0.5s", "1e-9s", "-1y"] {
        let e = err(Options { lifetime: bad.into(), ..base.clone() });
        assert_eq!(e, format!("--lifetime: '{bad}' is not between 1 s and 100 y"));
    }
    let life = |v: &str| Request::resolve(&Options { lifetime: v.into(), ..base.clone() }).unwrap().lifetime_s;
    assert_eq!(life("1s"), 1.0);
    assert_eq!(life("100y"), 100.0 * 365.25 * 86_400.0);
    assert_eq!(
        err(Options { interval: "10".into(), ..base.clone() }),
        "--interval: '10' needs a unit (ms, s, m, h, d, y)"
    );
    let e = err(Options { lifetime: "10 years".into(), ..base.clone() });
    assert!(e.starts_with("--lifetime: '10 years' is not a duration"), "{e}");
}

#[test]
fn battery_options_are_bounded_and_echoed_short() {
    let base = opts("nrf52840", "BLE-1M", "1s");
    let with = |mah: f64, v: f64| Request::resolve(&Options { battery_mah: mah, battery_v: v, ..base.clone() });
    for (mah, v, want) in [
        (1e308, 3.0, "--battery-mah: 1e308 is not between 1 and 1000000 mAh"),
        (0.5, 3.0, "--battery-mah: 0.5 is not between 1 and 1000000 mAh"),
        (1_000_001.0, 3.0, "--battery-mah: 1.000001e6 is not between 1 and 1000000 mAh"),
        (f64::NAN, 3.0, "--battery-mah: NaN is not between 1 and 1000000 mAh"),
        (2400.0, 1e-320, "--battery-v: 1e-320 is not between 0.5 and 60 V"),
        (2400.0, 0.0, "--battery-v: 0 is not between 0.5 and 60 V"),
        (2400.0, f64::INFINITY, "--battery-v: inf is not between 0.5 and 60 V"),
        (2400.0, -3.0, "--battery-v: -3 is not between 0.5 and 60 V"),
        (2400.0, 60.5, "--battery-v: 60.5 is not between 0.5 and 60 V"),
    ] {
        assert_eq!(with(mah, v).unwrap_err(), want);
    }
    // The ends are in range. data/board-power.csv: the nRF52840 sleeps at 1.5 µA × 3.0 V
    // = 4.5 µW, which is 9 µA from a 0.5 V battery.
    for (mah, v) in [(1.0, 0.5), (1e6, 60.0)] {
        let r = with(mah, v).unwrap();
        assert!(r.battery.sleep_ua.is_finite() && r.battery.sleep_ua > 0.0);
    }
    assert!((with(2400.0, 0.5).unwrap().battery.sleep_ua - 9.0).abs() < 1e-9);
}

#[test]
fn weights_name_each_criterion_once_within_range() {
    let base = opts("nrf52840", "BLE-1M", "1s");
    let w = |s: &str| Request::resolve(&Options { weights: Some(s.into()), ..base.clone() });
    assert_eq!(w("energy=1,energy=2").unwrap_err(), "--weights: 'energy' is given twice (name each criterion once)");
    assert_eq!(
        w("energy=1e-9").unwrap_err(),
        "--weights: 'energy=1e-9': the weight is not 0 or a number in 0.001..=1000"
    );
    assert!(w("energy=1001").is_err() && w("energy=inf").is_err() && w("energy=NaN").is_err());
    let r = Request::resolve(&Options {
        weights: Some("energy=0.001,flash=1000,ram=0".into()),
        flash: Some("64KiB".into()),
        ..base.clone()
    })
    .unwrap();
    assert_eq!((r.weights.energy, r.weights.flash, r.weights.ram, r.weights.latency), (0.001, 1000.0, 0.0, 1.0));
}

#[test]
fn errors_echo_a_short_prefix_of_the_value_on_one_line() {
    let base = opts("nrf52840", "BLE-1M", "1s");
    let long = "9".repeat(400);
    let cases = [
        Options { payload: format!("{long}B"), ..base.clone() },
        Options { interval: format!("{long}s"), ..base.clone() },
        Options { lifetime: format!("{long}y"), ..base.clone() },
        Options { flash: Some(format!("{long}B")), ..base.clone() },
        Options { weights: Some(format!("energy={long}")), ..base.clone() },
        Options { weights: Some(format!("{long}=1")), ..base.clone() },
        Options { require: Some(long.clone()), ..base.clone() },
        Options { board: long.clone(), ..base.clone() },
        Options { radio: long.clone(), ..base.clone() },
        Options { chemistry: long.clone(), ..base.clone() },
        Options { board: "rp\n2040\u{1b}[2J".into(), ..base.clone() },
    ];
    for o in cases {
        let e = Request::resolve(&o).unwrap_err();
        assert!(e.starts_with("--") && !e.contains('\n') && !e.contains('\u{1b}'), "{e:?}");
        assert!(!e.contains(&"9".repeat(30)), "{e}");
    }
}

/// Paths of the JSON (array elements as `[]`) where docs/choose.md's schema allows null.
const NULLABLE: &[&str] = &[
    "request.flash_bytes",
    "request.ram_bytes",
    "candidates[].link_id",
    "candidates[].superseded_by",
    "candidates[].figures",
    "candidates[].figures.lifetime_shortfall",
    "candidates[].rank",
    "candidates[].score",
    "robustness[].top",
    "handover.dataset",
];

/// Every null outside [`NULLABLE`] (serde_json writes NaN and infinity as null).
fn nulls(v: &serde_json::Value, path: &str, found: &mut Vec<String>) {
    match v {
        serde_json::Value::Null if !NULLABLE.contains(&path) => found.push(path.to_string()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| nulls(x, &format!("{path}[]"), found)),
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                // sources are text keyed by name: no number lives below
                nulls(x, &p, found);
            }
        }
        _ => {}
    }
}

#[test]
fn json_holds_no_null_where_the_schema_says_number_at_the_ends_of_every_range() {
    let mut answers = 0;
    for board in lwcbench_engine::board::boards().iter().map(|b| b.id.as_str()) {
        for radio in ["LoRa-SF7", "LoRa-SF12", "BLE-1M", "802.15.4", "WiFi-n-MCS7"] {
            for (interval, payload, mah, v, life) in [
                ("1ms", "1B", 1.0, 0.5, "1s"),
                ("24h", "262112B", 1e6, 60.0, "100y"),
                ("10m", "16B", 2400.0, 3.0, "10y"),
                ("1s", "1KiB", 1.0, 60.0, "1d"),
            ] {
                let o = Options {
                    payload: payload.into(),
                    battery_mah: mah,
                    battery_v: v,
                    lifetime: life.into(),
                    weights: Some("energy=1,battery=1,latency=0.001,flash=1000,ram=0".into()),
                    flash: Some("1MiB".into()),
                    // the ESP8266's one candidate with an LX106 image is the provisional C++ DRACO
                    allow_provisional: board == "esp8266",
                    require: (board == "esp8266").then(|| "any".into()),
                    ..opts(board, radio, interval)
                };
                match choose(&o, None) {
                    Ok(rep) => {
                        let mut found = Vec::new();
                        nulls(&serde_json::to_value(&rep).unwrap(), "", &mut found);
                        assert!(found.is_empty(), "{board} {radio} {interval} {payload}: null at {found:?}");
                        answers += 1;
                    }
                    Err(e) => assert!(e.starts_with("--interval: ") && !e.contains('\n'), "{e}"),
                }
            }
        }
    }
    assert!(answers >= 60, "{answers} answers");
}
