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
