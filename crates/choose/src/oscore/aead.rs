//! The OSCORE AEADs `choose` offers (data/oscore-aeads.csv), `--framing` and `--cipher`'s names
//! under it: the leaf the options, the candidate facts and the filters share.
use std::sync::OnceLock;

use lwcbench_oscore::Algorithm;
use serde::Serialize;

use crate::fmt;

/// The built-in data/oscore-aeads.csv.
pub const AEADS_CSV: &str = include_str!("../../../../data/oscore-aeads.csv");
/// The Sender ID (kid) of the device priced: device 0's, one byte, as `lwcbench link --protocol
/// oscore` gives it (the deploy command runs one device).
pub const DEVICE_KID: [u8; 1] = [0];

/// Sender sequence numbers of one OSCORE context: 0 to 2^40 - 1 (RFC 8613 §7.2.1).
pub const SEQ_SPACE: f64 = (lwcbench_oscore::MAX_SEQ as f64) + 1.0;

/// The AEAD of the OSCORE context EDHOC cipher suite 2 establishes (RFC 9528 Appendix A.1).
pub const EDHOC_AEAD: Algorithm = Algorithm::AesCcm16_64_128;

/// The `--framing` of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Framing {
    /// The link's own frame (the default).
    Link,
    /// OSCORE over CoAP.
    Oscore,
    /// Both, ranked together.
    Auto,
}

impl Framing {
    /// `--framing`'s value; None is the link frame.
    pub fn parse(s: Option<&str>) -> Result<Framing, String> {
        match s.map(str::trim) {
            None | Some("") | Some("link") => Ok(Framing::Link),
            Some("oscore") => Ok(Framing::Oscore),
            Some("auto") => Ok(Framing::Auto),
            Some(other) => Err(format!("--framing: '{}' is not one of link, oscore, auto", fmt::prefix(other))),
        }
    }
    /// The value as `--framing` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Framing::Link => "link",
            Framing::Oscore => "oscore",
            Framing::Auto => "auto",
        }
    }
    /// Whether the link frame's candidates are offered.
    pub fn link(self) -> bool {
        self != Framing::Oscore
    }
    /// Whether the OSCORE candidates are offered.
    pub fn oscore(self) -> bool {
        self != Framing::Link
    }
}

/// `--cipher`'s names. Under `--framing oscore` each must be an AEAD OSCORE can name: one without
/// a COSE identifier (Ascon-AEAD128) is refused with the reason, as `lwcbench link --protocol
/// oscore` refuses it.
pub fn cipher_names(s: Option<&str>, framing: Framing) -> Result<Vec<String>, String> {
    let Some(s) = s else { return Ok(Vec::new()) };
    let names: Vec<String> = s.split(',').map(|n| n.trim().to_string()).collect();
    if let Some(bad) = names.iter().find(|n| n.is_empty() || n.len() > 64 || n.chars().any(char::is_control)) {
        return Err(format!("--cipher: '{}' is not a cipher name", fmt::prefix(bad)));
    }
    if framing == Framing::Oscore {
        for n in &names {
            Algorithm::from_name(n).map_err(|e| format!("--cipher with --framing oscore: {e}"))?;
        }
    }
    Ok(names)
}

/// A row of data/oscore-aeads.csv.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OscoreAead {
    /// The AEAD (its key, nonce and tag are the OSCORE crate's).
    #[serde(skip)]
    pub alg: Algorithm,
    /// The COSE name.
    pub algorithm: String,
    /// The COSE identifier.
    pub cose_id: i64,
    /// The catalogue cipher of the images that compute it.
    pub image_cipher: String,
    /// Why the image computes the same AEAD.
    pub why: String,
    /// The link frame's suite of the same primitive (docs/protocols.md's comparison).
    pub link_cipher: String,
    /// sourced or estimate.
    pub status: String,
    /// Where the parameters come from.
    pub source: String,
}

/// Parse an OSCORE AEAD table; the error names the file and line. Every algorithm must be one
/// the OSCORE crate implements, under its own COSE identifier.
pub fn parse_aeads(text: &str, origin: &str) -> Result<Vec<OscoreAead>, String> {
    let cols = ["algorithm", "cose_id", "image_cipher", "why", "link_cipher", "status", "source"];
    let mut out: Vec<OscoreAead> = Vec::new();
    for (line, f) in lwcbench_data::board::records(text, origin, &cols)? {
        if let Some(i) = [2, 3, 4, 6].into_iter().find(|&i| f[i].is_empty()) {
            return Err(format!("{origin}: line {line}: column {} is empty", cols[i]));
        }
        let alg = Algorithm::from_name(&f[0]).map_err(|e| format!("{origin}: line {line}: {e}"))?;
        let cose_id: i64 =
            f[1].parse().map_err(|_| format!("{origin}: line {line}: cose_id '{}' is not an integer", f[1]))?;
        if cose_id != alg.cose_id() {
            return Err(format!(
                "{origin}: line {line}: {} is COSE algorithm {}, not {cose_id}",
                alg.name(),
                alg.cose_id()
            ));
        }
        if !matches!(f[5].as_str(), "sourced" | "estimate") {
            return Err(format!("{origin}: line {line}: status '{}' is not sourced or estimate", f[5]));
        }
        if out.iter().any(|r| r.alg == alg) {
            return Err(format!("{origin}: line {line}: {} appears twice", alg.name()));
        }
        out.push(OscoreAead {
            alg,
            algorithm: alg.name().to_string(),
            cose_id,
            image_cipher: f[2].clone(),
            why: f[3].clone(),
            link_cipher: f[4].clone(),
            status: f[5].clone(),
            source: f[6].clone(),
        });
    }
    Ok(out)
}

/// The built-in table (empty if the compiled-in copy is broken: a test checks it parses).
pub fn aeads() -> &'static [OscoreAead] {
    static T: OnceLock<Vec<OscoreAead>> = OnceLock::new();
    T.get_or_init(|| parse_aeads(AEADS_CSV, "data/oscore-aeads.csv").unwrap_or_default())
}

/// A candidate's id: "OSCORE AES-CCM-16-64-128", with the implementation when it is not the
/// RustCrypto image.
pub fn id(a: &OscoreAead, implementation: &str) -> String {
    if implementation == "rustcrypto" {
        format!("OSCORE {}", a.algorithm)
    } else {
        format!("OSCORE {} ({implementation})", a.algorithm)
    }
}
