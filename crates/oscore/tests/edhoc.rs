//! EDHOC (RFC 9528, method 3, cipher suite 2) between this crate's Initiator and Responder in
//! one process, with the credentials and static keys of RFC 9529 Section 3 (fresh ephemeral
//! keys, so the messages differ from the trace; tests/edhoc_rfc9529.rs replays the trace
//! itself): the message sizes of RFC 9528 §5, the OSCORE contexts of Appendix A.1 both sides
//! agree on, EDHOC-KeyUpdate, and the refusals of altered messages and unexpected credentials.
// The helpers outside #[test] functions panic on bad input too: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use lwcbench_oscore::coap::{mtype, opt, Message};
use lwcbench_oscore::edhoc::{self, credential, Error, Established, Identity, Initiator, Responder, Role};
use lwcbench_oscore::{
    protect_request, protect_response, unprotect_request, unprotect_response, MemorySequence, ReplayWindow,
    SecurityContext,
};

mod common;
use common::*;

// RFC 9529 Section 3's connection identifiers (its keys and credentials: tests/common).
const C_I: u8 = 0x37; // -24
const C_R: u8 = 0x27; // -8

fn ids() -> (Identity, Identity) {
    (Identity::new(&h(SK_I), &h(CRED_I)).unwrap(), Identity::new(&h(SK_R), &h(CRED_R)).unwrap())
}

/// A whole handshake with message_4; returns both sides and the four messages.
fn handshake() -> (Established, Established, [Vec<u8>; 4]) {
    let (i, r) = ids();
    let (init, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), C_I).unwrap();
    let (resp, m2) = Responder::process_message_1(&r, credential(&h(CRED_I)).unwrap(), &m1, C_R).unwrap();
    assert_eq!((resp.c_i(), resp.c_r()), (&[C_I][..], &[C_R][..]));
    let (sent3, m3) = init.process_message_2(&m2).unwrap();
    assert_eq!(sent3.c_r(), [C_R]);
    let (est_r, m4) = resp.process_message_3(&m3).unwrap();
    let est_i = sent3.process_message_4(&m4).unwrap();
    (est_i, est_r, [m1, m2, m3, m4])
}

fn round_trip(client: &SecurityContext, server: &SecurityContext, seq: u64) {
    let mut req = Message::new(mtype::CON, 0x02, 1, &[1]);
    req.add_option(opt::URI_PATH, b"r");
    req.payload = b"21.5".to_vec();
    let (prot, binding) = protect_request(client, &mut MemorySequence::new(seq), &req).unwrap();
    let (back, sb) = unprotect_request(server, &mut ReplayWindow::default(), &prot.encode().unwrap()).unwrap();
    assert_eq!(back, req);
    let resp = Message { code: 0x44, options: vec![], payload: b"ok".to_vec(), ..req.clone() };
    let r = protect_response(server, &sb, &resp, None).unwrap().encode().unwrap();
    assert_eq!(unprotect_response(client, &binding, &r).unwrap(), resp);
}

#[test]
fn handshake_sizes_and_the_oscore_contexts_of_appendix_a1() {
    let (mut est_i, mut est_r, [m1, m2, m3, m4]) = handshake();
    // RFC 9528 §5.2.1: METHOD (1) + SUITES_I = 2 (1) + G_X as bstr (2 + 32) + C_I (1).
    assert_eq!(m1.len(), 37, "message_1");
    // §5.3.1: bstr header (2) + G_Y (32) + CIPHERTEXT_2 = C_R (1) + ID_CRED_R as a compact
    // kid (1) + MAC_2 as bstr (1 + 8): 45 bytes, as in the RFC 9529 §3 trace.
    assert_eq!(m2.len(), 45, "message_2");
    // §5.4.1: bstr header (1) + AES-CCM of ID_CRED_I (1) + MAC_3 (1 + 8) + tag (8): 19.
    assert_eq!(m3.len(), 19, "message_3");
    // §5.5.1: bstr header (1) + AES-CCM of nothing: the tag (8).
    assert_eq!(m4.len(), 9, "message_4");
    assert_eq!((est_i.role(), est_r.role()), (Role::Initiator, Role::Responder));
    assert_eq!((est_i.c_i(), est_i.c_r()), (&[C_I][..], &[C_R][..]));

    let client = est_i.oscore_context().unwrap();
    let server = est_r.oscore_context().unwrap();
    // Appendix A.1: the Initiator sends under C_R and receives under C_I.
    assert_eq!((client.sender_id(), client.recipient_id()), (&[C_R][..], &[C_I][..]));
    assert_eq!((server.sender_id(), server.recipient_id()), (&[C_I][..], &[C_R][..]));
    assert_eq!(client.alg(), lwcbench_oscore::Algorithm::AesCcm16_64_128);
    assert_eq!(client.sender_key(), server.recipient_key());
    assert_eq!(client.recipient_key(), server.sender_key());
    assert_ne!(client.sender_key(), client.recipient_key());
    round_trip(&client, &server, 0);

    // A second handshake (new ephemeral keys) yields other keys.
    let (mut other, _, _) = handshake();
    assert_ne!(other.oscore_context().unwrap().sender_key(), client.sender_key());
}

