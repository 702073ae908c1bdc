//! The compact header for a carrier that already numbers and addresses its frames (docs/link.md
//! "Compact header (LoRaWAN)", docs/security.md "Nonces under the compact header").
//!
//! LoRaWAN gives every uplink its DevAddr and a 32-bit frame counter FCnt that the network
//! server checks and never lets repeat within a session; the link then sends neither a device id
//! nor a counter of its own. The sealed bytes are exactly the LoRaWAN FRMPayload:
//!
//! ```text
//! offset size field
//! 0      1    compact byte: bits 7..6 = 01 (compact format 1, LoRaWAN carrier), bits 5..0 = cipher id
//! 1      r    random nonce (r = 24 for XChaCha20-Poly1305, else 0)
//! 1+r    n    ciphertext
//! ...    t    tag
//! ```
//!
//! The link's fields the carrier gives are not sent but authenticated, and they make the nonce:
//!
//! ```text
//! counter          = join epoch (u32) << 32 | FCnt (u32)
//! associated data  = compact byte ‖ the version-3 header of (type sensor, cipher id, flags 0,
//!                    device id = DevAddr, counter)                        (17 bytes)
//! nonce            = frame::nonce(DevAddr, counter)
//! key              = keys::carrier_key(…, "lorawan", join epoch): its own key per epoch
//! ```
//!
//! The emulation (`lwcbench link --carrier lorawan`, over loopback UDP) puts the carrier's fields
//! in front of the FRMPayload as the network server hands them to an application, and strips
//! them before the frame is opened:
//!
//! ```text
//! envelope = DevAddr (u32 BE) ‖ FCnt (u32 BE) ‖ FRMPayload
//! ```
use crate::wire::frame::{self, Header, Proto};
use crate::wire::keys::KeySource;
use crate::wire::suite::{Keyed, OpenError, Suite};

/// Bytes of the compact header on the wire (the compact byte).
pub const COMPACT_HEADER_LEN: usize = 1;
/// Bytes of the associated data: the compact byte and the version-3 header it stands for.
pub const COMPACT_AAD_LEN: usize = COMPACT_HEADER_LEN + frame::HEADER_LEN;
/// The compact byte's top two bits for format 1 (LoRaWAN carrier).
pub const COMPACT_FORMAT: u8 = 0b0100_0000;
/// Highest cipher id the compact byte holds (6 bits).
pub const MAX_COMPACT_CIPHER: u8 = 0x3F;
/// Bytes of the emulation's carrier envelope (DevAddr, FCnt).
pub const ENVELOPE_LEN: usize = 8;
/// Highest join epoch: keeps the counter's top bit clear (frame::MAX_COUNTER).
pub const MAX_EPOCH: u32 = (1 << 31) - 1;
/// The carrier's label in the key derivation (keys::carrier_key).
pub const LORAWAN_LABEL: &str = "lorawan";

/// A LoRaWAN carrier as `lwcbench link --carrier lorawan` emulates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Carrier {
    /// DevAddr of the first device; device i has `dev_addr + i`.
    pub dev_addr: u32,
    /// The emulated stack's first FCnt (None: where the device's counter state left off).
    pub fcnt_from: Option<u32>,
    /// The join epoch: raised at every (re-)join, when LoRaWAN restarts FCnt at 0.
    pub epoch: u32,
}

/// Carriers that do not number frames with a counter the link may take as its nonce, and why.
const REFUSED: &[(&str, &str)] = &[
    ("mqtt", "MQTT numbers packets with 16-bit ids that are reused, not a per-device counter that never repeats"),
    ("udp", "UDP carries no frame counter"),
    ("tcp", "TCP's sequence numbers are per connection and restart with every connection"),
    ("ble", "the BLE link layer's packet counter is not given to the application and restarts with every connection"),
    ("802.15.4", "this link has no 802.15.4 emulation to take the MAC frame counter from"),
];

