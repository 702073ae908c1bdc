//! `lwcbench link --protocol oscore`: sensor readings as CoAP POST requests protected with OSCORE
//! (RFC 8613, crate `lwcbench-oscore`) from devices ([`device`]) to a CoAP server on UDP that
//! verifies and stores them ([`gateway`]), with the same store and exactly-once proof as the link
//! frame ([`session`]).
//!
//! Contexts come from the link's key hierarchy (docs/security.md "OSCORE contexts"): the OSCORE
//! Master Secret of device `d` and AEAD `alg` is derived from `d`'s sensor device key
//! ([`crate::wire::keys::DeviceKey::oscore_master_secret`]), so a device holds only its own
//! context; the Master Salt is empty, there is no ID Context, the device's Sender ID is `d` in
//! big-endian bytes without leading zeros (`0x00` for 0) and the gateway's is empty.
//!
//! With `--edhoc` the contexts come from EDHOC instead (docs/protocols.md "EDHOC"): each
//! device's static P-256 key derives from its device key, the gateway's from the master
//! (docs/security.md "EDHOC credentials"); credentials are CCS sent by kid ([`edhoc_kid`]).
//! Cipher suite 2 runs on lakers (`lwcbench_oscore::edhoc`); `--edhoc-suite 0` on this
//! project's own EDHOC (`lwcbench_oscore::edhoc::own`) with static X25519 keys derived alike
//! ([`device_identity_x25519`]).
use lwcbench_oscore::edhoc::{self, own, Identity};
use lwcbench_oscore::{Algorithm, SecurityContext, SecurityParams};
use sha2::Digest;
use zeroize::Zeroizing;

use crate::wire::frame::Family;
use crate::wire::keys::{DeviceKey, MasterKey};

pub mod device;
pub mod gateway;
pub mod session;

/// The OSCORE implementation these modules use (for callers that name its algorithms or states).
pub use lwcbench_oscore;

/// The Echo option (RFC 9175 §2.2.1): Class E under OSCORE.
pub const ECHO: u16 = 252;
/// The Uri-Path of readings and their Content-Format: the request's shape is the OSCORE crate's
/// (`reading::request`), which `lwcbench choose` prices without this crate.
pub use lwcbench_oscore::reading::{OCTET_STREAM, PATH};
/// The gateway's Sender ID.
pub const GATEWAY_ID: &[u8] = b"";
/// The default CoAP port on loopback (RFC 7252 §6.1).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:5683";

/// The AEAD `--cipher` names for OSCORE; Ascon-AEAD128 (and anything else without a registered
/// COSE identifier) is refused with the reason.
pub fn alg_of(name: &str) -> Result<Algorithm, String> {
    Algorithm::from_name(name.trim()).map_err(|e| format!("--cipher with --protocol oscore: {e}"))
}

/// The COSE id of `alg` as one byte (every supported one is below 256).
pub fn alg_byte(alg: Algorithm) -> u8 {
    u8::try_from(alg.cose_id()).unwrap_or(u8::MAX)
}

/// Device `d`'s Sender ID (the kid of its requests): big-endian, no leading zero bytes.
pub fn kid(device: u32) -> Vec<u8> {
    let b = device.to_be_bytes();
    let skip = (device.leading_zeros() / 8).min(3) as usize;
    b[skip..].to_vec()
}

/// The device a kid names; None for a kid that is not one [`kid`] gives.
pub fn device_of_kid(kid_bytes: &[u8]) -> Option<u32> {
    if kid_bytes.is_empty() || kid_bytes.len() > 4 || (kid_bytes.len() > 1 && kid_bytes[0] == 0) {
        return None;
    }
    Some(kid_bytes.iter().fold(0u32, |a, b| a << 8 | u32::from(*b)))
}

fn derive(alg: Algorithm, secret: &[u8], sender: &[u8], recipient: &[u8]) -> Result<SecurityContext, String> {
    SecurityContext::derive(&SecurityParams {
        alg,
        master_secret: secret,
        master_salt: b"",
        id_context: None,
        sender_id: sender,
        recipient_id: recipient,
    })
    .map_err(|e| e.to_string())
}

/// The device side's context: from the device's own key only.
pub fn device_context(key: &DeviceKey, alg: Algorithm) -> Result<SecurityContext, String> {
    if key.family != Family::Sensor {
        return Err(format!(
            "--key-file: the device key is for {} frames; OSCORE devices use sensor keys",
            key.family.label()
        ));
    }
    let secret = key.oscore_master_secret(alg_byte(alg));
    derive(alg, &secret, &kid(key.device), GATEWAY_ID)
}

/// The gateway side's context for `device`: from the master.
pub fn gateway_context(master: &MasterKey, device: u32, alg: Algorithm) -> Result<SecurityContext, String> {
    let secret = master.device(Family::Sensor, device).oscore_master_secret(alg_byte(alg));
    derive(alg, &secret, GATEWAY_ID, &kid(device))
}

