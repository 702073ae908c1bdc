//! One X25519 (RFC 7748; `x25519-dalek` 2, EDHOC cipher suite 0's key exchange): the scalar
//! times RFC 7748 §6.1's Bob public key.
#![no_std]
#![no_main]

use oscore_mcu_ecdh as _;

// Bob's public key, RFC 7748 Section 6.1.
const BOB: [u8; 32] = *b"\xde\x9e\xdb\x7d\x7b\x7d\xc1\xb4\xd3\x5b\x61\xc2\xec\xe4\x35\x37\x3f\x83\x43\xc8\x5b\x78\x67\x4d\xad\xfc\x7e\x14\x6f\x88\x2b\x4f";

fn mul(k: &[u8; 32]) -> Option<[u8; 32]> {
    Some(x25519_dalek::x25519(*k, BOB))
}

oscore_mcu_ecdh::ecdh_image!(mul);
