//! The AEADs RFC 8613 gives no vector for (AES-CCM-16-128-128, ChaCha20/Poly1305, A128GCM):
//! key derivation and the C.4 request / C.7 response protected with each, the expected values
//! computed by tests/independent_vectors.py with the `cryptography` package (OpenSSL's HKDF and
//! AEADs) and an OSCORE framing written separately from this crate's, which that script first
//! checks against the RFC's C.4 and C.7.
// The helpers outside #[test] functions panic on bad input too: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use lwcbench_oscore::coap::Message;
use lwcbench_oscore::{
    protect_request, protect_response, unprotect_request, unprotect_response, Algorithm, MemorySequence, ReplayWindow,
    SecurityContext, SecurityParams,
};

fn h(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

struct V {
    alg: Algorithm,
    client_key: &'static str,
    server_key: &'static str,
    common_iv: &'static str,
    request: &'static str,
    response: &'static str,
}

const VECTORS: [V; 3] = [
    V {
        alg: Algorithm::AesCcm16_128_128,
        client_key: "996959531b57e9723ca9c27b54ab201f",
        server_key: "5ec80968acecc5fb714e57834c2e1f5e",
        common_iv: "bbc0ff1df379d836ecb104bfe8",
        request: "44025d1f00003974396c6f63616c686f7374620914ffc6abcf09b06e3e9d75e16a6b515f0154558ba68e47",
        response: "64445d1f0000397490ffe47c31faf36f75fb4cde4a0ec6fb0e80a37756ada649675010b9e2725c79",
    },
    V {
        alg: Algorithm::ChaCha20Poly1305,
        client_key: "d5301eb18d067849950893ba2ac891417c89ae09df4a3855aa000ac9fff38751",
        server_key: "32882a1c6190308438ec98e6a932f020708f3739dfe46d77989b039b1ffc1cac",
        common_iv: "64f0bd314d4be03c270c2b1c",
        request: "44025d1f00003974396c6f63616c686f7374620914ffee8ccc438eb131bf3f8a0f7e585cce70356656160d",
        response: "64445d1f0000397490ff52ab53f5c9afe8d6061dcaf7e00d4f2c6075a6be1ba61697047a57dd5bac",
    },
    V {
        alg: Algorithm::A128Gcm,
        client_key: "70c4c8cb554a796768f3e69932685cdf",
        server_key: "a57918b1b1e153325c2696f9fe26fa14",
        common_iv: "18e102041155706c199c561a",
        request: "44025d1f00003974396c6f63616c686f7374620914ff0a92f69efa3d051b4a878e5a69ff6e094ab015848d",
        response: "64445d1f0000397490ff4d92a8cd5d57762057f7c36c7b0737391608215a449d06cefafd34777835",
    },
];

fn ctx(alg: Algorithm, sender: &[u8], recipient: &[u8]) -> SecurityContext {
    SecurityContext::derive(&SecurityParams {
        alg,
        master_secret: &h("0102030405060708090a0b0c0d0e0f10"),
        master_salt: &h("9e7ca92223786340"),
        id_context: None,
        sender_id: sender,
        recipient_id: recipient,
    })
    .unwrap()
}

#[test]
fn each_aead_matches_an_independent_implementation() {
    let request = Message::parse(&h("44015d1f00003974396c6f63616c686f737483747631")).unwrap();
    let response = Message::parse(&h("64455d1f00003974ff48656c6c6f20576f726c6421")).unwrap();
    for v in VECTORS {
        let name = v.alg.name();
        let client = ctx(v.alg, b"", b"\x01");
        let server = ctx(v.alg, b"\x01", b"");
        assert_eq!(client.sender_key(), h(v.client_key), "{name}: client Sender Key");
        assert_eq!(server.sender_key(), h(v.server_key), "{name}: server Sender Key");
        assert_eq!(client.common_iv(), h(v.common_iv), "{name}: Common IV");

        let (prot, binding) = protect_request(&client, &mut MemorySequence::new(20), &request).unwrap();
        assert_eq!(prot.encode().unwrap(), h(v.request), "{name}: protected request");
        let (back, sb) = unprotect_request(&server, &mut ReplayWindow::default(), &h(v.request)).unwrap();
        assert_eq!(back, request, "{name}: verified request");

        let resp = protect_response(&server, &sb, &response, None).unwrap();
        assert_eq!(resp.encode().unwrap(), h(v.response), "{name}: protected response");
        assert_eq!(unprotect_response(&client, &binding, &h(v.response)).unwrap(), response, "{name}");
    }
}
