//! Messages that must be refused, each for its own reason (RFC 8613 §8.2, §8.4): altered,
//! replayed, out of the replay window, for another context, bound to another request,
//! malformed. The replay window moves only for messages that verify.
// The helpers outside #[test] functions panic on bad input too: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use lwcbench_oscore::coap::{mtype, opt, Message};
use lwcbench_oscore::{
    protect_request, protect_response, unprotect_request, unprotect_response, Algorithm, Error, MemorySequence,
    ReplayWindow, RequestBinding, SecurityContext, SecurityParams, MAX_SEQ,
};
use proptest::prelude::*;

fn ctx(sender: &[u8], recipient: &[u8], id_context: Option<&[u8]>) -> SecurityContext {
    SecurityContext::derive(&SecurityParams {
        alg: Algorithm::AesCcm16_64_128,
        master_secret: &[0x11; 16],
        master_salt: b"salt",
        id_context,
        sender_id: sender,
        recipient_id: recipient,
    })
    .unwrap()
}

fn reading(n: u8) -> Message {
    let mut m = Message::new(mtype::CON, 0x02, 0x1234, &[7, 7]);
    m.add_option(opt::URI_HOST, b"gw");
    m.add_option(opt::URI_PATH, b"r");
    m.payload = vec![n; 12];
    m
}

/// A request protected by the client `c` with sequence number `seq`.
fn protected(c: &SecurityContext, seq: u64) -> (Vec<u8>, RequestBinding) {
    let (m, b) = protect_request(c, &mut MemorySequence::new(seq), &reading(seq as u8)).unwrap();
    (m.encode().unwrap(), b)
}

#[test]
fn an_altered_request_fails_to_decrypt_and_leaves_the_window() {
    let (client, server) = (ctx(b"c", b"s", None), ctx(b"s", b"c", None));
    let (good, _) = protected(&client, 5);
    let mut window = ReplayWindow::default();
    let mut bad = good.clone();
    *bad.last_mut().unwrap() ^= 1; // a tag bit
    let e = unprotect_request(&server, &mut window, &bad).unwrap_err();
    assert_eq!(e, Error::DecryptionFailed);
    assert_eq!(e.coap_code(), 0x80, "4.00 Bad Request");
    assert_eq!(window.highest(), None, "a forged message does not move the window");
    unprotect_request(&server, &mut window, &good).unwrap();
}

#[test]
fn a_replayed_request_is_refused_as_a_replay() {
    let (client, server) = (ctx(b"c", b"s", None), ctx(b"s", b"c", None));
    let (m, _) = protected(&client, 5);
    let mut window = ReplayWindow::default();
    unprotect_request(&server, &mut window, &m).unwrap();
    let e = unprotect_request(&server, &mut window, &m).unwrap_err();
    assert_eq!(e, Error::Replayed(5));
    assert_eq!(e.coap_code(), 0x81, "4.01 Unauthorized");
}

#[test]
fn a_request_below_the_window_is_refused_as_too_old() {
    let (client, server) = (ctx(b"c", b"s", None), ctx(b"s", b"c", None));
    let mut window = ReplayWindow::new(32);
    let (old, _) = protected(&client, 10);
    let (new, _) = protected(&client, 42);
    unprotect_request(&server, &mut window, &new).unwrap();
    assert_eq!(unprotect_request(&server, &mut window, &old).unwrap_err(), Error::TooOld(10));
    // 11 is the lowest number still inside a 32-wide window topped by 42.
    let (edge, _) = protected(&client, 11);
    unprotect_request(&server, &mut window, &edge).unwrap();
}

#[test]
fn a_request_for_another_context_is_refused_as_not_found() {
    let client = ctx(b"c", b"s", None);
    let (m, _) = protected(&client, 1);
    let other = ctx(b"s", b"x", None);
    assert_eq!(unprotect_request(&other, &mut ReplayWindow::default(), &m).unwrap_err(), Error::ContextNotFound);
    // A 'kid context' that is not the server's ID Context.
    let mut c2 = ctx(b"c", b"s", Some(b"one"));
    c2.send_kid_context = true;
    let (m, _) = protected(&c2, 1);
    let s2 = ctx(b"s", b"c", Some(b"two"));
    let e = unprotect_request(&s2, &mut ReplayWindow::default(), &m).unwrap_err();
    assert_eq!(e, Error::ContextNotFound);
    assert_eq!(e.coap_code(), 0x81);
}

