//! This crate's own EDHOC (src/edhoc/own.rs) with live keys: against the lakers-based
//! implementation (src/edhoc.rs) at cipher suite 2 in both directions, at cipher suite 0 with
//! static DH (X25519 keys of RFC 7748 §6.1) between its own two sides, the refusals of
//! altered messages and bad parameters, each in one line, and a bounded fuzz: random,
//! truncated and mutated messages at every step never panic. The Responder serving many
//! Initiators ([`OpenResponder`]: the credential looked up by the kid in message_3) at suite 0
//! between its own sides and at suite 2 with the lakers Initiator, and the CCS builders
//! against RFC 9529's credentials.
#![allow(clippy::unwrap_used)]

use lwcbench_oscore::coap::{mtype, opt, Message};
use lwcbench_oscore::edhoc::own::{
    Credential, EdhocSuite, Established, Identity, Initiator, KeyKind, Method, OpenResponder, Params, Responder,
    ResponderConfig,
};
use lwcbench_oscore::edhoc::{self, Role};
use lwcbench_oscore::{
    protect_request, protect_response, unprotect_request, unprotect_response, MemorySequence, ReplayWindow,
    SecurityContext,
};

mod common;
use common::*;

// RFC 7748 §6.1: Alice's and Bob's X25519 private and public keys.
const ALICE_SK: &str = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
const ALICE_PK: &str = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
const BOB_SK: &str = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb";
const BOB_PK: &str = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f";
const C_I: u8 = 0x37;
const C_R: u8 = 0x27;

/// A CCS `{2: subject, 8: {1: COSE_Key {1: OKP, 2: kid, -1: X25519, -2: x}}}`.
fn x25519_ccs(subject: &str, kid: u8, x: &[u8]) -> Vec<u8> {
    let mut c = vec![0xa2, 0x02, 0x60 + subject.len() as u8];
    c.extend_from_slice(subject.as_bytes());
    c.extend_from_slice(&[0x08, 0xa1, 0x01, 0xa4, 0x01, 0x01, 0x02, 0x41, kid, 0x20, 0x04, 0x21, 0x58, 0x20]);
    c.extend_from_slice(x);
    c
}

struct Side {
    own: Identity,
    peer: Credential,
}

fn p256_sides() -> (Side, Side) {
    let (ci, cr) = (Credential::ccs_kid(&h(CRED_I)).unwrap(), Credential::ccs_kid(&h(CRED_R)).unwrap());
    (
        Side { own: Identity::new(&h(SK_I), ci.clone()).unwrap(), peer: cr.clone() },
        Side { own: Identity::new(&h(SK_R), cr).unwrap(), peer: ci },
    )
}

fn x25519_sides() -> (Side, Side) {
    let ci = Credential::ccs_kid(&x25519_ccs("alice", 0x0a, &h(ALICE_PK))).unwrap();
    let cr = Credential::ccs_kid(&x25519_ccs("bob", 0x0b, &h(BOB_PK))).unwrap();
    (
        Side { own: Identity::new(&h(ALICE_SK), ci.clone()).unwrap(), peer: cr.clone() },
        Side { own: Identity::new(&h(BOB_SK), cr).unwrap(), peer: ci },
    )
}

fn params(s: &Side, suite: EdhocSuite) -> Params<'_> {
    Params { suite, method: Method::StaticDh, own: &s.own, peer: &s.peer }
}

fn round_trip(client: &SecurityContext, server: &SecurityContext) {
    let mut req = Message::new(mtype::CON, 0x02, 1, &[1]);
    req.add_option(opt::URI_PATH, b"r");
    req.payload = b"21.5".to_vec();
    let (prot, binding) = protect_request(client, &mut MemorySequence::new(0), &req).unwrap();
    let (back, sb) = unprotect_request(server, &mut ReplayWindow::default(), &prot.encode().unwrap()).unwrap();
    assert_eq!(back, req);
    let resp = Message { code: 0x44, options: vec![], payload: b"ok".to_vec(), ..req.clone() };
    let r = protect_response(server, &sb, &resp, None).unwrap().encode().unwrap();
    assert_eq!(unprotect_response(client, &binding, &r).unwrap(), resp);
}