impl Carrier {
    /// `--carrier`, `--dev-addr`, `--fcnt-from`, `--join-epoch` with `--transport`: None for the
    /// link's own header; the refusal names the option and the reason.
    pub fn parse(
        carrier: &str,
        dev_addr: Option<&str>,
        fcnt_from: Option<u32>,
        epoch: Option<u32>,
        transport: &str,
    ) -> Result<Option<Carrier>, String> {
        let c = carrier.trim().to_ascii_lowercase();
        if c == "none" {
            let given = [(dev_addr.is_some(), "--dev-addr"), (fcnt_from.is_some(), "--fcnt-from")]
                .into_iter()
                .chain([(epoch.is_some(), "--join-epoch")])
                .find(|(g, _)| *g);
            return match given {
                Some((_, opt)) => Err(format!("{opt} applies to --carrier lorawan only")),
                None => Ok(None),
            };
        }
        if let Some((name, why)) = REFUSED.iter().find(|(n, _)| *n == c) {
            return Err(format!(
                "--carrier {name}: {why}; the compact header needs a carrier counter that never repeats under one \
                 key (lorawan), so this carrier keeps the link's own header (--carrier none)"
            ));
        }
        if c != LORAWAN_LABEL {
            return Err(format!("--carrier: '{}' is not none or lorawan", crate::input::shown(carrier)));
        }
        if transport != "udp" {
            return Err(format!(
                "--carrier lorawan: the LoRaWAN emulation runs over --transport udp (--transport {} carries no DevAddr \
                 or FCnt)",
                crate::input::shown(transport)
            ));
        }
        let dev_addr = match dev_addr {
            None => 0,
            Some(s) => {
                let t = s.trim();
                let t = t.strip_prefix("0x").unwrap_or(t);
                if t.is_empty() || t.len() > 8 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(format!("--dev-addr: '{}' is not a DevAddr of 1-8 hex digits", crate::input::shown(s)));
                }
                u32::from_str_radix(t, 16).map_err(|e| format!("--dev-addr: {e}"))?
            }
        };
        let epoch = epoch.unwrap_or(0);
        if epoch > MAX_EPOCH {
            return Err(format!("--join-epoch: {epoch} is above {MAX_EPOCH}"));
        }
        Ok(Some(Carrier { dev_addr, fcnt_from, epoch }))
    }

    /// The device ids (DevAddrs) of `devices` devices.
    pub fn device_ids(&self, devices: u32) -> Result<Vec<u32>, String> {
        let last = self
            .dev_addr
            .checked_add(devices.saturating_sub(1))
            .ok_or_else(|| format!("--dev-addr: {:08X} + {devices} devices passes FFFFFFFF", self.dev_addr))?;
        Ok((self.dev_addr..=last).collect())
    }

    /// The link counter of FCnt `fcnt` in this epoch.
    pub fn counter(&self, fcnt: u32) -> u64 {
        (u64::from(self.epoch) << 32) | u64::from(fcnt)
    }

    /// The instance of `suite` for `device` under its carrier key of this epoch.
    pub fn keyed(&self, suite: &Suite, key: &impl KeySource, device: u32) -> Result<Keyed, String> {
        if suite.id > MAX_COMPACT_CIPHER {
            return Err(format!("--carrier lorawan: cipher id {} does not fit the compact byte", suite.id));
        }
        let k = crate::wire::keys::carrier_key(
            key,
            Proto::Sensor,
            device,
            suite.id,
            suite.key_len(),
            LORAWAN_LABEL,
            self.epoch,
        )?;
        Keyed::new(suite, &k, Proto::Sensor, false)
    }

    /// What run.json says of the carrier.
    pub fn describe(&self) -> String {
        format!(
            "LoRaWAN emulated on loopback UDP: compact {COMPACT_HEADER_LEN}-byte header, DevAddr from {:08X}, join \
             epoch {}, FCnt {}",
            self.dev_addr,
            self.epoch,
            match self.fcnt_from {
                Some(f) => format!("from {f}"),
                None => "continuing the counter state".into(),
            }
        )
    }
}

/// The compact byte of cipher `cipher`.
pub fn compact_byte(cipher: u8) -> u8 {
    COMPACT_FORMAT | (cipher & MAX_COMPACT_CIPHER)
}

/// The associated data of a compact frame of cipher `cipher` from `device` under `counter`.
pub fn aad(cipher: u8, device: u32, counter: u64) -> [u8; COMPACT_AAD_LEN] {
    let mut a = [0u8; COMPACT_AAD_LEN];
    a[0] = compact_byte(cipher);
    a[1..].copy_from_slice(&Header::new(Proto::Sensor, cipher, 0, device, counter).encode());
    a
}

/// Seal `reading` as the FRMPayload of (DevAddr `device`, `counter`) into `out`.
pub fn seal(keyed: &mut Keyed, device: u32, counter: u64, reading: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    if keyed.suite.id > MAX_COMPACT_CIPHER || keyed.tag_len() == 0 {
        return Err(format!("--carrier lorawan: {} cannot be sent with the compact header", keyed.suite.name()));
    }
    keyed.seal_with_header(&aad(keyed.suite.id, device, counter), device, counter, reading, out)?;
    // The 16 bytes after the compact byte are the carrier's and the deployment's: not sent.
    out.drain(COMPACT_HEADER_LEN..COMPACT_AAD_LEN);
    Ok(())
}

