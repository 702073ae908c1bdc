//! The pieces `lwcbench link --protocol oscore --edhoc` builds on: CCS credentials written from
//! a private key (checked against RFC 9529 §3's), a Responder that learns the Initiator's
//! credential from its kid in message_3, the CoAP payloads with a byte-string C_R, and EDHOC
//! error messages (RFC 9528 §6).
#![allow(clippy::unwrap_used)]

use lwcbench_oscore::edhoc::{
    self, ccs, credential, error_message, error_reason, split_coap_request, Error, Identity, Initiator, OpenResponder,
};

mod common;
use common::*;

#[test]
fn ccs_from_a_private_key_equals_the_rfc_9529_credentials() {
    assert_eq!(ccs("example.edu", &[0x32], &h(SK_R)).unwrap(), h(CRED_R));
    assert_eq!(ccs("42-50-31-FF-EF-37-32-39", &[0x2b], &h(SK_I)).unwrap(), h(CRED_I));
    assert!(ccs("s", &[], &h(SK_R)).is_err(), "an empty kid");
    assert!(ccs("s", &[1; 17], &h(SK_R)).is_err(), "a kid longer than lakers keeps");
    assert!(ccs("s", &[1], &[0; 32]).is_err(), "the scalar 0");
    assert!(!edhoc::private_key_ok(&[0xff; 32]), "above the group order");
    assert!(edhoc::private_key_ok(&h(SK_I)));
}

#[test]
fn an_open_responder_takes_the_initiator_it_knows_by_kid() {
    let i = Identity::new(&h(SK_I), &h(CRED_I)).unwrap();
    let r = Identity::new(&h(SK_R), &h(CRED_R)).unwrap();
    let known = |kid: &[u8]| (kid == [0x2b]).then(|| credential(&h(CRED_I)).unwrap());

    let (init, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), 0x37).unwrap();
    // A two-byte C_R travels as a byte string; message_3's CoAP payload carries it so.
    let (resp, m2) = OpenResponder::process_message_1(&r, &m1, &[0x01, 0x02]).unwrap();
    assert_eq!((resp.c_i(), resp.c_r()), (&[0x37][..], &[1, 2][..]));
    let (sent3, m3) = init.process_message_2(&m2).unwrap();
    let payload = edhoc::coap_message_3(sent3.c_r(), &m3);
    assert_eq!(&payload[..3], [0x42, 1, 2]);
    let (c_r, m3_back) = split_coap_request(&payload).unwrap();
    assert_eq!((c_r.as_deref(), m3_back), (Some(&[1u8, 2][..]), &m3[..]));
    let (mut est_r, m4, kid) = resp.process_message_3(m3_back, known).unwrap();
    assert_eq!(kid, [0x2b]);
    let mut est_i = sent3.process_message_4(&m4).unwrap();
    let (client, server) = (est_i.oscore_context().unwrap(), est_r.oscore_context().unwrap());
    assert_eq!(client.sender_key(), server.recipient_key());
    assert_eq!(client.sender_id(), [1, 2], "Appendix A.1: the Initiator sends under C_R");

    // The same Initiator, unknown to a Responder that knows only kid 0x05: refused.
    let (init, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), 0x37).unwrap();
    let (resp, m2) = OpenResponder::process_message_1(&r, &m1, &[0x40]).unwrap();
    let (_, m3) = init.process_message_2(&m2).unwrap();
    let mut seen = Vec::new();
    let e = resp
        .process_message_3(&m3, |kid| {
            seen = kid.to_vec();
            (kid == [0x05]).then(|| credential(&h(CRED_I)).unwrap())
        })
        .unwrap_err();
    assert_eq!(e, Error::Protocol { step: "message_3", reason: lakers::EDHOCError::UnexpectedCredential });
    assert_eq!(seen, [0x2b], "the lookup saw the kid the Initiator sent");

    // C_R equal to C_I is refused (the caller picks another), as are empty or long ones.
    let (_, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), 0x37).unwrap();
    assert!(matches!(OpenResponder::process_message_1(&r, &m1, &[0x37]), Err(Error::Oscore(_))));
    assert!(OpenResponder::process_message_1(&r, &m1, &[]).is_err());
    assert!(OpenResponder::process_message_1(&r, &m1, &[1; 8]).is_err());
}

#[test]
fn an_open_responder_refuses_a_bad_message_1_as_a_responder_does() {
    // The gateway's Responder meets message_1 from anyone: an ephemeral key off the curve
    // (x = 1, see tests/edhoc.rs), an oversized or an empty message are refused, none panics.
    let i = Identity::new(&h(SK_I), &h(CRED_I)).unwrap();
    let r = Identity::new(&h(SK_R), &h(CRED_R)).unwrap();
    let (_, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), 0x37).unwrap();
    let mut bad = m1.clone();
    bad[4..36].fill(0);
    bad[35] = 1;
    let e = OpenResponder::process_message_1(&r, &bad, &[0x01, 0x02]).unwrap_err();
    assert_eq!(e, Error::Protocol { step: "message_1", reason: lakers::EDHOCError::ParsingError });
    let e = OpenResponder::process_message_1(&r, &[0; 5000], &[0x01, 0x02]).unwrap_err();
    assert!(e.to_string().contains("message_1 of 5000 bytes"), "{e}");
    assert!(matches!(OpenResponder::process_message_1(&r, &[], &[0x01, 0x02]), Err(Error::Protocol { .. })));
    // The untouched message_1 still passes.
    assert!(OpenResponder::process_message_1(&r, &m1, &[0x01, 0x02]).is_ok());
}

