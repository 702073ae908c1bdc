//! One P-256 ECDH (RustCrypto `p256` 0.13, the version lakers uses; EDHOC cipher suite 2): the
//! scalar times RFC 9529 §3's G_R.
#![no_std]
#![no_main]

use oscore_mcu_ecdh as _;
use p256::elliptic_curve::sec1::FromEncodedPoint;
use p256::{AffinePoint, EncodedPoint, NonZeroScalar};

// G_R of RFC 9529 Section 3, uncompressed (x from CRED_R, y from the COSE_Key).
const G_R: [u8; 65] = {
    let x = *b"\xbb\xc3\x49\x60\x52\x6e\xa4\xd3\x2e\x94\x0c\xad\x2a\x23\x41\x48\xdd\xc2\x17\x91\xa1\x2a\xfb\xcb\xac\x93\x62\x20\x46\xdd\x44\xf0";
    let y = *b"\x45\x19\xe2\x57\x23\x6b\x2a\x0c\xe2\x02\x3f\x09\x31\xf1\xf3\x86\xca\x7a\xfd\xa6\x4f\xcd\xe0\x10\x8c\x22\x4c\x51\xea\xbf\x60\x72";
    let mut out = [0u8; 65];
    out[0] = 4;
    let mut i = 0;
    while i < 32 {
        out[1 + i] = x[i];
        out[33 + i] = y[i];
        i += 1;
    }
    out
};

fn mul(k: &[u8; 32]) -> Option<[u8; 32]> {
    let point = EncodedPoint::from_bytes(G_R).ok()?;
    let public = Option::<AffinePoint>::from(AffinePoint::from_encoded_point(&point))?;
    let scalar = Option::<NonZeroScalar>::from(NonZeroScalar::from_repr((*k).into()))?;
    let shared = p256::ecdh::diffie_hellman(scalar, public);
    let mut out = [0u8; 32];
    out.copy_from_slice(shared.raw_secret_bytes());
    Some(out)
}

oscore_mcu_ecdh::ecdh_image!(mul);