fn same_context(client: &SecurityContext, server: &SecurityContext) {
    assert_eq!((client.sender_id(), client.recipient_id()), (&[C_R][..], &[C_I][..]));
    assert_eq!((server.sender_id(), server.recipient_id()), (&[C_I][..], &[C_R][..]));
    assert_eq!(client.sender_key(), server.recipient_key());
    assert_eq!(client.recipient_key(), server.sender_key());
    assert_eq!(client.common_iv(), server.common_iv());
    round_trip(client, server);
}

fn lakers_sides() -> (edhoc::Identity, edhoc::Identity) {
    (edhoc::Identity::new(&h(SK_I), &h(CRED_I)).unwrap(), edhoc::Identity::new(&h(SK_R), &h(CRED_R)).unwrap())
}

#[test]
fn our_initiator_with_the_lakers_responder() {
    let (i, _) = p256_sides();
    let (_, lr) = lakers_sides();
    let (init, m1) = Initiator::start(&params(&i, EdhocSuite::Suite2), &[C_I]).unwrap();
    let (resp, m2) =
        edhoc::Responder::process_message_1(&lr, edhoc::credential(&h(CRED_I)).unwrap(), &m1, C_R).unwrap();
    let (sent3, m3) = init.process_message_2(&m2).unwrap();
    let (mut est_r, m4) = resp.process_message_3(&m3).unwrap();
    let est_i = sent3.process_message_4(&m4).unwrap();
    same_context(&est_i.oscore_context().unwrap(), &est_r.oscore_context().unwrap());
}

#[test]
fn the_lakers_initiator_with_our_responder() {
    let (_, r) = p256_sides();
    let (li, _) = lakers_sides();
    let (init, m1) = edhoc::Initiator::start(&li, edhoc::credential(&h(CRED_R)).unwrap(), C_I).unwrap();
    let (resp, m2) = Responder::process_message_1(&params(&r, EdhocSuite::Suite2), &m1, &[C_R]).unwrap();
    let (sent3, m3) = init.process_message_2(&m2).unwrap();
    let (est_r, m4) = resp.process_message_3(&m3).unwrap();
    let mut est_i = sent3.process_message_4(&m4).unwrap();
    same_context(&est_i.oscore_context().unwrap(), &est_r.oscore_context().unwrap());
}

#[test]
fn flipped_bits_from_lakers_are_refused() {
    let (i, r) = p256_sides();
    let (li, lr) = lakers_sides();
    // Every bit of a lakers message_2, flipped, is refused by our Initiator.
    for bit in 0..45 * 8 {
        let (init, m1) = Initiator::start(&params(&i, EdhocSuite::Suite2), &[C_I]).unwrap();
        let (_, mut m2) =
            edhoc::Responder::process_message_1(&lr, edhoc::credential(&h(CRED_I)).unwrap(), &m1, C_R).unwrap();
        m2[bit / 8] ^= 1 << (bit % 8);
        let e = init.process_message_2(&m2).unwrap_err();
        assert_eq!(e.step(), "message_2", "bit {bit}: {e}");
    }
    // Every bit of a lakers message_3, flipped, is refused by our Responder.
    for bit in 0..19 * 8 {
        let (init, m1) = edhoc::Initiator::start(&li, edhoc::credential(&h(CRED_R)).unwrap(), C_I).unwrap();
        let (resp, m2) = Responder::process_message_1(&params(&r, EdhocSuite::Suite2), &m1, &[C_R]).unwrap();
        let (_, mut m3) = init.process_message_2(&m2).unwrap();
        m3[bit / 8] ^= 1 << (bit % 8);
        let e = resp.process_message_3(&m3).unwrap_err();
        assert_eq!(e.step(), "message_3", "bit {bit}: {e}");
    }
}

fn handshake(i: &Side, r: &Side, suite: EdhocSuite) -> (Established, Established, [Vec<u8>; 4]) {
    let (init, m1) = Initiator::start(&params(i, suite), &[C_I]).unwrap();
    let (resp, m2) = Responder::process_message_1(&params(r, suite), &m1, &[C_R]).unwrap();
    let (sent3, m3) = init.process_message_2(&m2).unwrap();
    let (est_r, m4) = resp.process_message_3(&m3).unwrap();
    let est_i = sent3.process_message_4(&m4).unwrap();
    (est_i, est_r, [m1, m2, m3, m4])
}