#[test]
fn coap_payloads_and_error_messages() {
    assert_eq!(split_coap_request(&[0xf5, 3, 2]).unwrap(), (None, &[3u8, 2][..]));
    assert_eq!(split_coap_request(&[0x27, 9]).unwrap(), (Some(vec![0x27]), &[9u8][..]));
    assert_eq!(split_coap_request(&[0x41, 0xff, 9]).unwrap(), (Some(vec![0xff]), &[9u8][..]));
    assert!(split_coap_request(&[]).is_err());
    assert!(split_coap_request(&[0x43, 1, 2]).is_err(), "C_R longer than the payload");
    assert!(split_coap_request(&[0x48; 10]).is_err(), "C_R of 8 bytes: no OSCORE Sender ID");
    // RFC 9528 §6: ERR_CODE 1 (int), ERR_INFO a text string: 01 63 'a' 'b' 'c'.
    assert_eq!(error_message("abc"), [0x01, 0x63, b'a', b'b', b'c']);
    assert_eq!(error_reason(&error_message("unknown kid")).as_deref(), Some("unknown kid"));
    let long = "x".repeat(300);
    assert_eq!(error_reason(&error_message(&long)), Some(long));
    assert_eq!(error_reason(&[0x01, 0x62, b'a', 7]).as_deref(), Some("a?"));
    assert_eq!(error_reason(&[0x02, 0x61, b'a']), None, "ERR_CODE 2 is not a text reason");
    assert_eq!(error_reason(&[0x01, 0x63, b'a']), None, "truncated");
    assert_eq!(error_reason(&[0x01, 0x61, b'a', 0]), None, "trailing bytes");
}

/// message_1 of `Initiator::start` (one-byte C_I 0x37, the last byte) with C_I replaced by an
/// 8-byte byte string: CBOR 0x48 then the bytes.
fn message_1_with_long_c_i(m1: &[u8]) -> Vec<u8> {
    assert_eq!(m1.last(), Some(&0x37));
    let mut long = m1[..m1.len() - 1].to_vec();
    long.push(0x48);
    long.extend_from_slice(&[0xa5; 8]);
    long
}

#[test]
fn a_c_i_longer_than_an_oscore_id_is_refused_at_message_1() {
    // RFC 8613 §3.3: with AES-CCM-16-64-128's 13-byte nonce an OSCORE ID holds at most 13 - 6 =
    // 7 bytes, and C_I becomes the Responder's Recipient ID (RFC 9528 Appendix A.1). lakers
    // takes up to 23, so without this check the handshake ran to message_3 and failed there.
    let i = Identity::new(&h(SK_I), &h(CRED_I)).unwrap();
    let r = Identity::new(&h(SK_R), &h(CRED_R)).unwrap();
    let (_, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), 0x37).unwrap();
    let long = message_1_with_long_c_i(&m1);
    for e in [
        OpenResponder::process_message_1(&r, &long, &[0x40]).unwrap_err(),
        edhoc::Responder::process_message_1(&r, credential(&h(CRED_I)).unwrap(), &long, 0x21).unwrap_err(),
    ] {
        assert!(matches!(e, Error::Id(_)), "{e:?}");
        assert_eq!(e.to_string(), "EDHOC message_1 refused: C_I of 8 bytes; an OSCORE ID holds at most 7");
        assert_eq!(e.coap_code(), 0x80, "4.00 Bad Request");
    }
}

#[test]
fn a_c_r_longer_than_an_oscore_id_is_refused_at_message_2() {
    use lakers::{ConnId, CredentialTransfer, EDHOCMethod, EdhocMessageBuffer, EdhocResponder};
    let i = Identity::new(&h(SK_I), &h(CRED_I)).unwrap();
    let (init, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), 0x37).unwrap();
    // lakers' own Responder, which lets C_R be 8 bytes.
    let crypto = lakers_crypto_rustcrypto::Crypto::new(rand_core::OsRng);
    let sk: [u8; 32] = h(SK_R).try_into().unwrap();
    let r = EdhocResponder::new(crypto, EDHOCMethod::StatStat, sk, credential(&h(CRED_R)).unwrap());
    let (processed, _, _) = r.process_message_1(&EdhocMessageBuffer::new_from_slice(&m1).unwrap()).unwrap();
    let c_r = ConnId::from_slice(&[0xa5; 8]).unwrap();
    let (_, m2) = processed.prepare_message_2(CredentialTransfer::ByReference, Some(c_r), &None).unwrap();
    let e = init.process_message_2(m2.as_slice()).unwrap_err();
    assert!(matches!(e, Error::Id(_)), "{e:?}");
    assert_eq!(e.to_string(), "EDHOC message_2 refused: C_R of 8 bytes; an OSCORE ID holds at most 7");
}
