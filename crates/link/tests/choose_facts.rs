//! `lwcbench choose` lives in its own crate and prices the link's frames from
//! `lwcbench_choose::link_facts`; these tests keep those facts equal to the link's own constants
//! and suites, so that a change to the frame or to a suite cannot leave `choose` pricing another.
use lwcbench_choose::link_facts as facts;
use lwcbench_link::wire::{compact, frame, gate, suite};

#[test]
fn frame_and_gateway_constants_are_the_links() {
    assert_eq!(facts::HEADER_LEN, frame::HEADER_LEN);
    assert_eq!(facts::COMPACT_HEADER_LEN, compact::COMPACT_HEADER_LEN);
    assert_eq!(facts::COMPACT_AAD_LEN, compact::COMPACT_AAD_LEN);
    assert_eq!(facts::LORAWAN_CARRIER, compact::LORAWAN_LABEL);
    assert_eq!(facts::MAX_COUNTER, frame::MAX_COUNTER);
    assert_eq!(facts::MAX_FRAME, frame::MAX_FRAME);
    assert_eq!(facts::POLY_TAG, suite::POLY_TAG);
    assert_eq!(facts::STREAM_SKIP, suite::STREAM_SKIP);
    assert_eq!(facts::RANDOM_NONCE_CIPHERS, suite::RANDOM_NONCE_CIPHERS);
    assert_eq!(facts::MIN_KEY_BITS as usize, suite::MIN_KEY_BITS);
    assert_eq!(facts::MAX_INTERVAL_S, lwcbench_link::input::MAX_INTERVAL_S);
    for tag in 0..=32 {
        assert_eq!(
            facts::default_max_failed_tags(tag),
            lwcbench_link::gateway::checks::default_max_failed_tags(tag),
            "{tag}-byte tag"
        );
    }
}

#[test]
fn every_suite_is_priced_as_the_link_builds_it() {
    let link = suite::offered();
    let mine = facts::suites();
    assert_eq!(mine.len(), link.len());
    for (m, s) in mine.iter().zip(&link) {
        assert_eq!(m.id, s.id);
        assert_eq!(m.name, s.name());
        assert_eq!(m.cipher, s.entry.info.name);
        let kind = match s.kind {
            suite::Kind::Aead => facts::Kind::Aead,
            suite::Kind::StreamPoly1305 => facts::Kind::StreamPoly1305,
        };
        assert_eq!(m.kind, kind, "{}", m.name);
        assert_eq!(m.tag_bytes, s.tag_len(false), "{}", m.name);
        assert_eq!(m.random_nonce_bytes, s.random_nonce_len(), "{}", m.name);
        assert_eq!(m.key_bits as usize, s.key_len() * 8, "{}", m.name);
        assert_eq!(m.gate_flags(), gate::flags(s), "{}", m.name);
    }
}

/// The frame `choose` prices for a LoRa radio is the one its deploy command makes the link send:
/// the link sealing a reading with `--carrier lorawan` (the options the hand-over prints) gives
/// a FRMPayload of exactly the priced size.
#[test]
fn the_priced_lorawan_frame_is_the_one_the_link_seals() {
    let radio = lwcbench_data::radio::builtin().into_iter().find(|r| r.name == "LoRa-SF9").unwrap();
    let carrier = facts::Carrier::of_radio(&radio);
    assert_eq!(carrier, facts::Carrier::Lorawan);
    let args = carrier.link_args();
    assert_eq!(args, ["--transport", "udp", "--carrier", "lorawan"]);
    let parsed = compact::Carrier::parse(args[3], None, None, None, args[1]).unwrap().unwrap();
    let m = lwcbench_link::wire::keys::MasterKey::from_bytes([7; 32]);
    for s in suite::offered().iter().filter(|s| s.tag_len(false) > 0 && s.id <= compact::MAX_COMPACT_CIPHER) {
        let priced = facts::suites().into_iter().find(|f| f.id == s.id).unwrap();
        let mut k = parsed.keyed(s, &m, 0).unwrap();
        let mut out = Vec::new();
        compact::seal(&mut k, 0, parsed.counter(3), &[0x55; 12], &mut out).unwrap();
        assert_eq!(out.len(), carrier.header_len() + priced.random_nonce_bytes + 12 + priced.tag_bytes, "{}", s.name());
    }
    let own = lwcbench_data::radio::builtin().into_iter().find(|r| r.name == "BLE-1M").unwrap();
    assert_eq!(facts::Carrier::of_radio(&own).header_len(), frame::HEADER_LEN);
    assert!(facts::Carrier::of_radio(&own).link_args().is_empty());
}