#[test]
fn suite_0_static_dh_completes_with_the_sizes_of_rfc_9528() {
    let (i, r) = x25519_sides();
    let (mut est_i, mut est_r, [m1, m2, m3, m4]) = handshake(&i, &r, EdhocSuite::Suite0);
    // The sizes of RFC 9529 §3 (the same shapes with X25519's 32-byte keys): METHOD, SUITES_I,
    // G_X (2 + 32), C_I; bstr head (2), G_Y (32), C_R, kid, MAC_2 (1 + 8); bstr head, kid,
    // MAC_3 (1 + 8), tag (8); bstr head, tag.
    assert_eq!([m1.len(), m2.len(), m3.len(), m4.len()], [37, 45, 19, 9]);
    assert_eq!(&m1[..2], [0x03, 0x00], "METHOD 3, SUITES_I 0");
    assert_eq!((est_i.role(), est_r.role(), est_i.suite()), (Role::Initiator, Role::Responder, EdhocSuite::Suite0));
    same_context(&est_i.oscore_context().unwrap(), &est_r.oscore_context().unwrap());
    let old = est_i.oscore_context().unwrap();
    let (ni, nr) = (est_i.key_update(b"\x01\x02").unwrap(), est_r.key_update(b"\x01\x02").unwrap());
    assert_ne!(ni.sender_key(), old.sender_key(), "KeyUpdate must change the keys");
    same_context(&ni, &nr);
    // A second handshake (new ephemeral keys) yields other keys.
    let (other, _, _) = handshake(&i, &r, EdhocSuite::Suite0);
    assert_ne!(other.oscore_context().unwrap().sender_key(), est_i.oscore_context().unwrap().sender_key());
}

#[test]
fn refusals_name_their_reason_in_one_line() {
    let (i, r) = x25519_sides();
    let (pi, pr) = (params(&i, EdhocSuite::Suite0), params(&r, EdhocSuite::Suite0));
    let msg = |e: lwcbench_oscore::edhoc::own::Error| {
        let s = e.to_string();
        assert!(!s.contains('\n'), "{s}");
        s
    };
    // The Responder configured for suite 2 (P-256 keys) refuses a message_1 selecting suite 0.
    let (pi2, pr2) = p256_sides();
    let (_, m1) = Initiator::start(&pi, &[C_I]).unwrap();
    let e = msg(Responder::process_message_1(&params(&pr2, EdhocSuite::Suite2), &m1, &[C_R]).unwrap_err());
    assert_eq!(e, "EDHOC message_1 refused: selected cipher suite 0 (this Responder: 2)");
    // Another method.
    let sig = Params { method: Method::Signatures, ..pr };
    let e = msg(Responder::process_message_1(&sig, &m1, &[C_R]).unwrap_err());
    assert!(e.contains("credential") && e.contains("Ed25519"), "{e}");
    // C_R equal to C_I.
    let e = msg(Responder::process_message_1(&pr, &m1, &[C_I]).unwrap_err());
    assert!(e.contains("C_I equals"), "{e}");
    // An X25519 G_X of small order (here 0): the shared secret would be all zero.
    let mut bad = m1.clone();
    bad[4..36].fill(0);
    let e = msg(Responder::process_message_1(&pr, &bad, &[C_R]).unwrap_err());
    assert!(e.contains("small order"), "{e}");
    // Oversized, empty, and method 0 with suite 2.
    let e = msg(Responder::process_message_1(&pr, &[0; 5000], &[C_R]).unwrap_err());
    assert!(e.contains("longer than the 1024 bytes"), "{e}");
    assert!(Responder::process_message_1(&pr, &[], &[C_R]).is_err());
    let e = msg(Initiator::start(&Params { method: Method::Signatures, ..params(&pi2, EdhocSuite::Suite2) }, &[C_I])
        .unwrap_err());
    assert!(e.contains("suite 0"), "{e}");
    // The Initiator expects another credential than the Responder's.
    let wrong = Side { own: i.own.clone(), peer: i.own.credential().clone() };
    let (init, m1) = Initiator::start(&params(&wrong, EdhocSuite::Suite0), &[C_I]).unwrap();
    let (_, m2) = Responder::process_message_1(&pr, &m1, &[C_R]).unwrap();
    let e = msg(init.process_message_2(&m2).unwrap_err());
    assert_eq!(e, "EDHOC message_2 refused: ID_CRED_R names another credential than the one expected");
    // A private key that is not the credential's; a CCS cut short.
    let e = msg(Identity::new(&h(BOB_SK), i.own.credential().clone()).unwrap_err());
    assert!(e.contains("does not belong"), "{e}");
    let e = msg(Credential::ccs_kid(&h(CRED_I)[..40]).unwrap_err());
    assert!(e.contains("not a CCS"), "{e}");
    assert!(format!("{:?}", i.own).contains("Identity") && !format!("{:?}", i.own).contains("7707"));
}

