//! The facts of `lwcbench link`'s frame and suites that `choose` prices, held here so that
//! `choose` does not depend on the link crate (and Python does not compile the MQTT broker and
//! the PostgreSQL client to rank ciphers). crates/link/tests/choose_facts.rs keeps every value
//! equal to the link's own constants and suites.
use lwcbench_core::Family;

/// Bytes of the link's frame header (crates/link/src/wire/frame.rs `HEADER_LEN`).
pub const HEADER_LEN: usize = 16;
/// Bytes of the compact header on a carrier that numbers and addresses frames itself
/// (crates/link/src/wire/compact.rs `COMPACT_HEADER_LEN`).
pub const COMPACT_HEADER_LEN: usize = 1;
/// Associated data of a compact frame: the compact byte and the header it stands for
/// (compact.rs `COMPACT_AAD_LEN`).
pub const COMPACT_AAD_LEN: usize = 17;
/// The `--carrier` value of the LoRaWAN carrier (compact.rs `LORAWAN_LABEL`).
pub const LORAWAN_CARRIER: &str = "lorawan";

/// The carrier a deployment's frames ride, as the deploy command sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Carrier {
    /// The link's own frame (16-byte header) over MQTT or UDP.
    Own,
    /// LoRaWAN: DevAddr and FCnt are the device id and counter; the compact header.
    Lorawan,
    /// Not the link frame: OSCORE-protected CoAP requests over UDP (`--protocol oscore`), priced
    /// whole (crate::oscore).
    Coap,
}

impl Carrier {
    /// The carrier of a radio: a LoRa radio's frames ride LoRaWAN (data/radio-profiles.csv
    /// prices LoRaWAN's 13-byte overhead), the others the link's own frame.
    pub fn of_radio(radio: &lwcbench_data::radio::Radio) -> Carrier {
        if radio.lora.is_some() {
            Carrier::Lorawan
        } else {
            Carrier::Own
        }
    }
    /// Header bytes on the wire.
    pub fn header_len(self) -> usize {
        match self {
            Carrier::Own => HEADER_LEN,
            Carrier::Lorawan => COMPACT_HEADER_LEN,
            Carrier::Coap => 0,
        }
    }
    /// Associated-data bytes the cipher authenticates.
    pub fn aad_len(self) -> usize {
        match self {
            Carrier::Own => HEADER_LEN,
            Carrier::Lorawan => COMPACT_AAD_LEN,
            Carrier::Coap => 0,
        }
    }
    /// The `lwcbench link` options that send this carrier's frames (the LoRaWAN emulation runs
    /// over loopback UDP).
    pub fn link_args(self) -> &'static [&'static str] {
        match self {
            Carrier::Own => &[],
            Carrier::Lorawan => &["--transport", "udp", "--carrier", LORAWAN_CARRIER],
            Carrier::Coap => &["--protocol", "oscore"],
        }
    }
    /// The header as the output names it.
    pub fn describe(self) -> String {
        match self {
            Carrier::Own => format!("{HEADER_LEN}-byte header"),
            Carrier::Lorawan => format!("{COMPACT_HEADER_LEN}-byte compact header (LoRaWAN DevAddr and FCnt)"),
            Carrier::Coap => "CoAP + OSCORE request (RFC 8613)".to_string(),
        }
    }
}

/// Highest counter of a device under one key (frame.rs `MAX_COUNTER`).
pub const MAX_COUNTER: u64 = (1 << 63) - 1;
/// Largest frame the link carries (frame.rs `MAX_FRAME`).
pub const MAX_FRAME: usize = 256 * 1024;
/// Tag bytes of the link's stream + Poly1305 composition (suite.rs `POLY_TAG`).
pub const POLY_TAG: usize = 16;
/// Keystream bytes the composition uses before the reading (suite.rs `STREAM_SKIP`).
pub const STREAM_SKIP: usize = 64;
/// AEADs whose nonce each frame draws at random and carries (suite.rs `RANDOM_NONCE_CIPHERS`).
pub const RANDOM_NONCE_CIPHERS: &[&str] = &["XChaCha20-Poly1305"];
/// Smallest key the link takes without `--unsafe-short-key`, in bits (suite.rs `MIN_KEY_BITS`).
pub const MIN_KEY_BITS: u32 = 112;
/// Ciphers the link runs only with `--allow-provisional` (gate.rs: DRACO).
pub const PROVISIONAL_CIPHERS: &[&str] = &["DRACO"];
/// Longest `--report-interval` of the link, in seconds (input.rs `MAX_INTERVAL_S`).
pub const MAX_INTERVAL_S: f64 = 86_400.0;

/// The gateway's default failed-tag budget per device for a tag of `tag_bytes`
/// (crates/link/src/gateway/checks.rs `default_max_failed_tags`).
pub fn default_max_failed_tags(tag_bytes: usize) -> u64 {
    if tag_bytes >= 16 {
        1 << 20
    } else {
        1 << 16
    }
}

/// How a link suite gets integrity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The catalogue AEAD, unchanged.
    Aead,
    /// Stream cipher + one-time Poly1305 key from its keystream (this project's composition).
    StreamPoly1305,
}

/// One catalogue entry the link carries, as `lwcbench link` builds its frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkSuite {
    /// The link's frame cipher number.
    pub id: u8,
    /// "cipher/implementation".
    pub name: String,
    /// The catalogue's cipher name.
    pub cipher: String,
    /// AEAD or composition.
    pub kind: Kind,
    /// Tag bytes on the frame.
    pub tag_bytes: usize,
    /// Random nonce bytes each frame carries (0: the nonce comes from device and counter).
    pub random_nonce_bytes: usize,
    /// Key bits.
    pub key_bits: u32,
}

impl LinkSuite {
    /// The flags `lwcbench link` needs to run this suite (gate.rs `flags`).
    pub fn gate_flags(&self) -> Vec<&'static str> {
        let mut f = Vec::new();
        if PROVISIONAL_CIPHERS.iter().any(|n| n.eq_ignore_ascii_case(&self.cipher)) {
            f.push("--allow-provisional");
        }
        if self.key_bits < MIN_KEY_BITS {
            f.push("--unsafe-short-key");
        }
        f
    }
}

/// Every suite the link offers in this build, in the catalogue's link order (suite.rs `offered`).
pub fn suites() -> Vec<LinkSuite> {
    let reg = lwcbench_catalog::registry();
    lwcbench_catalog::link_ids::LINK_IDS
        .iter()
        .filter_map(|&(id, name)| {
            let e = reg.iter().find(|e| e.id() == name)?;
            let kind = match e.info.family {
                Family::Aead => Kind::Aead,
                Family::Stream => Kind::StreamPoly1305,
                Family::Block | Family::Mode => return None,
            };
            let random = RANDOM_NONCE_CIPHERS.iter().any(|n| e.info.name.eq_ignore_ascii_case(n));
            Some(LinkSuite {
                id,
                name: e.id(),
                cipher: e.info.name.to_string(),
                kind,
                tag_bytes: match kind {
                    Kind::Aead => e.info.tag_bytes(),
                    Kind::StreamPoly1305 => POLY_TAG,
                },
                random_nonce_bytes: if kind == Kind::Aead && random { e.info.iv_bytes() } else { 0 },
                key_bits: u32::from(e.info.key_bits),
            })
        })
        .collect()
}