/// The kid of device `d`'s EDHOC credential: "d" then its Sender ID bytes ([`kid`]).
pub fn edhoc_kid(device: u32) -> Vec<u8> {
    [b"d".as_slice(), &kid(device)].concat()
}

/// The kid of the gateway's EDHOC credential.
pub const EDHOC_GATEWAY_KID: &[u8] = b"g";

/// The re-key limit by default: 2^20 requests per context, the limit q on encryptions under
/// one key that draft-ietf-core-oscore-key-limits (§2.1.1) recommends for
/// AES-CCM-16-64-128 (AEAD_AES_128_CCM_8), far below RFC 8613 §7.2.1's 2^40 Partial IVs.
pub const DEFAULT_REKEY_AFTER: u64 = 1 << 20;

/// The first candidate that is a valid P-256 scalar (one fails with probability about 2^-32).
fn static_key(candidate: impl Fn(u8) -> Zeroizing<Vec<u8>>) -> Result<Zeroizing<Vec<u8>>, String> {
    (0..=u8::MAX)
        .map(candidate)
        .find(|k| edhoc::private_key_ok(k))
        .ok_or_else(|| "no EDHOC static key among 256 candidates".to_string())
}

/// Device `d`'s EDHOC identity: its static key from its own device key and its credential.
pub fn device_identity(key: &DeviceKey) -> Result<Identity, String> {
    if key.family != Family::Sensor {
        return Err(format!(
            "--key-file: the device key is for {} frames; OSCORE devices use sensor keys",
            key.family.label()
        ));
    }
    let sk = static_key(|n| key.edhoc_key_candidate(n))?;
    let ccs = edhoc::ccs(&format!("lwcbench sensor {}", key.device), &edhoc_kid(key.device), &sk)
        .map_err(|e| e.to_string())?;
    Identity::new(&sk, &ccs).map_err(|e| e.to_string())
}

/// Device `d`'s EDHOC credential (CCS) as the gateway holding the master knows it.
pub fn device_credential(master: &MasterKey, device: u32) -> Result<Vec<u8>, String> {
    let sk = static_key(|n| master.device(Family::Sensor, device).edhoc_key_candidate(n))?;
    edhoc::ccs(&format!("lwcbench sensor {device}"), &edhoc_kid(device), &sk).map_err(|e| e.to_string())
}

/// The gateway's EDHOC identity and its credential (CCS, public: devices need it).
pub fn gateway_identity(master: &MasterKey) -> Result<(Identity, Vec<u8>), String> {
    let sk = static_key(|n| master.edhoc_gateway_key_candidate(n))?;
    let ccs = edhoc::ccs("lwcbench gateway", EDHOC_GATEWAY_KID, &sk).map_err(|e| e.to_string())?;
    let id = Identity::new(&sk, &ccs).map_err(|e| e.to_string())?;
    Ok((id, ccs))
}

/// Device `d`'s EDHOC identity at cipher suite 0 (`--edhoc-suite 0`, this crate's own EDHOC):
/// its static X25519 key from its own device key and a CCS by the kid of [`edhoc_kid`].
pub fn device_identity_x25519(key: &DeviceKey) -> Result<own::Identity, String> {
    if key.family != Family::Sensor {
        return Err(format!(
            "--key-file: the device key is for {} frames; OSCORE devices use sensor keys",
            key.family.label()
        ));
    }
    own::Identity::with_ccs(
        own::KeyKind::X25519,
        &format!("lwcbench sensor {}", key.device),
        &edhoc_kid(key.device),
        &key.edhoc_x25519_key(),
    )
    .map_err(|e| e.to_string())
}

/// Device `d`'s EDHOC credential at cipher suite 0 as the gateway holding the master knows it.
pub fn device_credential_x25519(master: &MasterKey, device: u32) -> Result<own::Credential, String> {
    Ok(device_identity_x25519(&master.device(Family::Sensor, device))?.credential().clone())
}

/// The gateway's EDHOC identity at cipher suite 0 (its credential is public: devices need it).
pub fn gateway_identity_x25519(master: &MasterKey) -> Result<own::Identity, String> {
    own::Identity::with_ccs(
        own::KeyKind::X25519,
        "lwcbench gateway",
        EDHOC_GATEWAY_KID,
        &master.edhoc_gateway_x25519_key(),
    )
    .map_err(|e| e.to_string())
}

/// A credential as `lwcbench link gateway --edhoc` prints it: lowercase hex.
pub fn credential_hex(ccs: &[u8]) -> String {
    hex::encode(ccs)
}

/// The gateway's credential a device is given, at its cipher suite.
#[derive(Clone)]
pub enum GatewayCredential {
    /// Suite 2: a CCS with a P-256 key, for lakers.
    Suite2(edhoc::Credential),
    /// Suite 0: a CCS with an X25519 key, for the own EDHOC.
    Suite0(own::Credential),
}