/// A deterministic xorshift64 generator: the fuzz below is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// The `k`-th variant of a valid message `m`: its strict prefixes first (k < m.len()), then
/// alternately random bytes of a random length and `m` with 1 to 4 random bytes replaced.
fn variant(m: &[u8], rng: &mut Rng, k: usize) -> Vec<u8> {
    if k < m.len() {
        return m[..k].to_vec();
    }
    if k.is_multiple_of(2) {
        let len = (rng.next() % 300) as usize;
        return rng.bytes(len);
    }
    let mut v = m.to_vec();
    for _ in 0..1 + rng.next() % 4 {
        let at = (rng.next() as usize) % v.len();
        v[at] = rng.next() as u8;
    }
    v
}

#[test]
fn random_truncated_and_mutated_messages_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (xi, xr) = x25519_sides();
    let (pi, pr) = p256_sides();
    for (i, r, suite) in [(&xi, &xr, EdhocSuite::Suite0), (&pi, &pr, EdhocSuite::Suite2)] {
        // message_1 at a Responder: prefixes are refused, nothing panics.
        let (_, m1) = Initiator::start(&params(i, suite), &[C_I]).unwrap();
        for k in 0..400 {
            let m = variant(&m1, &mut rng, k);
            let res = Responder::process_message_1(&params(r, suite), &m, &[C_R]);
            assert!(k >= m1.len() || res.is_err(), "a truncated message_1 of {k} bytes was accepted");
        }
        // message_2, message_3 and message_4, each a variant of the one its receiver awaits:
        // anything but the message itself is refused.
        for k in 0..300 {
            let (init, m1) = Initiator::start(&params(i, suite), &[C_I]).unwrap();
            let (resp, m2) = Responder::process_message_1(&params(r, suite), &m1, &[C_R]).unwrap();
            let step = k % 3;
            if step == 0 {
                let m = variant(&m2, &mut rng, k / 3);
                if m != m2 {
                    assert!(init.process_message_2(&m).is_err(), "a changed message_2 was accepted");
                }
                continue;
            }
            let (sent3, m3) = init.process_message_2(&m2).unwrap();
            if step == 1 {
                let m = variant(&m3, &mut rng, k / 3);
                if m != m3 {
                    assert!(resp.process_message_3(&m).is_err(), "a changed message_3 was accepted");
                }
                continue;
            }
            let (_, m4) = resp.process_message_3(&m3).unwrap();
            let m = variant(&m4, &mut rng, k / 3);
            if m != m4 {
                assert!(sent3.process_message_4(&m).is_err(), "a changed message_4 was accepted");
            }
        }
    }
}

// RFC 9529 §3's subjects.
const SUBJ_I: &str = "42-50-31-FF-EF-37-32-39";
const SUBJ_R: &str = "example.edu";