#[test]
fn key_update_renews_both_sides_alike() {
    let (mut est_i, mut est_r, _) = handshake();
    let old = est_i.oscore_context().unwrap();
    let new_i = est_i.key_update(b"\xa0\x11\x58\xfd").unwrap();
    let new_r = est_r.key_update(b"\xa0\x11\x58\xfd").unwrap();
    assert_ne!(new_i.sender_key(), old.sender_key(), "KeyUpdate must change the keys");
    assert_eq!(new_i.sender_key(), new_r.recipient_key());
    assert_eq!(new_i.common_iv(), new_r.common_iv());
    round_trip(&new_i, &new_r, 0);
    // A request under the old context does not verify under the new one.
    let req = Message::new(mtype::CON, 0x02, 1, &[1]);
    let (prot, _) = protect_request(&old, &mut MemorySequence::new(0), &req).unwrap();
    assert_eq!(
        unprotect_request(&new_r, &mut ReplayWindow::default(), &prot.encode().unwrap()).unwrap_err(),
        lwcbench_oscore::Error::DecryptionFailed
    );
    // Different contexts give different keys.
    let (mut a, _, _) = handshake();
    let a0 = a.key_update(b"\x01").unwrap();
    let (mut b, _, _) = handshake();
    assert_ne!(a0.sender_key(), b.key_update(b"\x02").unwrap().sender_key());
    assert!(a.key_update(&[0; 4096]).is_err(), "an oversized KeyUpdate context is refused");
}

#[test]
fn an_altered_message_2_is_refused_by_the_initiator() {
    let (i, r) = ids();
    for at in [0usize, 20, 34, 40, 44] {
        let (init, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), C_I).unwrap();
        let (_, mut m2) = Responder::process_message_1(&r, credential(&h(CRED_I)).unwrap(), &m1, C_R).unwrap();
        m2[at] ^= 0x01;
        let e = init.process_message_2(&m2).unwrap_err();
        assert!(matches!(e, Error::Protocol { step: "message_2", .. }), "byte {at}: {e}");
        if at == 44 {
            // The last byte is MAC_2's: everything parses, the MAC does not verify.
            assert_eq!(e, Error::Protocol { step: "message_2", reason: lakers::EDHOCError::MacVerificationFailed });
        }
    }
}

#[test]
fn an_ephemeral_key_off_the_curve_is_refused_without_a_panic() {
    // lakers' ECDH panics on such a point; the checks before it refuse it as a parsing error.
    let (i, r) = ids();
    let (init, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), C_I).unwrap();
    let mut bad1 = m1.clone();
    bad1[4..36].fill(0); // G_X := 1 (off the curve, see bad_parameters_are_refused_by_name)
    bad1[35] = 1;
    let e = Responder::process_message_1(&r, credential(&h(CRED_I)).unwrap(), &bad1, C_R).unwrap_err();
    assert_eq!(e, Error::Protocol { step: "message_1", reason: lakers::EDHOCError::ParsingError });
    let (_, mut m2) = Responder::process_message_1(&r, credential(&h(CRED_I)).unwrap(), &m1, C_R).unwrap();
    m2[2..34].fill(0); // G_Y := 1
    m2[33] = 1;
    let e = init.process_message_2(&m2).unwrap_err();
    assert_eq!(e, Error::Protocol { step: "message_2", reason: lakers::EDHOCError::ParsingError });
    // Every one-bit change of message_1 and message_2 is refused, none panics: a G_Y changed
    // but still on the curve decrypts PLAINTEXT_2 to noise, whose C_R may announce a long byte
    // string (lakers panicked on those before its 24-byte connection identifiers).
    for at in 0..m1.len() * 8 {
        let (init, mut m) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), C_I).unwrap();
        m[at / 8] ^= 1 << (at % 8);
        if let Ok((_, m2)) = Responder::process_message_1(&r, credential(&h(CRED_I)).unwrap(), &m, C_R) {
            // A bit of METHOD, SUITES_I or C_I may still make a message_1: the transcript then
            // differs, and the Initiator refuses message_2.
            assert!(init.process_message_2(&m2).is_err(), "message_1 bit {at}");
        }
    }
    for round in 0..2 {
        for at in 0..45 * 8 {
            let (init, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), C_I).unwrap();
            let (_, mut m2) = Responder::process_message_1(&r, credential(&h(CRED_I)).unwrap(), &m1, C_R).unwrap();
            m2[at / 8] ^= 1 << (at % 8);
            assert!(init.process_message_2(&m2).is_err(), "round {round}, message_2 bit {at}");
        }
    }
}

