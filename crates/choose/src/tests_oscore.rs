//! `--framing oscore|auto`, `--edhoc` and `--cipher`: expected values are counted by hand (RFC
//! 7252, RFC 8613) or read from the data files' text by column position, not from the loaders.
use crate::options::Options;
use crate::oscore::aead::{aeads, Framing};
use crate::report::choose;

/// The nano33ble over 802.15.4, one 16-byte reading a second for 301 s: 301 reports, so the
/// last sequence number is 300 (a two-byte Partial IV).
fn nano(framing: &str) -> Options {
    Options {
        board: "nano33ble".into(),
        radio: "802.15.4".into(),
        interval: "1s".into(),
        payload: "16B".into(),
        lifetime: "301s".into(),
        tag: 64,
        framing: Some(framing.into()),
        ..Options::default()
    }
}

/// The warm (init, 16-byte, 128-byte) cycles of a row of data/emulated-cycles.csv, by column
/// position in the file's text.
fn csv_cycles(board: &str, cipher: &str) -> [f64; 6] {
    let text = include_str!("../../../data/emulated-cycles.csv");
    let row: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with(&format!("{board},{cipher},rustcrypto,")))
        .expect("the row")
        .split(',')
        .collect();
    std::array::from_fn(|i| row[9 + i].parse().unwrap())
}

/// Each OSCORE AEAD maps to an image whose catalogue entry has the same key, nonce and tag
/// lengths as the OSCORE crate's algorithm: the mapping cannot price another construction.
#[test]
fn every_oscore_aead_maps_to_an_image_of_the_same_construction() {
    let reg = lwcbench_catalog::registry();
    assert_eq!(aeads().len(), 4, "data/oscore-aeads.csv parses, one row per algorithm");
    for a in aeads() {
        let e = reg
            .iter()
            .find(|e| e.info.name == a.image_cipher && e.info.implementation == "rustcrypto")
            .unwrap_or_else(|| panic!("{}: no catalogue entry {}", a.algorithm, a.image_cipher));
        assert_eq!(e.info.iv_bytes(), a.alg.nonce_len(), "{} nonce", a.algorithm);
        assert_eq!(e.info.tag_bytes(), a.alg.tag_len(), "{} tag", a.algorithm);
        assert_eq!(usize::from(e.info.key_bits), a.alg.key_len() * 8, "{} key", a.algorithm);
    }
    // A row that names Ascon is refused with the registry reason, a wrong identifier by line.
    let head = "algorithm,cose_id,image_cipher,why,link_cipher,status,source\n";
    let e = crate::oscore::aead::parse_aeads(&format!("{head}Ascon-AEAD128,-1,Ascon-AEAD128,w,l,sourced,s\n"), "f")
        .unwrap_err();
    assert!(e.starts_with("f: line 2: ") && e.contains("IANA COSE Algorithms registry"), "{e}");
    let e = crate::oscore::aead::parse_aeads(&format!("{head}A128GCM,3,AES-128-GCM,w,l,sourced,s\n"), "f").unwrap_err();
    assert_eq!(e, "f: line 2: A128GCM is COSE algorithm 1, not 3");
}

/// The OSCORE request priced is the one counted by hand for AES-CCM-16-64-128 at sequence
/// number 300 with the 1-byte kid: 4 + 4 + 5 + 1 + 22 + 8 = 44 bytes; its crypto is the CCM*-8
/// image's encrypt over the 22-byte AAD + 22-byte plaintext (44 bytes): 16 + 28 bytes on the line
/// through the warm 16- and 128-byte counts, plus one cold start (the nRF52840's fitted flash
/// cache: cold init and message line minus the warm ones) shared by the 301 reports.
#[test]
fn the_oscore_request_is_priced_with_the_hand_counted_bytes() {
    let rep = choose(&Options { board: "nrf52840".into(), ..nano("oscore") }, None).unwrap();
    let c = rep.candidate("OSCORE AES-CCM-16-64-128").expect("a candidate");
    assert!(c.passed, "{:?}", c.reasons);
    let g = c.figures.as_ref().unwrap();
    assert_eq!((g.frame_bytes, g.tag_bytes, g.packets), (44, 8, 1));
    let [ci, c16, c128, wi, w16, w128] = csv_cycles("nrf52840", "AES-128-CCM*-8");
    let (cold, warm) = (c16 + 28.0 * (c128 - c16) / 112.0, w16 + 28.0 * (w128 - w16) / 112.0);
    assert!(ci + cold > wi + warm, "the cache makes the first message dearer");
    let want = warm + ((ci - wi) + (cold - warm)) / 301.0;
    assert!((g.crypto_cycles - want).abs() < 1e-6, "{} vs {want}", g.crypto_cycles);
    // The 16-byte-tag AEADs: 8 bytes more.
    for id in ["OSCORE AES-CCM-16-128-128", "OSCORE A128GCM", "OSCORE ChaCha20/Poly1305"] {
        assert_eq!(rep.candidate(id).and_then(|c| c.figures.as_ref()).map(|g| g.frame_bytes), Some(52), "{id}");
    }
    // Only OSCORE candidates under --framing oscore; the link's AES-128-CCM is not one.
    assert!(rep.candidates.iter().all(|c| c.id.starts_with("OSCORE ")));
    assert!(g.sources["radio"].contains("44-byte OSCORE request"), "{}", g.sources["radio"]);
    // The short tag's bound, without the link gateway's failed-tag budget it does not have.
    let bound = c.reasons.iter().find(|r| r.starts_with("forgery bound (64-bit tag)")).unwrap();
    assert!(bound.contains("keeps no failed-tag budget") && !bound.contains("--max-failed-tags"), "{bound}");
}