#[test]
fn ccs_builders_give_the_credentials_of_rfc_9529_and_7748() {
    // P-256: the private keys of RFC 9529 §3 with its subjects and kids give its CRED_I and
    // CRED_R byte for byte (the public key derived, y included).
    let ci = Credential::ccs_for_key(KeyKind::P256, SUBJ_I, &[0x2b], &h(SK_I)).unwrap();
    assert_eq!(ci.cred(), h(CRED_I));
    let cr = Credential::ccs_for_key(KeyKind::P256, SUBJ_R, &[0x32], &h(SK_R)).unwrap();
    assert_eq!(cr.cred(), h(CRED_R));
    assert_eq!(cr, Credential::ccs_kid(&h(CRED_R)).unwrap());
    // X25519: Alice's private key of RFC 7748 §6.1 gives the CCS holding her public key there.
    let a = Identity::with_ccs(KeyKind::X25519, "alice", &[0x0a], &h(ALICE_SK)).unwrap();
    assert_eq!(a.credential().cred(), x25519_ccs("alice", 0x0a, &h(ALICE_PK)));
    assert_eq!(a.credential().public_key()[..], h(ALICE_PK)[..]);
    // Refusals, in one line each.
    let e = |r: Result<Credential, lwcbench_oscore::edhoc::own::Error>| r.unwrap_err().to_string();
    assert_eq!(
        e(Credential::ccs_for_key(KeyKind::X25519, "a", &[1; 8], &h(ALICE_SK))),
        "EDHOC credential refused: a kid of 8 bytes (1 to 7)"
    );
    assert_eq!(
        e(Credential::ccs_for_key(KeyKind::X25519, "a", &[], &h(ALICE_SK))),
        "EDHOC credential refused: a kid of 0 bytes (1 to 7)"
    );
    assert_eq!(
        e(Credential::ccs_for_key(KeyKind::P256, "a", b"g", &[0; 32])),
        "EDHOC credential refused: P-256 private key is 0 or not below the group order"
    );
    // n, the group order of P-256 (SEC 2 §2.4.2), is not below itself.
    let n = h("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551");
    assert!(Credential::ccs_for_key(KeyKind::P256, "a", b"g", &n).is_err());
    assert_eq!(
        e(Credential::ccs_for_key(KeyKind::X25519, "a", b"g", &[7; 31])),
        "EDHOC credential refused: private key of 31 bytes (32 expected)"
    );
    assert!(Credential::ccs_for_key(KeyKind::X25519, &"s".repeat(65), b"g", &h(ALICE_SK)).is_err());
}

/// A gateway and three devices at `suite`, with static keys given by their index; devices 1
/// and 2 are known to the gateway, device 3 is not.
struct Fleet {
    gateway: Identity,
    devices: Vec<Identity>,
}

fn fleet(suite: EdhocSuite) -> Fleet {
    let kind = if suite == EdhocSuite::Suite0 { KeyKind::X25519 } else { KeyKind::P256 };
    // Small scalars 1..4 are valid keys on both curves (below P-256's order; X25519 clamps).
    let key = |n: u8| {
        let mut k = [0u8; 32];
        k[31] = n;
        k[0] = n;
        k
    };
    Fleet {
        gateway: Identity::with_ccs(kind, "gateway", b"g", &key(9)).unwrap(),
        devices: (1..=3).map(|d| Identity::with_ccs(kind, "sensor", &[b'd', d], &key(d)).unwrap()).collect(),
    }
}

impl Fleet {
    /// The gateway's look-up: devices 1 and 2 by kid.
    fn lookup(&self) -> impl Fn(&[u8]) -> Option<Credential> + '_ {
        |kid| self.devices[..2].iter().map(|d| d.credential()).find(|c| c.id_cred()[3..] == *kid).cloned()
    }
    fn config(&self, suite: EdhocSuite) -> ResponderConfig<'_> {
        ResponderConfig { suite, method: Method::StaticDh, own: &self.gateway }
    }
    fn device(&self, d: usize, suite: EdhocSuite) -> Params<'_> {
        Params { suite, method: Method::StaticDh, own: &self.devices[d - 1], peer: self.gateway.credential() }
    }
}

#[test]
fn an_open_responder_at_suite_0_serves_the_devices_it_knows_by_kid() {
    let s = EdhocSuite::Suite0;
    let f = fleet(s);
    for d in [1, 2] {
        let (init, m1) = Initiator::start(&f.device(d, s), &[C_I]).unwrap();
        let (resp, m2) = OpenResponder::process_message_1(&f.config(s), &m1, &[C_R]).unwrap();
        assert_eq!((resp.c_i(), resp.c_r()), (&[C_I][..], &[C_R][..]));
        let (sent3, m3) = init.process_message_2(&m2).unwrap();
        let (est_r, m4, kid) = resp.process_message_3(&m3, f.lookup()).unwrap();
        assert_eq!(kid, [b'd', d as u8], "the kid of device {d}");
        let est_i = sent3.process_message_4(&m4).unwrap();
        assert_eq!((est_i.suite(), est_r.suite()), (s, s));
        same_context(&est_i.oscore_context().unwrap(), &est_r.oscore_context().unwrap());
    }
}