#[test]
fn an_altered_message_3_is_refused_by_the_responder() {
    let (i, r) = ids();
    for at in [0usize, 1, 10, 18] {
        let (init, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), C_I).unwrap();
        let (resp, m2) = Responder::process_message_1(&r, credential(&h(CRED_I)).unwrap(), &m1, C_R).unwrap();
        let (_, mut m3) = init.process_message_2(&m2).unwrap();
        m3[at] ^= 0x01;
        let e = resp.process_message_3(&m3).unwrap_err();
        assert!(matches!(e, Error::Protocol { step: "message_3", .. }), "byte {at}: {e}");
        if at > 0 {
            // The AEAD tag of message_3 no longer verifies.
            assert_eq!(e, Error::Protocol { step: "message_3", reason: lakers::EDHOCError::MacVerificationFailed });
            assert!(e.to_string().contains("does not verify"), "{e}");
            assert_eq!(e.coap_code(), 0x80);
        }
    }
}

#[test]
fn an_unexpected_credential_is_refused() {
    let (i, r) = ids();
    // The Initiator expects its own credential from the Responder: the kid 0x32 does not match.
    let (init, m1) = Initiator::start(&i, credential(&h(CRED_I)).unwrap(), C_I).unwrap();
    let (_, m2) = Responder::process_message_1(&r, credential(&h(CRED_I)).unwrap(), &m1, C_R).unwrap();
    let e = init.process_message_2(&m2).unwrap_err();
    assert_eq!(e, Error::Protocol { step: "message_2", reason: lakers::EDHOCError::UnexpectedCredential });
    // The Responder expects its own credential from the Initiator.
    let (init, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), C_I).unwrap();
    let (resp, m2) = Responder::process_message_1(&r, credential(&h(CRED_R)).unwrap(), &m1, C_R).unwrap();
    let (_, m3) = init.process_message_2(&m2).unwrap();
    let e = resp.process_message_3(&m3).unwrap_err();
    assert_eq!(e, Error::Protocol { step: "message_3", reason: lakers::EDHOCError::UnexpectedCredential });
}

#[test]
fn bad_parameters_are_refused_by_name() {
    let (i, r) = ids();
    let e = Identity::new(&[1; 31], &h(CRED_I)).unwrap_err().to_string();
    assert!(e.contains("private key of 31 bytes"), "{e}");
    assert!(credential(b"\xa0").is_err(), "an empty map is no CCS");
    assert!(credential(&h(CRED_I)[..40]).is_err(), "a cut CCS");
    // C_R equal to C_I: the two directions would share a Sender ID.
    let (_, m1) = Initiator::start(&i, credential(&h(CRED_R)).unwrap(), C_I).unwrap();
    let e = Responder::process_message_1(&r, credential(&h(CRED_I)).unwrap(), &m1, C_I).unwrap_err();
    assert!(e.to_string().contains("C_I equals"), "{e}");
    // A private key that is not a P-256 scalar, or not the credential's.
    let e = Identity::new(&[0; 32], &h(CRED_I)).unwrap_err().to_string();
    assert!(e.contains("group order"), "{e}");
    let e = Identity::new(&h(SK_R), &h(CRED_I)).unwrap_err().to_string();
    assert!(e.contains("does not belong"), "{e}");
    // A credential whose public key is not on the curve: x = 1, where 1 - 3 + b is no square
    // modulo p (Euler's criterion, computed apart in Python: pow(b - 2, (p-1)//2, p) == p - 1).
    let mut bad = h(CRED_I);
    let x_at = bad.windows(3).position(|w| w == [0x21, 0x58, 0x20]).unwrap() + 3;
    bad[x_at..x_at + 32].fill(0);
    bad[x_at + 31] = 1;
    let e = credential(&bad).unwrap_err().to_string();
    assert!(e.contains("not a point on P-256"), "{e}");
    // An oversized or empty message.
    let e = Responder::process_message_1(&r, credential(&h(CRED_I)).unwrap(), &[0; 5000], C_R).unwrap_err();
    assert!(e.to_string().contains("message_1 of 5000 bytes"), "{e}");
    assert!(Responder::process_message_1(&r, credential(&h(CRED_I)).unwrap(), &[], C_R).is_err());
    assert!(format!("{i:?}").contains("redacted"));
    assert_eq!(edhoc::coap_message_1(&m1)[0], 0xf5);
}
