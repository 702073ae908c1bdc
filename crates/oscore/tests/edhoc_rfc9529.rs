//! EDHOC (RFC 9528) with the `lakers` crate against the trace of RFC 9529 Section 3
//! ("Authentication with Static DH, CCS Identified by 'kid'": method 3, cipher suite 2), then
//! the OSCORE context that EDHOC exports (RFC 9528 Appendix A) used with this crate.
//!
//! The expected values are transcribed from the trace's text (draft-ietf-lake-traces as kept in
//! the LAKE working group's repository, lake-wg/edhoc, last changed in January 2024 before its
//! publication as RFC 9529 in March 2024); the Master Secret, Master Salt, PRK_out and the
//! ephemeral key X agree with the constants of lakers' own tests. The trace's first message_1
//! and its error (the cipher suite negotiation) are not replayed: lakers' API starts at the
//! second message_1, with SUITES_I = [6, 2].
//!
//! lakers exposes the handshake with fixed keys through its lower-level state functions; what it
//! does not expose (the intermediate values: TH_2, PRK_2e, KEYSTREAM_2, MAC_2, ...) is checked
//! only through the messages and outputs that depend on them.
// The helpers outside #[test] functions panic on bad input too: a panic is the failure report.
#![allow(clippy::unwrap_used)]
#![allow(deprecated)]

use lakers::*;
use lakers_crypto_rustcrypto::Crypto;
use lwcbench_oscore::coap::{mtype, opt, Message};
use lwcbench_oscore::{
    protect_request, protect_response, unprotect_request, unprotect_response, Algorithm, MemorySequence, ReplayWindow,
    SecurityContext, SecurityParams,
};

mod common;
use common::*;

fn h32(s: &str) -> [u8; 32] {
    h(s).try_into().unwrap()
}

fn buf(s: &str) -> EdhocMessageBuffer {
    EdhocMessageBuffer::new_from_slice(&h(s)).unwrap()
}

// RFC 9529 Section 3 (trace 2).
const X: &str = "368ec1f69aeb659ba37d5a8d45b21bdc0299dceaa8ef235f3ca42ce3530f9525";
const G_X: &str = "8af6f430ebe18d34184017a9a11bf511c8dff8f834730b96c1b7c8dbca2fc3b6";
const Y: &str = "e2f4126777205e853b437d6eaca1e1f753cdcc3e2c69fa884b0a1a640977e418";
const G_Y: &str = "419701d7f00a26c2dc587a36dd752549f33763c893422c8ea0f955a13a4ff5d5";
const C_I: u8 = 0x37;
const C_R: u8 = 0x27;
const MESSAGE_1: &str = "0382060258208af6f430ebe18d34184017a9a11bf511c8dff8f834730b96c1b7c8dbca2fc3b637";
const MESSAGE_2: &str = "582b419701d7f00a26c2dc587a36dd752549f33763c893422c8ea0f955a13a4ff5d59862a1eef9e0e7e1886fcd";
const MESSAGE_3: &str = "52e562097bc417dd5919485ac7891ffd90a9fc";
const MESSAGE_4: &str = "4828c966b7ca304f83";
const PRK_OUT: &str = "2c71afc1a9338a940bb3529ca734b886f30d1aba0b4dc51beeaeabdfea9ecbf8";
const MASTER_SECRET: &str = "f9868f6a3aca78a05d1485b35030b162";
const MASTER_SALT: &str = "ada24c7dbfc85eeb";
const KEY_UPDATE_CONTEXT: &str = "a01158fdb820890cd6be169602b8bcea";
const PRK_OUT_UPDATED: &str = "f979537743fe0bd6b9b141ddbd79656c52e6dc7c50ad807754d74d07e87d0d16";
const MASTER_SECRET_UPDATED: &str = "49f72fac02b4658bda21e2dac66fc374";
const MASTER_SALT_UPDATED: &str = "dd8b24f2aa9b011a";

fn crypto() -> Crypto<rand_core::OsRng> {
    Crypto::new(rand_core::OsRng)
}