#[test]
fn an_open_responder_refuses_an_unknown_kid_and_a_credential_of_another_kind() {
    let s = EdhocSuite::Suite0;
    let f = fleet(s);
    let m3_of = |d: usize| {
        let (init, m1) = Initiator::start(&f.device(d, s), &[C_I]).unwrap();
        let (resp, m2) = OpenResponder::process_message_1(&f.config(s), &m1, &[C_R]).unwrap();
        let (_, m3) = init.process_message_2(&m2).unwrap();
        (resp, m3)
    };
    // Device 3 is not among the gateway's: its kid "d" 0x03 is named.
    let (resp, m3) = m3_of(3);
    let e = resp.process_message_3(&m3, f.lookup()).unwrap_err();
    assert_eq!(e.to_string(), "EDHOC message_3 refused: no credential known for kid h'6403'");
    // A look-up that answers another credential than the kid names.
    let (resp, m3) = m3_of(1);
    let e = resp.process_message_3(&m3, |_| Some(f.devices[1].credential().clone())).unwrap_err();
    assert_eq!(e.to_string(), "EDHOC message_3 refused: the credential found for kid h'6401' has another kid");
    // A P-256 credential under the right kid, at suite 0.
    let p = Credential::ccs_for_key(KeyKind::P256, "sensor", b"d\x01", &h(SK_I)).unwrap();
    let (resp, m3) = m3_of(1);
    let e = resp.process_message_3(&m3, |_| Some(p.clone())).unwrap_err();
    assert_eq!(
        e.to_string(),
        "EDHOC message_3 refused: the credential of kid h'6401' holds a P256 key; method 3 with cipher suite 0 \
         (AES-CCM-16-64-128, SHA-256, X25519, EdDSA) needs X25519"
    );
}

#[test]
fn an_open_responder_takes_the_suite_it_is_configured_with() {
    let (f0, f2) = (fleet(EdhocSuite::Suite0), fleet(EdhocSuite::Suite2));
    // Configured for suite 0, it refuses a message_1 selecting suite 2, with the reason.
    let (_, m1) = Initiator::start(&f2.device(1, EdhocSuite::Suite2), &[C_I]).unwrap();
    let e = OpenResponder::process_message_1(&f0.config(EdhocSuite::Suite0), &m1, &[C_R]).unwrap_err();
    assert_eq!(e.to_string(), "EDHOC message_1 refused: selected cipher suite 2 (this Responder: 0)");
    // And lakers' message_1 (suite 2 only) likewise.
    let (li, _) = lakers_sides();
    let (_, m1) = edhoc::Initiator::start(&li, edhoc::credential(&h(CRED_R)).unwrap(), C_I).unwrap();
    let e = OpenResponder::process_message_1(&f0.config(EdhocSuite::Suite0), &m1, &[C_R]).unwrap_err();
    assert_eq!(e.to_string(), "EDHOC message_1 refused: selected cipher suite 2 (this Responder: 0)");
    // Configured for suite 2, it refuses suite 0.
    let (_, m1) = Initiator::start(&f0.device(1, EdhocSuite::Suite0), &[C_I]).unwrap();
    let e = OpenResponder::process_message_1(&f2.config(EdhocSuite::Suite2), &m1, &[C_R]).unwrap_err();
    assert_eq!(e.to_string(), "EDHOC message_1 refused: selected cipher suite 0 (this Responder: 2)");
    // SUITES_I [2, 0]: the Initiator lists suite 2 but selects 0 (the last element, RFC 9528
    // §5.2.2); a suite-2 Responder still refuses, as the error message of §6.3 must answer.
    let x = [0x11u8; 32];
    let (_, m1) = Initiator::start_with(&f0.device(1, EdhocSuite::Suite0), &[C_I], &[2, 0], &x).unwrap();
    assert_eq!(&m1[..4], [0x03, 0x82, 0x02, 0x00], "METHOD 3, SUITES_I [2, 0]");
    let e = OpenResponder::process_message_1(&f2.config(EdhocSuite::Suite2), &m1, &[C_R]).unwrap_err();
    assert_eq!(e.to_string(), "EDHOC message_1 refused: selected cipher suite 0 (this Responder: 2)");
    // Its own key must fit the suite; C_R must differ from C_I.
    let e = OpenResponder::process_message_1(&f2.config(EdhocSuite::Suite0), &m1, &[C_R]).unwrap_err();
    assert!(e.to_string().contains("the own credential holds a P256 key"), "{e}");
    let e = OpenResponder::process_message_1(&f0.config(EdhocSuite::Suite0), &m1, &[C_I]).unwrap_err();
    assert!(e.to_string().contains("C_I equals"), "{e}");
}

