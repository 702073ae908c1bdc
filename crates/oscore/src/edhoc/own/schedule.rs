//! The key schedule (RFC 9528 §4) and transcript hashes (§5.3.2, §5.4.2): EDHOC_Extract is
//! HMAC-SHA-256 (HKDF-Extract), EDHOC_Expand is HKDF-Expand with
//! `info = (info_label: int, context: bstr, length: uint)`, a CBOR sequence. Pure functions of
//! their inputs, so each intermediate value of RFC 9529's traces is checked on its own.
use alloc::vec::Vec;

use hkdf::Hkdf;
use sha2::{Digest, Sha256};
use zeroize::{Zeroize, Zeroizing};

use super::suites::HASH_LEN;
use crate::cbor;

/// A pseudorandom key (wiped on drop).
pub type Prk = Zeroizing<[u8; HASH_LEN]>;
/// A transcript hash.
pub type Th = [u8; HASH_LEN];

/// SHA-256 of the concatenation of `parts`.
pub fn hash(parts: &[&[u8]]) -> Th {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    let mut out = [0u8; HASH_LEN];
    out.copy_from_slice(&h.finalize());
    out
}

fn bstr(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() + 3);
    cbor::bstr(&mut out, b);
    out
}

/// EDHOC_Extract(salt, IKM) = HMAC-SHA-256(salt, IKM).
pub fn extract(salt: &[u8], ikm: &[u8]) -> Prk {
    let (mut prk, _) = Hkdf::<Sha256>::extract(Some(salt), ikm);
    let mut out = Zeroizing::new([0u8; HASH_LEN]);
    out.copy_from_slice(&prk);
    prk.as_mut_slice().zeroize();
    out
}

/// The largest output EDHOC_Expand gives (HKDF-Expand's 255 blocks of SHA-256).
pub const MAX_EXPAND: usize = 255 * HASH_LEN;

/// EDHOC_KDF(PRK, info_label, context, length) = EDHOC_Expand(PRK, info, length). `None` when
/// `length` exceeds [`MAX_EXPAND`].
pub fn kdf(prk: &[u8; HASH_LEN], label: u64, context: &[u8], length: usize) -> Option<Zeroizing<Vec<u8>>> {
    let mut info = Vec::with_capacity(context.len() + 12);
    cbor::head(&mut info, 0, label);
    cbor::bstr(&mut info, context);
    cbor::head(&mut info, 0, length as u64);
    let hk = Hkdf::<Sha256>::from_prk(prk).ok()?;
    let mut out = Zeroizing::new(alloc::vec![0u8; length]);
    hk.expand(&info, &mut out).ok()?;
    Some(out)
}

/// EDHOC_KDF with a 32-byte output (salts and PRKs).
fn kdf32(prk: &[u8; HASH_LEN], label: u64, context: &[u8]) -> Prk {
    let mut out = Zeroizing::new([0u8; HASH_LEN]);
    if let Some(v) = kdf(prk, label, context, HASH_LEN) {
        out.copy_from_slice(&v);
    }
    out
}

/// TH_2 = H( G_Y, H(message_1) ), both as byte strings (§5.3.2).
pub fn th_2(g_y: &[u8], message_1: &[u8]) -> Th {
    hash(&[&bstr(g_y), &bstr(&hash(&[message_1]))])
}

/// TH_3 = H( TH_2, PLAINTEXT_2, CRED_R ) and TH_4 = H( TH_3, PLAINTEXT_3, CRED_I ) (§5.3.2,
/// §5.4.2): the previous hash as a byte string, the plaintext and the credential as they are.
pub fn th_next(th: &Th, plaintext: &[u8], cred: &[u8]) -> Th {
    hash(&[&bstr(th), plaintext, cred])
}

/// PRK_2e = EDHOC_Extract( TH_2, G_XY ) (§4.1.1.1).
pub fn prk_2e(th_2: &Th, g_xy: &[u8]) -> Prk {
    extract(th_2, g_xy)
}

/// PRK_3e2m (§4.1.1.2): PRK_2e when the Responder signs; with its static DH key,
/// EDHOC_Extract( SALT_3e2m, G_RX ), SALT_3e2m = EDHOC_KDF( PRK_2e, 1, TH_2, hash_length ).
pub fn prk_3e2m(prk_2e: &Prk, th_2: &Th, g_rx: Option<&[u8]>) -> Prk {
    match g_rx {
        None => prk_2e.clone(),
        Some(g) => extract(&*kdf32(prk_2e, 1, th_2), g),
    }
}