fn cred(s: &str) -> Credential {
    Credential::parse_ccs(&h(s)).unwrap()
}

/// The OSCORE Master Secret (16 bytes, label 0) and Master Salt (8 bytes, label 1) exported
/// from a completed EDHOC session (RFC 9528 Appendix A.1).
fn export(done: &Completed, c: &mut Crypto<rand_core::OsRng>) -> (Vec<u8>, Vec<u8>) {
    let ctx = [0u8; MAX_KDF_CONTEXT_LEN];
    let secret = edhoc_exporter(done, c, 0, &ctx, 0, 16)[..16].to_vec();
    let salt = edhoc_exporter(done, c, 1, &ctx, 0, 8)[..8].to_vec();
    (secret, salt)
}

#[test]
fn rfc9529_static_dh_trace_then_oscore() {
    let (mut ci, mut cr) = (crypto(), crypto());

    // Initiator: message_1 with SUITES_I = [6, 2], METHOD 3, C_I = 0x37.
    let start_i =
        InitiatorStart { suites_i: EdhocBuffer::new_from_slice(&[6, 2]).unwrap(), method: 3, x: h32(X), g_x: h32(G_X) };
    let (wait_m2, m1) = i_prepare_message_1(&start_i, &mut ci, ConnId::from_int_raw(C_I), &None).unwrap();
    assert_eq!(m1.as_slice(), h(MESSAGE_1), "message_1");

    // Responder: message_2 with C_R = 0x27, ID_CRED_R by reference ('kid' 0x32).
    let start_r = ResponderStart { method: 3, y: h32(Y), g_y: h32(G_Y) };
    let (processing_m1, c_i, _) = r_process_message_1(&start_r, &mut cr, &buf(MESSAGE_1)).unwrap();
    assert_eq!(c_i.as_slice(), [C_I]);
    let (mut wait_m3, m2) = r_prepare_message_2(
        &processing_m1,
        &mut cr,
        cred(CRED_R),
        &h32(SK_R),
        ConnId::from_int_raw(C_R),
        CredentialTransfer::ByReference,
        &None,
    )
    .unwrap();
    assert_eq!(m2.as_slice(), h(MESSAGE_2), "message_2");

    // Initiator: verify message_2, send message_3 (ID_CRED_I by reference, 'kid' 0x2b).
    let (processing_m2, c_r, id_cred_r, _) = i_parse_message_2(&wait_m2, &mut ci, &buf(MESSAGE_2)).unwrap();
    assert_eq!(c_r.as_slice(), [C_R]);
    assert_eq!(id_cred_r.as_full_value(), h("a1044132"), "ID_CRED_R");
    let processed_m2 = i_verify_message_2(&processing_m2, &mut ci, cred(CRED_R), &h32(SK_I)).unwrap();
    let (mut wait_m4, m3, prk_out_i) =
        i_prepare_message_3(&processed_m2, &mut ci, cred(CRED_I), CredentialTransfer::ByReference, &None).unwrap();
    assert_eq!(m3.as_slice(), h(MESSAGE_3), "message_3");
    assert_eq!(prk_out_i.as_slice(), h(PRK_OUT), "PRK_out (Initiator)");

    // Responder: verify message_3, send message_4.
    let (mut processing_m3, id_cred_i, _) = r_parse_message_3(&mut wait_m3, &mut cr, &buf(MESSAGE_3)).unwrap();
    assert_eq!(id_cred_i.as_full_value(), h("a104412b"), "ID_CRED_I");
    let (processed_m3, prk_out_r) = r_verify_message_3(&mut processing_m3, &mut cr, cred(CRED_I)).unwrap();
    assert_eq!(prk_out_r.as_slice(), h(PRK_OUT), "PRK_out (Responder)");
    let (mut done_r, m4) = r_prepare_message_4(&processed_m3, &mut cr, &None).unwrap();
    assert_eq!(m4.as_slice(), h(MESSAGE_4), "message_4");
    let (mut done_i, _) = i_process_message_4(&mut wait_m4, &mut ci, &buf(MESSAGE_4)).unwrap();

    // The OSCORE Master Secret and Master Salt both sides export.
    let (secret, salt) = export(&done_i, &mut ci);
    assert_eq!(secret, h(MASTER_SECRET), "OSCORE Master Secret");
    assert_eq!(salt, h(MASTER_SALT), "OSCORE Master Salt");
    assert_eq!(export(&done_r, &mut cr), (secret.clone(), salt.clone()));

    // RFC 9528 Appendix A.1: the client's (Initiator's) Sender ID is C_R, its Recipient ID C_I;
    // suite 2's application AEAD is AES-CCM-16-64-128. A request and its response go through.
    let derive = |s: &[u8], r: &[u8], secret: &[u8], salt: &[u8]| {
        SecurityContext::derive(&SecurityParams {
            alg: Algorithm::AesCcm16_64_128,
            master_secret: secret,
            master_salt: salt,
            id_context: None,
            sender_id: s,
            recipient_id: r,
        })
        .unwrap()
    };
    let client = derive(&[C_R], &[C_I], &secret, &salt);
    let server = derive(&[C_I], &[C_R], &secret, &salt);
    let mut req = Message::new(mtype::CON, 0x02, 1, &[1]);
    req.add_option(opt::URI_PATH, b"r");
    req.payload = b"21.5".to_vec();
    let (prot, binding) = protect_request(&client, &mut MemorySequence::new(0), &req).unwrap();
    let (back, sb) = unprotect_request(&server, &mut ReplayWindow::default(), &prot.encode().unwrap()).unwrap();
    assert_eq!(back, req);
    let resp = Message { code: 0x44, options: vec![], payload: vec![], ..req.clone() };
    let r = protect_response(&server, &sb, &resp, None).unwrap().encode().unwrap();
    assert_eq!(unprotect_response(&client, &binding, &r).unwrap(), resp);

    // EDHOC-KeyUpdate (RFC 9528 Appendix H) with the trace's context, then the new exports.
    let mut ctx = [0u8; MAX_KDF_CONTEXT_LEN];
    let kc = h(KEY_UPDATE_CONTEXT);
    ctx[..kc.len()].copy_from_slice(&kc);
    let prk_i = edhoc_key_update(&mut done_i, &mut ci, &ctx, kc.len());
    let prk_r = edhoc_key_update(&mut done_r, &mut cr, &ctx, kc.len());
    assert_eq!(prk_i.as_slice(), h(PRK_OUT_UPDATED), "PRK_out after KeyUpdate");
    assert_eq!(prk_r.as_slice(), h(PRK_OUT_UPDATED));
    let (secret2, salt2) = export(&done_i, &mut ci);
    assert_eq!(secret2, h(MASTER_SECRET_UPDATED), "OSCORE Master Secret after KeyUpdate");
    assert_eq!(salt2, h(MASTER_SALT_UPDATED), "OSCORE Master Salt after KeyUpdate");
}

#[test]
fn an_altered_message_3_is_refused() {
    let mut cr = crypto();
    let start_r = ResponderStart { method: 3, y: h32(Y), g_y: h32(G_Y) };
    let (p1, _, _) = r_process_message_1(&start_r, &mut cr, &buf(MESSAGE_1)).unwrap();
    let (mut wait_m3, _) = r_prepare_message_2(
        &p1,
        &mut cr,
        cred(CRED_R),
        &h32(SK_R),
        ConnId::from_int_raw(C_R),
        CredentialTransfer::ByReference,
        &None,
    )
    .unwrap();
    let mut m3 = h(MESSAGE_3);
    *m3.last_mut().unwrap() ^= 1;
    let m3 = EdhocMessageBuffer::new_from_slice(&m3).unwrap();
    // The ciphertext's tag no longer verifies: refused at parsing (decryption), never accepted.
    assert!(r_parse_message_3(&mut wait_m3, &mut cr, &m3).is_err());
}