#[test]
fn flipped_bits_at_suite_0_are_refused_by_an_open_responder_and_its_initiator() {
    let s = EdhocSuite::Suite0;
    let f = fleet(s);
    let start = || {
        let (init, m1) = Initiator::start(&f.device(1, s), &[C_I]).unwrap();
        let (resp, m2) = OpenResponder::process_message_1(&f.config(s), &m1, &[C_R]).unwrap();
        (init, resp, m2)
    };
    let (_, _, m2) = start();
    for bit in 0..m2.len() * 8 {
        let (init, _, mut m2) = start();
        m2[bit / 8] ^= 1 << (bit % 8);
        let e = init.process_message_2(&m2).unwrap_err();
        assert_eq!(e.step(), "message_2", "bit {bit}: {e}");
    }
    let (init, _, m2) = start();
    let m3_len = init.process_message_2(&m2).unwrap().1.len();
    for bit in 0..m3_len * 8 {
        let (init, resp, m2) = start();
        let (_, mut m3) = init.process_message_2(&m2).unwrap();
        m3[bit / 8] ^= 1 << (bit % 8);
        let e = resp.process_message_3(&m3, f.lookup()).unwrap_err();
        assert_eq!(e.step(), "message_3", "bit {bit}: {e}");
    }
    for bit in 0..9 * 8 {
        let (init, resp, m2) = start();
        let (sent3, m3) = init.process_message_2(&m2).unwrap();
        let (_, mut m4, _) = resp.process_message_3(&m3, f.lookup()).unwrap();
        m4[bit / 8] ^= 1 << (bit % 8);
        let e = sent3.process_message_4(&m4).unwrap_err();
        assert_eq!(e.step(), "message_4", "bit {bit}: {e}");
    }
}

#[test]
fn the_lakers_initiator_with_our_open_responder() {
    // Suite 2: lakers initiates with RFC 9529's CRED_I; our Responder, holding CRED_R built
    // from its private key, finds CRED_I by the kid 0x2b.
    let gw = Identity::with_ccs(KeyKind::P256, SUBJ_R, &[0x32], &h(SK_R)).unwrap();
    let cfg = ResponderConfig { suite: EdhocSuite::Suite2, method: Method::StaticDh, own: &gw };
    let known = Credential::ccs_kid(&h(CRED_I)).unwrap();
    let (li, _) = lakers_sides();
    let (init, m1) = edhoc::Initiator::start(&li, edhoc::credential(gw.credential().cred()).unwrap(), C_I).unwrap();
    let (resp, m2) = OpenResponder::process_message_1(&cfg, &m1, &[C_R]).unwrap();
    let (sent3, m3) = init.process_message_2(&m2).unwrap();
    let (est_r, m4, kid) = resp.process_message_3(&m3, |k| (k == [0x2b]).then(|| known.clone())).unwrap();
    assert_eq!(kid, [0x2b]);
    let mut est_i = sent3.process_message_4(&m4).unwrap();
    same_context(&est_i.oscore_context().unwrap(), &est_r.oscore_context().unwrap());
    // An Initiator lakers runs with a kid the Responder does not know is refused at message_3.
    let (init, m1) = edhoc::Initiator::start(&li, edhoc::credential(gw.credential().cred()).unwrap(), C_I).unwrap();
    let (resp, m2) = OpenResponder::process_message_1(&cfg, &m1, &[C_R]).unwrap();
    let (_, m3) = init.process_message_2(&m2).unwrap();
    let e = resp.process_message_3(&m3, |_| None).unwrap_err();
    assert_eq!(e.to_string(), "EDHOC message_3 refused: no credential known for kid h'2b'");
    // Every bit of a lakers message_3, flipped, is refused.
    for bit in 0..19 * 8 {
        let (init, m1) = edhoc::Initiator::start(&li, edhoc::credential(gw.credential().cred()).unwrap(), C_I).unwrap();
        let (resp, m2) = OpenResponder::process_message_1(&cfg, &m1, &[C_R]).unwrap();
        let (_, mut m3) = init.process_message_2(&m2).unwrap();
        m3[bit / 8] ^= 1 << (bit % 8);
        let e = resp.process_message_3(&m3, |k| (k == [0x2b]).then(|| known.clone())).unwrap_err();
        assert_eq!(e.step(), "message_3", "bit {bit}: {e}");
    }
}
