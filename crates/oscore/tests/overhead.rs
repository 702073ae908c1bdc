//! Bytes OSCORE adds to a reading POSTed over CoAP, against the hand-computed count in
//! docs/oscore.md: the OSCORE option (1-byte option head, 1 flag byte, the Partial IV, the kid),
//! the inner code byte, the inner payload marker, and the tag: 4 + PIV + kid + tag bytes.
// The helpers outside #[test] functions panic on bad input too: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use lwcbench_oscore::coap::{mtype, opt, Message};
use lwcbench_oscore::{protect_request, Algorithm, MemorySequence, SecurityContext, SecurityParams};

#[test]
fn a_reading_costs_4_plus_piv_plus_kid_plus_tag_bytes() {
    let mut plain = Message::new(mtype::NON, 0x02, 1, &[0xaa, 0xbb]);
    plain.add_option(opt::URI_PATH, b"r");
    plain.payload = vec![0x55; 24];
    let plain_len = plain.encode().unwrap().len();
    // (algorithm, sequence number, its Partial IV bytes, expected overhead): kid is 1 byte.
    for (alg, seq, piv, want) in [
        (Algorithm::AesCcm16_64_128, 0, 1, 14),
        (Algorithm::AesCcm16_64_128, 300, 2, 15),
        (Algorithm::AesCcm16_64_128, 1 << 24, 4, 17),
        (Algorithm::AesCcm16_128_128, 300, 2, 23),
        (Algorithm::ChaCha20Poly1305, 300, 2, 23),
        (Algorithm::A128Gcm, 300, 2, 23),
    ] {
        let c = SecurityContext::derive(&SecurityParams {
            alg,
            master_secret: &[1; 16],
            master_salt: b"",
            id_context: None,
            sender_id: b"\x05",
            recipient_id: b"",
        })
        .unwrap();
        let (m, b) = protect_request(&c, &mut MemorySequence::new(seq), &plain).unwrap();
        assert_eq!(b.piv.len(), piv);
        let got = m.encode().unwrap().len() - plain_len;
        assert_eq!(got, want, "{} at sequence number {seq}", alg.name());
        assert_eq!(got, 4 + piv + 1 + alg.tag_len());
    }
}

/// The request a device sends for a 16-byte reading, counted by hand from RFC 7252 §3 and RFC
/// 8613 §6.1 for AES-CCM-16-64-128, kid 0x00, sequence number 300 (Partial IV 0x01 0x2c):
/// CoAP header 4 + token 4 + OSCORE option 5 (option head: delta 9, length 4; flag byte; Partial
/// IV 2; kid 1) + payload marker 1 + ciphertext 22 (inner code 1, Uri-Path "r" 2, Content-Format
/// 42 2, inner payload marker 1, reading 16) + tag 8 = 44. The AAD (§5.4): array(3) 1, "Encrypt0"
/// 9, h'' 1, and the external_aad bstr 1 + 10 (array(5) 1, version 1, [10] 2, kid 2, PIV 3, h''
/// 1) = 22.
#[test]
fn a_devices_16_byte_reading_matches_the_hand_count() {
    use lwcbench_oscore::reading::{protected_size, Size};
    let s = protected_size(Algorithm::AesCcm16_64_128, &[0], 300, 16).unwrap();
    assert_eq!(s, Size { request: 44, aad: 22, plaintext: 22, tag: 8, piv: 2 });
    // 16-byte tags: 8 bytes more; sequence number 0 has a one-byte Partial IV.
    assert_eq!(protected_size(Algorithm::A128Gcm, &[0], 300, 16).unwrap().request, 52);
    assert_eq!(protected_size(Algorithm::AesCcm16_64_128, &[0], 0, 16).unwrap().request, 43);
    // The datagram limit and the sequence number space are refused, not wrapped.
    assert!(protected_size(Algorithm::AesCcm16_64_128, &[0], 0, 65_500).is_err());
    assert!(protected_size(Algorithm::AesCcm16_64_128, &[0], lwcbench_oscore::MAX_SEQ + 1, 16).is_err());
}
