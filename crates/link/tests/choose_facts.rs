//! `lwcbench choose` lives in its own crate and prices the link's frames from
//! `lwcbench_choose::link_facts`; these tests keep those facts equal to the link's own constants
//! and suites, so that a change to the frame or to a suite cannot leave `choose` pricing another.
use lwcbench_choose::link_facts as facts;
use lwcbench_link::wire::{frame, gate, suite};

#[test]
fn frame_and_gateway_constants_are_the_links() {
    assert_eq!(facts::HEADER_LEN, frame::HEADER_LEN);
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