/// The gateway's credential from `--gateway-credential HEX` for a device at cipher suite
/// `suite`: at most 256 bytes, then [`gateway_credential`] (the other suite's key is refused:
/// the handshake could not succeed).
pub fn credential_from_hex(text: &str, suite: own::EdhocSuite) -> Result<GatewayCredential, String> {
    let t = text.trim();
    if t.len() > 512 {
        return Err(format!("--gateway-credential: {} hex digits (a credential has at most 512)", t.len()));
    }
    let ccs = hex::decode(t).map_err(|_| {
        "--gateway-credential: expected the hex the gateway prints after 'edhoc-credential'".to_string()
    })?;
    gateway_credential(&ccs, suite).map_err(|e| format!("--gateway-credential: {e}"))
}

/// The gateway's credential from its CCS (what it prints after `edhoc-credential`) for a device
/// at cipher suite `suite`: a kid and the suite's static DH key (P-256 at 2, X25519 at 0); a
/// credential of the other suite's key is refused naming both suites.
pub fn gateway_credential(ccs: &[u8], suite: own::EdhocSuite) -> Result<GatewayCredential, String> {
    let c = own::Credential::ccs_kid(ccs).map_err(|e| e.to_string())?;
    match (suite, c.kind()) {
        (own::EdhocSuite::Suite2, own::KeyKind::P256) => {
            edhoc::credential(ccs).map(GatewayCredential::Suite2).map_err(|e| e.to_string())
        }
        (own::EdhocSuite::Suite0, own::KeyKind::X25519) => Ok(GatewayCredential::Suite0(c)),
        (own::EdhocSuite::Suite2, own::KeyKind::X25519) => {
            Err("an X25519 key (a cipher suite 0 gateway's); --edhoc-suite 2 takes a P-256 one".into())
        }
        (own::EdhocSuite::Suite0, own::KeyKind::P256) => {
            Err("a P-256 key (a cipher suite 2 gateway's); --edhoc-suite 0 takes an X25519 one".into())
        }
        (_, own::KeyKind::Ed25519) => {
            Err("an Ed25519 key (a signature key); EDHOC method 3 takes a static DH key".into())
        }
    }
}

/// The store's key id for OSCORE readings under `master` with `alg`: not the master's own
/// fingerprint, so an OSCORE sequence number never meets a link frame counter of the same device
/// in the store's unique (key, device, counter) key, and one per algorithm (each has its own
/// contexts and so its own sequence numbers).
pub fn store_key_id(master_fingerprint: &str, alg: Algorithm) -> String {
    let mut h = sha2::Sha256::new();
    h.update(b"lwcbench-link oscore store key\0");
    h.update(master_fingerprint.as_bytes());
    h.update([0, alg_byte(alg)]);
    hex::encode(&h.finalize()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kids_are_minimal_big_endian_and_round_trip() {
        assert_eq!(kid(0), [0]);
        assert_eq!(kid(40), [40]);
        assert_eq!(kid(256), [1, 0]);
        assert_eq!(kid(u32::MAX), [0xff; 4]);
        for d in [0, 1, 255, 256, 65_535, 1 << 24, u32::MAX] {
            assert_eq!(device_of_kid(&kid(d)), Some(d));
        }
        assert_eq!(device_of_kid(b""), None, "the gateway's own id is no device");
        assert_eq!(device_of_kid(&[0, 1]), None);
        assert_eq!(device_of_kid(&[1; 5]), None);
    }

    /// The Master Secret derivation: expected value computed independently with Python's
    /// hmac/hashlib (RFC 5869) from docs/security.md: device key of (master [7; 32], sensor, 40),
    /// then info "lwcbench-link oscore master secret" 0 "sensor" 0 0x0a, L = 32.
    #[test]
    fn master_secret_matches_an_independent_hkdf() {
        let m = MasterKey::from_bytes([7; 32]);
        let s = m.device(Family::Sensor, 40).oscore_master_secret(10);
        assert_eq!(hex::encode(&s[..]), "14f997cc15c4aaec11d9d1ed04fea6d9ff8178d7f61a872183dcbe4d7427c245");
        assert_ne!(s[..], m.device(Family::Sensor, 40).oscore_master_secret(24)[..], "one secret per AEAD");
    }

    #[test]
    fn device_and_gateway_contexts_mirror_each_other() {
        let m = MasterKey::from_bytes([9; 32]);
        for alg in lwcbench_oscore::alg::ALL {
            let d = device_context(&m.device(Family::Sensor, 3), alg).unwrap();
            let g = gateway_context(&m, 3, alg).unwrap();
            assert_eq!(d.sender_key(), g.recipient_key());
            assert_eq!(d.recipient_key(), g.sender_key());
            assert_eq!(d.sender_id(), [3]);
        }
        let e = device_context(&m.device(Family::Video, 3), Algorithm::A128Gcm).err().unwrap();
        assert!(e.contains("sensor keys"), "{e}");
        let e = alg_of("Ascon-AEAD128").unwrap_err();
        assert!(e.contains("IANA COSE Algorithms registry"), "{e}");
        assert_ne!(store_key_id(&m.fingerprint(), Algorithm::A128Gcm), m.fingerprint());
    }
}