/// On LoRa SF12 (51-byte packets) a 32-byte reading fits one packet in the link's LoRaWAN frame
/// (1-byte compact header + 32 + 16-byte tag = 49) but takes two under OSCORE: 4 + 4 + OSCORE
/// option (1 + 1 + 3-byte Partial IV at sequence number 87,659 + 1) + 1 + (1 + 2 + 2 + 1 + 32)
/// + 8 = 61 bytes. `--framing auto` shows the split and ranks the one-packet frame first.
#[test]
fn lora_sf12_splits_the_oscore_request_but_not_the_link_frame() {
    let o = Options {
        board: "rp2040".into(),
        radio: "LoRa-SF12".into(),
        interval: "1h".into(),
        payload: "32B".into(),
        tag: 64,
        framing: Some("auto".into()),
        ..Options::default()
    };
    let rep = choose(&o, None).unwrap();
    let os = rep.candidate("OSCORE AES-CCM-16-64-128").and_then(|c| c.figures.as_ref()).unwrap();
    assert_eq!((os.frame_bytes, os.packets), (61, 2));
    let link = rep.candidate("AES-128-CCM/rustcrypto").and_then(|c| c.figures.as_ref()).unwrap();
    assert_eq!((link.frame_bytes, link.packets), (49, 1));
    let v = rep.framing_verdict.as_ref().expect("auto says which framing wins");
    assert_eq!(v.winner, "link", "{}", v.line);
    let text = crate::render::text::text(&rep);
    assert!(text.contains("framing:  --framing auto: the link frame wins: "), "{text}");
    assert!(text.contains("B in 2 packets"), "the OSCORE split is shown: {text}");
    assert!(crate::render::html::html(&rep).contains("<p>Framing (--framing auto): the link frame wins: "));
    assert!(!rep.chosen.starts_with("OSCORE "));
}

/// `--cipher Ascon-AEAD128` under `--framing oscore` is refused with the COSE registry reason,
/// as `lwcbench link --protocol oscore` refuses it; under the link frame it is a candidate.
#[test]
fn ascon_under_oscore_is_refused_with_the_registry_reason() {
    let o = Options { cipher: Some("Ascon-AEAD128".into()), ..nano("oscore") };
    let e = choose(&o, None).unwrap_err();
    assert!(e.starts_with("--cipher with --framing oscore: "), "{e}");
    assert!(e.contains("no identifier in the IANA COSE Algorithms registry"), "{e}");
    let rep = choose(&Options { framing: None, tag: 128, ..o }, None).unwrap();
    assert!(rep.candidates.iter().all(|c| c.cipher == "Ascon-AEAD128"));
    // --cipher names the OSCORE AEAD by its COSE name.
    let rep = choose(&Options { cipher: Some("A128GCM".into()), ..nano("oscore") }, None).unwrap();
    assert_eq!(rep.chosen, "OSCORE A128GCM");
    assert!(choose(&Options { cipher: Some("NoSuch".into()), ..nano("link") }, None)
        .unwrap_err()
        .starts_with("--cipher: 'NoSuch' names no candidate under --framing link on nano33ble"));
}

/// The deploy command of an OSCORE choice is a `lwcbench link --protocol oscore` command with
/// the COSE name (crates/cli/tests/choose.rs runs it).
#[test]
fn an_oscore_choice_deploys_with_link_protocol_oscore() {
    let rep = choose(&Options { cipher: Some("AES-CCM-16-64-128".into()), ..nano("oscore") }, None).unwrap();
    let w = &rep.handover.link_command;
    assert_eq!(w[..6], ["lwcbench", "link", "--protocol", "oscore", "--cipher", "AES-CCM-16-64-128"]);
    assert!(!w.iter().any(|x| x == "--carrier"));
    assert_eq!(rep.framing, Framing::Oscore);
}

