//! RFC 8613 Appendix C test vectors, C.1 to C.8, transcribed from the RFC's text (rfc8613.txt
//! as kept in the CoRE working group's repository, core-wg/oscore). Every expected value below
//! is the RFC's; none is produced by this crate.
// The helpers outside #[test] functions panic on bad input too: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use lwcbench_oscore::coap::Message;
use lwcbench_oscore::context::info;
use lwcbench_oscore::protect::aad;
use lwcbench_oscore::{
    protect_request, protect_response, unprotect_request, unprotect_response, Algorithm, Error, MemorySequence,
    ReplayWindow, RequestBinding, SecurityContext, SecurityParams,
};

fn h(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

const SECRET: &str = "0102030405060708090a0b0c0d0e0f10";
const SALT: &str = "9e7ca92223786340";
const ID_CONTEXT: &str = "37cbf3210017a2d3";

fn ctx(salt: &str, id_context: Option<&str>, sender: &str, recipient: &str) -> SecurityContext {
    let (secret, salt, idc, s, r) = (h(SECRET), h(salt), id_context.map(h), h(sender), h(recipient));
    SecurityContext::derive(&SecurityParams {
        alg: Algorithm::AesCcm16_64_128,
        master_secret: &secret,
        master_salt: &salt,
        id_context: idc.as_deref(),
        sender_id: &s,
        recipient_id: &r,
    })
    .unwrap()
}

/// One key-derivation vector: infos, keys, IV and the nonces for Partial IV 0.
struct Kd {
    salt: &'static str,
    id_context: Option<&'static str>,
    sender_id: &'static str,
    recipient_id: &'static str,
    info_sender: &'static str,
    info_recipient: &'static str,
    info_iv: &'static str,
    sender_key: &'static str,
    recipient_key: &'static str,
    common_iv: &'static str,
    sender_nonce: &'static str,
    recipient_nonce: &'static str,
}

fn check(v: &Kd) {
    let c = ctx(v.salt, v.id_context, v.sender_id, v.recipient_id);
    let idc = v.id_context.map(h);
    let i = |id: &str, kind, len| info(&h(id), idc.as_deref(), Algorithm::AesCcm16_64_128, kind, len);
    assert_eq!(i(v.sender_id, "Key", 16), h(v.info_sender), "info (for Sender Key)");
    assert_eq!(i(v.recipient_id, "Key", 16), h(v.info_recipient), "info (for Recipient Key)");
    assert_eq!(i("", "IV", 13), h(v.info_iv), "info (for Common IV)");
    assert_eq!(c.sender_key(), h(v.sender_key), "Sender Key");
    assert_eq!(c.recipient_key(), h(v.recipient_key), "Recipient Key");
    assert_eq!(c.common_iv(), h(v.common_iv), "Common IV");
    assert_eq!(c.nonce(c.sender_id(), &[0]).unwrap(), h(v.sender_nonce), "sender nonce");
    assert_eq!(c.nonce(c.recipient_id(), &[0]).unwrap(), h(v.recipient_nonce), "recipient nonce");
}

#[test]
fn c1_key_derivation_with_master_salt() {
    // C.1.1 Client
    check(&Kd {
        salt: SALT,
        id_context: None,
        sender_id: "",
        recipient_id: "01",
        info_sender: "8540f60a634b657910",
        info_recipient: "854101f60a634b657910",
        info_iv: "8540f60a6249560d",
        sender_key: "f0910ed7295e6ad4b54fc793154302ff",
        recipient_key: "ffb14e093c94c9cac9471648b4f98710",
        common_iv: "4622d4dd6d944168eefb54987c",
        sender_nonce: "4622d4dd6d944168eefb54987c",
        recipient_nonce: "4722d4dd6d944169eefb54987c",
    });
    // C.1.2 Server
    check(&Kd {
        salt: SALT,
        id_context: None,
        sender_id: "01",
        recipient_id: "",
        info_sender: "854101f60a634b657910",
        info_recipient: "8540f60a634b657910",
        info_iv: "8540f60a6249560d",
        sender_key: "ffb14e093c94c9cac9471648b4f98710",
        recipient_key: "f0910ed7295e6ad4b54fc793154302ff",
        common_iv: "4622d4dd6d944168eefb54987c",
        sender_nonce: "4722d4dd6d944169eefb54987c",
        recipient_nonce: "4622d4dd6d944168eefb54987c",
    });
}

#[test]
fn c2_key_derivation_without_master_salt() {
    // C.2.1 Client
    check(&Kd {
        salt: "",
        id_context: None,
        sender_id: "00",
        recipient_id: "01",
        info_sender: "854100f60a634b657910",
        info_recipient: "854101f60a634b657910",
        info_iv: "8540f60a6249560d",
        sender_key: "321b26943253c7ffb6003b0b64d74041",
        recipient_key: "e57b5635815177cd679ab4bcec9d7dda",
        common_iv: "be35ae297d2dace910c52e99f9",
        sender_nonce: "bf35ae297d2dace910c52e99f9",
        recipient_nonce: "bf35ae297d2dace810c52e99f9",
    });
    // C.2.2 Server
    check(&Kd {
        salt: "",
        id_context: None,
        sender_id: "01",
        recipient_id: "00",
        info_sender: "854101f60a634b657910",
        info_recipient: "854100f60a634b657910",
        info_iv: "8540f60a6249560d",
        sender_key: "e57b5635815177cd679ab4bcec9d7dda",
        recipient_key: "321b26943253c7ffb6003b0b64d74041",
        common_iv: "be35ae297d2dace910c52e99f9",
        sender_nonce: "bf35ae297d2dace810c52e99f9",
        recipient_nonce: "bf35ae297d2dace910c52e99f9",
    });
}

#[test]
fn c3_key_derivation_with_id_context() {
    // C.3.1 Client
    check(&Kd {
        salt: SALT,
        id_context: Some(ID_CONTEXT),
        sender_id: "",
        recipient_id: "01",
        info_sender: "85404837cbf3210017a2d30a634b657910",
        info_recipient: "8541014837cbf3210017a2d30a634b657910",
        info_iv: "85404837cbf3210017a2d30a6249560d",
        sender_key: "af2a1300a5e95788b356336eeecd2b92",
        recipient_key: "e39a0c7c77b43f03b4b39ab9a268699f",
        common_iv: "2ca58fb85ff1b81c0b7181b85e",
        sender_nonce: "2ca58fb85ff1b81c0b7181b85e",
        recipient_nonce: "2da58fb85ff1b81d0b7181b85e",
    });
    // C.3.2 Server
    check(&Kd {
        salt: SALT,
        id_context: Some(ID_CONTEXT),
        sender_id: "01",
        recipient_id: "",
        info_sender: "8541014837cbf3210017a2d30a634b657910",
        info_recipient: "85404837cbf3210017a2d30a634b657910",
        info_iv: "85404837cbf3210017a2d30a6249560d",
        sender_key: "e39a0c7c77b43f03b4b39ab9a268699f",
        recipient_key: "af2a1300a5e95788b356336eeecd2b92",
        common_iv: "2ca58fb85ff1b81c0b7181b85e",
        sender_nonce: "2da58fb85ff1b81d0b7181b85e",
        recipient_nonce: "2ca58fb85ff1b81c0b7181b85e",
    });
}

/// One request vector (C.4 to C.6), checked both ways: the client's protection gives the RFC's
/// bytes, and the server's verification of those bytes gives back the unprotected request.
struct Req {
    client: SecurityContext,
    server: SecurityContext,
    unprotected: &'static str,
    aad: &'static str,
    nonce: &'static str,
    protected: &'static str,
}

fn check_request(v: Req) -> RequestBinding {
    let plain = Message::parse(&h(v.unprotected)).unwrap();
    let (prot, binding) = protect_request(&v.client, &mut MemorySequence::new(20), &plain).unwrap();
    assert_eq!(binding.piv, [0x14], "Partial IV");
    assert_eq!(aad(&v.client, &binding.kid, &binding.piv), h(v.aad), "AAD");
    assert_eq!(v.client.nonce(&binding.kid, &binding.piv).unwrap(), h(v.nonce), "nonce");
    assert_eq!(prot.encode().unwrap(), h(v.protected), "protected request");

    let mut window = ReplayWindow::default();
    let (back, sb) = unprotect_request(&v.server, &mut window, &h(v.protected)).unwrap();
    assert_eq!(back.encode().unwrap(), h(v.unprotected), "verified request");
    assert_eq!(sb, binding);
    // The same bytes again are a replay, refused for that reason.
    assert_eq!(unprotect_request(&v.server, &mut window, &h(v.protected)).unwrap_err(), Error::Replayed(20));
    binding
}

#[test]
fn c4_request_client_with_master_salt() {
    check_request(Req {
        client: ctx(SALT, None, "", "01"),
        server: ctx(SALT, None, "01", ""),
        unprotected: "44015d1f00003974396c6f63616c686f737483747631",
        aad: "8368456e63727970743040488501810a40411440",
        nonce: "4622d4dd6d944168eefb549868",
        protected: "44025d1f00003974396c6f63616c686f7374620914ff612f1092f1776f1c1668b3825e",
    });
}

#[test]
fn c5_request_client_without_master_salt() {
    check_request(Req {
        client: ctx("", None, "00", "01"),
        server: ctx("", None, "01", "00"),
        unprotected: "440171c30000b932396c6f63616c686f737483747631",
        aad: "8368456e63727970743040498501810a4100411440",
        nonce: "bf35ae297d2dace910c52e99ed",
        protected: "440271c30000b932396c6f63616c686f737463091400ff4ed339a5a379b0b8bc731fffb0",
    });
}

#[test]
fn c6_request_client_with_kid_context() {
    let mut client = ctx(SALT, Some(ID_CONTEXT), "", "01");
    client.send_kid_context = true;
    check_request(Req {
        client,
        server: ctx(SALT, Some(ID_CONTEXT), "01", ""),
        unprotected: "44012f8eef9bbf7a396c6f63616c686f737483747631",
        aad: "8368456e63727970743040488501810a40411440",
        nonce: "2ca58fb85ff1b81c0b7181b84a",
        protected: "44022f8eef9bbf7a396c6f63616c686f73746b19140837cbf3210017a2d3ff72cd7273fd331ac45cffbe55c3",
    });
}

const C7_UNPROTECTED: &str = "64455d1f00003974ff48656c6c6f20576f726c6421";

#[test]
fn c7_response_server_without_partial_iv() {
    let server = ctx(SALT, None, "01", "");
    let client = ctx(SALT, None, "", "01");
    // The request of C.4: kid empty, Partial IV 0x14.
    let req = RequestBinding { kid: vec![], piv: vec![0x14] };
    let m = Message::parse(&h(C7_UNPROTECTED)).unwrap();
    assert_eq!(server.nonce(&req.kid, &req.piv).unwrap(), h("4622d4dd6d944168eefb549868"), "nonce");
    let prot = protect_response(&server, &req, &m, None).unwrap();
    let want = h("64445d1f0000397490ffdbaad1e9a7e7b2a813d3c31524378303cdafae119106");
    assert_eq!(prot.encode().unwrap(), want, "protected response");
    let back = unprotect_response(&client, &req, &want).unwrap();
    assert_eq!(back.encode().unwrap(), h(C7_UNPROTECTED), "verified response");
}

#[test]
fn c8_response_server_with_partial_iv() {
    let server = ctx(SALT, None, "01", "");
    let client = ctx(SALT, None, "", "01");
    let req = RequestBinding { kid: vec![], piv: vec![0x14] };
    let m = Message::parse(&h(C7_UNPROTECTED)).unwrap();
    assert_eq!(server.nonce(server.sender_id(), &[0]).unwrap(), h("4722d4dd6d944169eefb54987c"), "nonce");
    let prot = protect_response(&server, &req, &m, Some(&mut MemorySequence::new(0))).unwrap();
    let want = h("64445d1f00003974920100ff4d4c13669384b67354b2b6175ff4b8658c666a6cf88e");
    assert_eq!(prot.encode().unwrap(), want, "protected response");
    let back = unprotect_response(&client, &req, &want).unwrap();
    assert_eq!(back.encode().unwrap(), h(C7_UNPROTECTED), "verified response");
}
