//! Data loading: the built-in tables (data/cipher-status.csv, data/mcu-sizes.csv,
//! data/emulator-error.csv, data/emulated-cycles.csv through lwcbench-data) and the candidates'
//! catalogue facts (key, nonce, tag, the link suite that carries them).
use lwcbench_data::board::Cycles;
pub use lwcbench_data::mcu::{
    parse_errors, parse_sizes, parse_status, ErrorBand, Size, Status, ERROR_CSV, SIZES_CSV, STATUS_CSV,
};

use crate::link_facts::{self, Kind, LinkSuite};

/// The built-in tables.
pub struct Data {
    /// data/cipher-status.csv.
    pub status: Vec<Status>,
    /// data/mcu-sizes.csv.
    pub sizes: Vec<Size>,
    /// data/emulator-error.csv.
    pub errors: Vec<ErrorBand>,
    /// data/emulated-cycles.csv.
    pub cycles: &'static [Cycles],
}

impl Data {
    /// The tables compiled in from data/.
    pub fn builtin() -> Data {
        Data {
            status: lwcbench_data::mcu::status(),
            sizes: lwcbench_data::mcu::sizes(),
            errors: lwcbench_data::mcu::errors(),
            cycles: lwcbench_data::board::cycles_table(),
        }
    }
    /// The measured image size of `cipher`/`implementation` on `target`.
    pub fn size(&self, target: &str, cipher: &str, implementation: &str) -> Option<&Size> {
        self.sizes.iter().find(|s| s.target == target && s.cipher == cipher && s.implementation == implementation)
    }
    /// The status row of `cipher`.
    pub fn status_of(&self, cipher: &str) -> Option<&Status> {
        self.status.iter().find(|s| s.cipher == cipher)
    }
    /// The error band of a timing model.
    pub fn band(&self, timing_model: &str) -> Option<&ErrorBand> {
        self.errors.iter().find(|e| e.timing_model == timing_model)
    }
}

/// Where a candidate's figures come from.
#[derive(Clone, Copy, Debug)]
pub enum Source {
    /// This project's microcontroller image (data/emulated-cycles.csv, data/mcu-sizes.csv).
    Image,
    /// An on-chip crypto engine of the board's chip (data/crypto-engines.csv).
    Engine(&'static lwcbench_data::engines::Engine),
    /// A NIST LWC implementation emulated on the board (data/nistlwc-cycles.csv).
    NistLwc(&'static lwcbench_data::nistlwc::NistCycles),
    /// An OSCORE AEAD run by this project's image of the same algorithm (data/oscore-aeads.csv).
    Oscore(&'static crate::oscore::OscoreAead),
}

/// One candidate's catalogue facts, before any request.
#[derive(Clone, Debug)]
pub struct Facts {
    /// Catalogue cipher name.
    pub cipher: String,
    /// Catalogue implementation name.
    pub implementation: String,
    /// The link suite that carries it (None: not on the link).
    pub link: Option<LinkSuite>,
    /// True for a block cipher or mode (no integrity of its own, not on the link).
    pub block: bool,
    /// Key bits.
    pub key_bits: u32,
    /// Nonce bytes.
    pub nonce_bytes: usize,
    /// Tag bytes on the link's frame (0 off the link).
    pub tag_bytes: usize,
    /// Random nonce bytes each link frame carries (XChaCha20-Poly1305: 24; the others 0).
    pub random_nonce_bytes: usize,
    /// Where its figures come from (crate::engines adds the engine and NIST LWC candidates).
    pub source: Source,
}

impl Facts {
    /// "cipher/implementation"; an engine or NIST LWC candidate by its label, which names its
    /// source ("AES-128-CCM (CryptoCell-310)", "Ascon-128 (NIST LWC armv7m, inline-asm)").
    pub fn id(&self) -> String {
        match self.source {
            Source::Image => format!("{}/{}", self.cipher, self.implementation),
            Source::Engine(e) => e.label(),
            Source::NistLwc(r) => r.label(),
            Source::Oscore(a) => crate::oscore::id(a, &self.implementation),
        }
    }
    /// The link's frame cipher number.
    pub fn link_id(&self) -> Option<u8> {
        self.link.as_ref().map(|s| s.id)
    }
    /// How the link gets integrity with it.
    pub fn kind(&self) -> Option<Kind> {
        match self.source {
            // OSCORE seals with the COSE AEAD itself.
            Source::Oscore(_) => Some(Kind::Aead),
            _ => self.link.as_ref().map(|s| s.kind),
        }
    }
}

/// Every catalogue entry the link carries, and every entry with a microcontroller image.
pub fn catalogue_facts(data: &Data) -> Vec<Facts> {
    let reg = lwcbench_catalog::registry();
    let suites = link_facts::suites();
    let mut ids: Vec<String> = suites.iter().map(|s| s.name.clone()).collect();
    for c in data.cycles {
        let id = format!("{}/{}", c.cipher, c.implementation);
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let mut out = Vec::new();
    for id in ids {
        // An image of a catalogue cipher in another language (the ESP8266's C ChaCha20-Poly1305,
        // checked against RFC 8439 in mcu/tests) is the same algorithm on the wire: it takes the
        // catalogue entry's facts and the link suite of that cipher, under its own implementation.
        // An AEAD the link does not carry (the ESP8266's C CCM*, checked against RFC 3610 and
        // CCMVS in mcu/tests) takes the facts of the catalogue's AEAD entry of that cipher name.
        let (cipher, implementation) = id.split_once('/').unwrap_or((id.as_str(), ""));
        let exact = reg.iter().find(|e| e.id() == id);
        let suite_of_cipher = || suites.iter().find(|s| s.name.split_once('/').is_some_and(|(c, _)| c == cipher));
        let aead_of_cipher =
            || reg.iter().find(|e| e.info.name == cipher && e.info.family == lwcbench_core::Family::Aead);
        let Some(e) = exact
            .or_else(|| {
                let s = suite_of_cipher()?;
                reg.iter().find(|e| e.id() == s.name)
            })
            .or_else(aead_of_cipher)
        else {
            continue;
        };
        let s = match exact {
            Some(_) => suites.iter().find(|s| s.name == id).cloned(),
            None => suite_of_cipher().cloned(),
        };
        let block = matches!(e.info.family, lwcbench_core::Family::Block | lwcbench_core::Family::Mode);
        out.push(Facts {
            cipher: e.info.name.to_string(),
            implementation: if exact.is_some() {
                e.info.implementation.to_string()
            } else {
                implementation.to_string()
            },
            // an AEAD the link does not carry still has its own tag (the filters name it)
            tag_bytes: s.as_ref().map(|s| s.tag_bytes).unwrap_or(if e.info.family == lwcbench_core::Family::Aead {
                usize::from(e.info.tag_bits) / 8
            } else {
                0
            }),
            random_nonce_bytes: s.as_ref().map(|s| s.random_nonce_bytes).unwrap_or(0),
            link: s,
            block,
            key_bits: u32::from(e.info.key_bits),
            nonce_bytes: e.info.iv_bytes(),
            source: Source::Image,
        });
    }
    out
}