/// `--edhoc`: the handshake from data/edhoc-cost.csv's text (4 scalar multiplications × the
/// board's emulated P-256 ECDH), spread over the reports; suite 2 establishes AES-CCM-16-64-128
/// contexts only; a board without emulated P-256 cycles and the link frame are refused.
#[test]
fn edhoc_is_a_one_time_cost_with_its_source() {
    let base = nano("oscore");
    let with = choose(&Options { edhoc: true, ..base.clone() }, None).unwrap();
    let e = with.edhoc.as_ref().unwrap();
    assert_eq!(e.messages_bytes, [37, 45, 19, 9]);
    assert_eq!((e.round_trips, e.scalar_mults, e.sent_bytes), (2, 4, 56));
    assert_eq!(e.cycles, 4.0 * 8_136_867.0);
    let without = choose(&base, None).unwrap();
    let id = "OSCORE AES-CCM-16-64-128";
    let (a, b) = (
        with.candidate(id).unwrap().figures.as_ref().unwrap().crypto_uj.value,
        without.candidate(id).unwrap().figures.as_ref().unwrap().crypto_uj.value,
    );
    assert!((a - b - e.energy_uj / 301.0).abs() < 1e-9, "{a} - {b} vs {}", e.energy_uj / 301.0);
    let gcm = with.candidate("OSCORE A128GCM").unwrap();
    assert!(gcm.removed_by.contains(&crate::filter::Filter::Handshake), "{:?}", gcm.reasons);
    assert!(crate::render::text::text(&with).contains("edhoc:    once per device: 110 B in 4 messages"));
    assert!(crate::render::html::html(&with).contains("<p>EDHOC: once per device: 110 B in 4 messages"));
    // (the ESP8266: RustCrypto's p256 has no LX106 build)
    let e = choose(&Options { edhoc: true, board: "esp8266".into(), ..base.clone() }, None).unwrap_err();
    assert!(e.starts_with("--edhoc: no emulated P-256 ECDH for esp8266"), "{e}");
    let e = choose(&Options { edhoc: true, framing: None, ..base }, None).unwrap_err();
    assert!(e.starts_with("--edhoc: EDHOC establishes OSCORE contexts"), "{e}");
}

/// Without `--framing` the candidates are the link frame's, as before OSCORE was offered.
#[test]
fn the_default_framing_is_the_link_frame() {
    let rep = choose(&Options { framing: None, ..nano("link") }, None).unwrap();
    assert_eq!(rep.framing, Framing::Link);
    assert!(rep.candidates.iter().all(|c| !c.id.starts_with("OSCORE ")));
    assert!(rep.framing_verdict.is_none());
    let e = choose(&nano("coap"), None).unwrap_err();
    assert_eq!(e, "--framing: 'coap' is not one of link, oscore, auto");
}

/// The boards of docs/protocols.md's per-message tables.
const DOC_BOARDS: [&str; 2] = ["nano33ble", "rp2040"];

/// docs/protocols.md with each board's table between its markers regenerated.
fn protocols_doc_regenerated(doc: &str) -> String {
    let mut out = doc.to_string();
    for b in DOC_BOARDS {
        let begin = format!("<!-- oscore-table {b}: generated by crates/choose (tests_oscore.rs) -->\n");
        let end = "<!-- end oscore-table -->";
        let i =
            out.find(&begin).unwrap_or_else(|| panic!("docs/protocols.md lacks the {b} table's marker")) + begin.len();
        let j = i + out[i..].find(end).expect("the table's end marker");
        out.replace_range(i..j, &crate::oscore::overhead_table(b, 16, 300).unwrap());
    }
    out
}

/// docs/protocols.md's per-board tables are this build's data (`LWCBENCH_BLESS=1` rewrites
/// them): a change to the cycles, the images or the request's shape cannot leave them stale.
#[test]
fn docs_protocols_tables_are_this_builds_data() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/protocols.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let fresh = protocols_doc_regenerated(&doc);
    if std::env::var_os("LWCBENCH_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(path, &fresh).unwrap();
        return;
    }
    assert!(fresh == doc, "docs/protocols.md's OSCORE tables are stale: rerun with LWCBENCH_BLESS=1");
    // The table's 16-byte-reading request at a 2-byte Partial IV is the hand count of
    // crates/oscore/tests/overhead.rs (44 B), and the link frame 16 + 16 + 16 = 48 B.
    let t = crate::oscore::overhead_table("nano33ble", 16, 300).unwrap();
    assert!(t.contains("| AES-CCM-16-64-128 | rc_aes128_ccm_star8 | 44 |"), "{t}");
    assert!(t.contains("| AES-128-CCM/rustcrypto | 48 |"), "{t}");
}

/// A reading whose OSCORE request exceeds a UDP datagram is out with that reason (not "no
/// image"); the link frame, which carries up to 256 KiB, still ranks under `--framing auto`.
#[test]
fn an_oscore_request_larger_than_a_datagram_is_out_with_the_reason() {
    let o = Options { radio: "WiFi-n-MCS7".into(), interval: "10s".into(), payload: "64KiB".into(), ..nano("auto") };
    let rep = choose(&o, None).unwrap();
    let c = rep.candidate("OSCORE A128GCM").unwrap();
    assert!(!c.passed && c.reasons[0].contains("more than a UDP datagram holds"), "{:?}", c.reasons);
    assert!(!rep.chosen.starts_with("OSCORE "));
    // Under OSCORE alone: the option, one line.
    let e = choose(&Options { framing: Some("oscore".into()), ..o }, None).unwrap_err();
    assert!(e.starts_with("--payload: '64KiB' under --framing oscore: ") && e.contains("UDP datagram"), "{e}");
}