/// PRK_4e3m (§4.1.1.3): PRK_3e2m when the Initiator signs; with its static DH key,
/// EDHOC_Extract( SALT_4e3m, G_IY ), SALT_4e3m = EDHOC_KDF( PRK_3e2m, 5, TH_3, hash_length ).
pub fn prk_4e3m(prk_3e2m: &Prk, th_3: &Th, g_iy: Option<&[u8]>) -> Prk {
    match g_iy {
        None => prk_3e2m.clone(),
        Some(g) => extract(&*kdf32(prk_3e2m, 5, th_3), g),
    }
}

/// KEYSTREAM_2 = EDHOC_KDF( PRK_2e, 0, TH_2, plaintext_length ) (§5.3.2).
pub fn keystream_2(prk_2e: &Prk, th_2: &Th, len: usize) -> Option<Zeroizing<Vec<u8>>> {
    kdf(prk_2e, 0, th_2, len)
}

/// MAC_2 = EDHOC_KDF( PRK_3e2m, 2, context_2, mac_length_2 ), context_2 = << C_R, ID_CRED_R,
/// TH_2, CRED_R, ? EAD_2 >> (§5.3.2); `c_r` is C_R's CBOR encoding.
pub fn mac_2(
    prk_3e2m: &Prk,
    c_r: &[u8],
    id_cred_r: &[u8],
    th_2: &Th,
    cred_r: &[u8],
    ead_2: &[u8],
    len: usize,
) -> Zeroizing<Vec<u8>> {
    let context = [c_r, id_cred_r, &bstr(th_2), cred_r, ead_2].concat();
    kdf(prk_3e2m, 2, &context, len).unwrap_or_default()
}

/// MAC_3 = EDHOC_KDF( PRK_4e3m, 6, context_3, mac_length_3 ), context_3 = << ID_CRED_I, TH_3,
/// CRED_I, ? EAD_3 >> (§5.4.2).
pub fn mac_3(
    prk_4e3m: &Prk,
    id_cred_i: &[u8],
    th_3: &Th,
    cred_i: &[u8],
    ead_3: &[u8],
    len: usize,
) -> Zeroizing<Vec<u8>> {
    let context = [id_cred_i, &bstr(th_3), cred_i, ead_3].concat();
    kdf(prk_4e3m, 6, &context, len).unwrap_or_default()
}

/// The COSE_Sign1 message signed for Signature_or_MAC_2/3 (§5.3.2, §5.4.2):
/// `[ "Signature1", << ID_CRED_x >>, << TH_x, CRED_x, ? EAD_x >>, MAC_x ]`.
pub fn to_be_signed(id_cred: &[u8], th: &Th, cred: &[u8], ead: &[u8], mac: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(cred.len() + 120);
    cbor::array(&mut out, 4);
    cbor::tstr(&mut out, "Signature1");
    cbor::bstr(&mut out, id_cred);
    cbor::bstr(&mut out, &[&bstr(th)[..], cred, ead].concat());
    cbor::bstr(&mut out, mac);
    out
}

/// The AEAD key and nonce of message_3 (labels 3, 4 from PRK_3e2m and TH_3) or message_4
/// (labels 8, 9 from PRK_4e3m and TH_4), and the additional data
/// `[ "Encrypt0", h'', TH ]` (§5.4.2, §5.5.2).
pub fn aead_inputs(prk: &Prk, th: &Th, key_label: u64) -> (Zeroizing<Vec<u8>>, Zeroizing<Vec<u8>>, Vec<u8>) {
    use super::suites::{IV_LEN, KEY_LEN};
    let key = kdf(prk, key_label, th, KEY_LEN).unwrap_or_default();
    let iv = kdf(prk, key_label + 1, th, IV_LEN).unwrap_or_default();
    let mut aad = Vec::with_capacity(46);
    cbor::array(&mut aad, 3);
    cbor::tstr(&mut aad, "Encrypt0");
    cbor::bstr(&mut aad, &[]);
    cbor::bstr(&mut aad, th);
    (key, iv, aad)
}

/// PRK_out = EDHOC_KDF( PRK_4e3m, 7, TH_4, hash_length ) (§4.1.3).
pub fn prk_out(prk_4e3m: &Prk, th_4: &Th) -> Prk {
    kdf32(prk_4e3m, 7, th_4)
}

/// PRK_exporter = EDHOC_KDF( PRK_out, 10, h'', hash_length ) (§4.2.1).
pub fn prk_exporter(prk_out: &Prk) -> Prk {
    kdf32(prk_out, 10, &[])
}

/// The new PRK_out of EDHOC_KeyUpdate: EDHOC_KDF( PRK_out, 11, context, hash_length )
/// (Appendix H).
pub fn key_update(prk_out: &Prk, context: &[u8]) -> Prk {
    kdf32(prk_out, 11, context)
}