/// The header a compact FRMPayload stands for (DevAddr `device`, link counter `counter`): the
/// cipher id from its compact byte, the rest implicit. Structure only.
pub fn parse(payload: &[u8], device: u32, counter: u64) -> Result<Header, &'static str> {
    let b = *payload.first().ok_or("empty FRMPayload")?;
    if b & !MAX_COMPACT_CIPHER != COMPACT_FORMAT {
        return Err("unknown compact format");
    }
    if counter > frame::MAX_COUNTER {
        return Err("counter has its top bit set");
    }
    Ok(Header::new(Proto::Sensor, b & MAX_COMPACT_CIPHER, 0, device, counter))
}

/// Check and decrypt a compact FRMPayload whose header was parsed as `h`.
pub fn open(keyed: &mut Keyed, h: &Header, payload: &[u8]) -> Result<Vec<u8>, OpenError> {
    if payload.len() < COMPACT_HEADER_LEN || payload[0] != compact_byte(h.cipher) {
        return Err(OpenError::Malformed);
    }
    let mut whole = Vec::with_capacity(payload.len() + frame::HEADER_LEN);
    whole.extend_from_slice(&aad(h.cipher, h.device, h.counter));
    whole.extend_from_slice(&payload[COMPACT_HEADER_LEN..]);
    keyed.open_with_header(COMPACT_AAD_LEN, h.device, h.counter, &whole)
}