#[test]
fn a_response_to_another_request_fails_to_decrypt() {
    let (client, server) = (ctx(b"c", b"s", None), ctx(b"s", b"c", None));
    let (m1, b1) = protected(&client, 1);
    let (_, b2) = protected(&client, 2);
    let (_, sb1) = unprotect_request(&server, &mut ReplayWindow::default(), &m1).unwrap();
    let resp = Message { code: 0x44, options: vec![], payload: b"ok".to_vec(), ..reading(0) };
    let r = protect_response(&server, &sb1, &resp, None).unwrap().encode().unwrap();
    assert_eq!(unprotect_response(&client, &b1, &r).unwrap().payload, b"ok");
    assert_eq!(unprotect_response(&client, &b2, &r).unwrap_err(), Error::DecryptionFailed);
}

#[test]
fn unprotected_and_malformed_messages_are_refused_by_reason() {
    let server = ctx(b"s", b"c", None);
    let w = &mut ReplayWindow::default();
    let plain = reading(1).encode().unwrap();
    let e = unprotect_request(&server, w, &plain).unwrap_err().to_string();
    assert!(e.contains("no OSCORE option"), "{e}");
    // An OSCORE option with a Partial IV but no kid.
    let mut m = reading(1);
    m.add_option(opt::OSCORE, &[0x01, 0x05]);
    let e = unprotect_request(&server, w, &m.encode().unwrap()).unwrap_err();
    assert!(e.to_string().contains("must carry a Partial IV and a kid"), "{e}");
    assert_eq!(e.coap_code(), 0x82, "4.02 Bad Option");
    // Two OSCORE options.
    let mut m = reading(1);
    m.add_option(opt::OSCORE, &[0x09, 0x05, b'c']);
    m.add_option(opt::OSCORE, &[0x09, 0x06, b'c']);
    assert!(unprotect_request(&server, w, &m.encode().unwrap()).unwrap_err().to_string().contains("more than one"));
}

#[test]
fn observe_and_proxy_uri_are_refused_as_unsupported() {
    let client = ctx(b"c", b"s", None);
    for n in [opt::OBSERVE, opt::PROXY_URI] {
        let mut m = reading(1);
        m.add_option(n, b"");
        let e = protect_request(&client, &mut MemorySequence::new(0), &m).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "option {n}: {e}");
    }
}

#[test]
fn sequence_numbers_stop_at_2_pow_40_minus_1() {
    let client = ctx(b"c", b"s", None);
    let mut seq = MemorySequence::new(MAX_SEQ);
    let (_, b) = protect_request(&client, &mut seq, &reading(1)).unwrap();
    assert_eq!(b.piv, [0xff; 5]);
    assert_eq!(protect_request(&client, &mut seq, &reading(1)).unwrap_err(), Error::SequenceExhausted);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let server = ctx(b"s", b"c", None);
        let client = ctx(b"c", b"s", None);
        let _ = unprotect_request(&server, &mut ReplayWindow::default(), &bytes);
        let _ = unprotect_response(&client, &RequestBinding { kid: b"c".to_vec(), piv: vec![1] }, &bytes);
    }

    #[test]
    fn a_changed_byte_in_the_option_or_ciphertext_never_verifies(at in 0usize..1000, flip in 1u8..=255) {
        let (client, server) = (ctx(b"c", b"s", None), ctx(b"s", b"c", None));
        let (good, _) = protected(&client, 3);
        // Header (4) + token (2) + Uri-Host (1 + 2): the OSCORE option's value starts at 10.
        let at = 10 + at % (good.len() - 10);
        let mut bad = good.clone();
        bad[at] ^= flip;
        prop_assert!(unprotect_request(&server, &mut ReplayWindow::default(), &bad).is_err());
    }
}