/// The emulation's envelope around `payload`.
pub fn envelope(dev_addr: u32, fcnt: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(ENVELOPE_LEN + payload.len());
    v.extend_from_slice(&dev_addr.to_be_bytes());
    v.extend_from_slice(&fcnt.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// (DevAddr, FCnt, FRMPayload) of an envelope.
pub fn strip(msg: &[u8]) -> Result<(u32, u32, &[u8]), &'static str> {
    if msg.len() > frame::MAX_FRAME {
        return Err("frame larger than the 256 KiB limit");
    }
    if msg.len() < ENVELOPE_LEN + COMPACT_HEADER_LEN {
        return Err("shorter than the carrier envelope and the compact header");
    }
    let dev = u32::from_be_bytes([msg[0], msg[1], msg[2], msg[3]]);
    let fcnt = u32::from_be_bytes([msg[4], msg[5], msg[6], msg[7]]);
    Ok((dev, fcnt, &msg[ENVELOPE_LEN..]))
}

/// The header and FRMPayload of an envelope received under `carrier`.
pub fn parse_envelope<'a>(carrier: &Carrier, msg: &'a [u8]) -> Result<(Header, &'a [u8]), &'static str> {
    let (dev, fcnt, payload) = strip(msg)?;
    Ok((parse(payload, dev, carrier.counter(fcnt))?, payload))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::keys::MasterKey;
    use crate::wire::suite::find;

    /// The bytes written out by hand from the layouts above: ChaCha20-Poly1305 is cipher id 11
    /// (docs/link.md "Cipher ids"), so its compact byte is 0x40 | 0x0B = 0x4B; DevAddr
    /// 0x26011F2A, epoch 1, FCnt 0x00000105 give counter 0x00000001_00000105.
    #[test]
    fn compact_bytes_by_hand() {
        let c = Carrier { dev_addr: 0x2601_1F2A, fcnt_from: None, epoch: 1 };
        assert_eq!(c.counter(0x105), 0x0000_0001_0000_0105);
        assert_eq!(compact_byte(11), 0x4B);
        assert_eq!(
            aad(11, 0x2601_1F2A, c.counter(0x105)),
            [0x4B, 0x03, 0x01, 0x0B, 0x00, 0x26, 0x01, 0x1F, 0x2A, 0, 0, 0, 0x01, 0, 0, 0x01, 0x05]
        );
        assert_eq!(envelope(0x2601_1F2A, 0x105, &[0x4B, 0xEE]), [0x26, 0x01, 0x1F, 0x2A, 0, 0, 0x01, 0x05, 0x4B, 0xEE]);
        let msg = [0x26, 0x01, 0x1F, 0x2A, 0, 0, 0x01, 0x05, 0x4B, 0xEE];
        let (h, p) = parse_envelope(&c, &msg).unwrap();
        assert_eq!(h, Header::new(Proto::Sensor, 11, 0, 0x2601_1F2A, 0x0000_0001_0000_0105));
        assert_eq!(p, [0x4B, 0xEE]);
    }

    /// The FRMPayload is the compact byte then exactly what RFC 8439's AEAD gives for the key,
    /// the nonce and the 17-byte associated data above, computed by the `chacha20poly1305` crate
    /// (an implementation independent of the link's suite code).
    #[test]
    fn sealed_frmpayload_is_rfc8439_over_the_implicit_header() {
        use chacha20poly1305::aead::{Aead as _, KeyInit, Payload};
        let m = MasterKey::from_bytes([7; 32]);
        let c = Carrier { dev_addr: 0x2601_1F2A, fcnt_from: None, epoch: 1 };
        let s = find("ChaCha20-Poly1305/rustcrypto").unwrap();
        let mut k = c.keyed(&s, &m, 0x2601_1F2A).unwrap();
        let mut out = Vec::new();
        seal(&mut k, 0x2601_1F2A, c.counter(0x105), b"21.5 C", &mut out).unwrap();
        assert_eq!(out.len(), 1 + 6 + 16, "compact byte + reading + tag");
        assert_eq!(out[0], 0x4B);
        let key = crate::wire::keys::carrier_key(&m, Proto::Sensor, 0x2601_1F2A, 11, 32, "lorawan", 1).unwrap();
        // nonce = counter (8 B BE) ‖ DevAddr (4 B BE)
        let nonce = [0, 0, 0, 1, 0, 0, 1, 5, 0x26, 0x01, 0x1F, 0x2A];
        let ad = aad(11, 0x2601_1F2A, c.counter(0x105));
        let want = chacha20poly1305::ChaCha20Poly1305::new_from_slice(&key)
            .unwrap()
            .encrypt(&nonce.into(), Payload { msg: b"21.5 C", aad: &ad })
            .unwrap();
        assert_eq!(out[1..], want[..]);
        let h = parse(&out, 0x2601_1F2A, c.counter(0x105)).unwrap();
        assert_eq!(open(&mut k, &h, &out).unwrap(), b"21.5 C");
        // Another FCnt, DevAddr or epoch in the associated data: the tag fails.
        for (d, ctr) in [(0x2601_1F2A, c.counter(0x106)), (0x2601_1F2B, c.counter(0x105)), (0x2601_1F2A, 0x105)] {
            let h = parse(&out, d, ctr).unwrap();
            assert_eq!(open(&mut k, &h, &out), Err(OpenError::BadTag), "{d:x} {ctr:x}");
        }
    }

    #[test]
    fn parse_refuses_bad_structure() {
        assert!(parse(&[], 1, 1).is_err());
        assert_eq!(parse(&[0x0B], 1, 1), Err("unknown compact format"));
        assert_eq!(parse(&[0xCB], 1, 1), Err("unknown compact format"));
        assert_eq!(parse(&[0x03, 0x01], 1, 1), Err("unknown compact format"), "a full header is not compact");
        assert!(strip(&[0u8; 8]).is_err());
        assert!(strip(&vec![0u8; frame::MAX_FRAME + 1]).is_err());
    }

    #[test]
    fn carriers_without_a_counter_are_refused() {
        for c in ["mqtt", "udp", "tcp", "ble", "802.15.4"] {
            let e = Carrier::parse(c, None, None, None, "udp").unwrap_err();
            assert!(e.starts_with(&format!("--carrier {c}: ")) && e.contains("never repeats"), "{e}");
            assert!(!e.contains('\n'));
        }
        let e = Carrier::parse("lorawan", None, None, None, "mqtt").unwrap_err();
        assert!(e.contains("--transport udp"), "{e}");
        assert_eq!(Carrier::parse("none", None, None, None, "mqtt"), Ok(None));
        assert_eq!(
            Carrier::parse("none", Some("1"), None, None, "udp").unwrap_err(),
            "--dev-addr applies to --carrier lorawan only"
        );
        assert!(Carrier::parse("lorawan", Some("xyz"), None, None, "udp").unwrap_err().starts_with("--dev-addr"));
        assert!(Carrier::parse("lorawan", None, None, Some(1 << 31), "udp").unwrap_err().starts_with("--join-epoch"));
        let c = Carrier::parse("LoRaWAN", Some("0x26011F2A"), Some(9), Some(2), "udp").unwrap().unwrap();
        assert_eq!(c, Carrier { dev_addr: 0x2601_1F2A, fcnt_from: Some(9), epoch: 2 });
        assert_eq!(c.device_ids(2).unwrap(), [0x2601_1F2A, 0x2601_1F2B]);
        let top = Carrier { dev_addr: u32::MAX, fcnt_from: None, epoch: 0 };
        assert!(top.device_ids(2).is_err());
        assert!(Carrier::parse("lora", None, None, None, "udp").unwrap_err().contains("not none or lorawan"));
    }
}
