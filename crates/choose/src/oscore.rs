//! OSCORE (RFC 8613) as a framing `choose` offers beside the link frame (`--framing oscore|auto`,
//! docs/choose.md "OSCORE"): the OSCORE AEADs as candidates, each run by the microcontroller
//! image data/oscore-aeads.csv maps it to, priced with the exact bytes of the protected CoAP POST
//! a `lwcbench link --protocol oscore` device sends ([`lwcbench_oscore::reading::protected_size`]),
//! and EDHOC's handshake as a one-time cost (`--edhoc`, data/edhoc-cost.csv).
use std::sync::OnceLock;

use lwcbench_oscore::Algorithm;
use serde::Serialize;

use crate::data::{Data, Facts, Source};
use crate::fmt;
use crate::options::Request;
use crate::priced::Priced;

/// The built-in data/oscore-aeads.csv.
pub const AEADS_CSV: &str = include_str!("../../../data/oscore-aeads.csv");
/// The built-in data/edhoc-cost.csv.
pub const EDHOC_CSV: &str = include_str!("../../../data/edhoc-cost.csv");

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

/// Whether `--cipher`'s `name` names the candidate of `f`.
pub fn named(f: &Facts, name: &str) -> bool {
    match f.source {
        Source::Oscore(a) => Algorithm::from_name(name).is_ok_and(|x| x == a.alg) || f.id().eq_ignore_ascii_case(name),
        _ => f.cipher.eq_ignore_ascii_case(name) || f.id().eq_ignore_ascii_case(name),
    }
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

/// The OSCORE candidates on a board: one per AEAD and implementation of its image cipher with
/// cycles on the board (the RustCrypto image when none has, so the image filter says why).
pub fn oscore_facts(data: &Data, req: &Request) -> Vec<Facts> {
    let mut out = Vec::new();
    for a in aeads() {
        let mut imps: Vec<&str> = data
            .cycles
            .iter()
            .filter(|c| c.board == req.cycles_from && c.target == req.board.target && c.cipher == a.image_cipher)
            .map(|c| c.implementation.as_str())
            .collect();
        imps.dedup();
        if imps.is_empty() {
            imps.push("rustcrypto");
        }
        for imp in imps {
            out.push(Facts {
                cipher: a.image_cipher.clone(),
                implementation: imp.to_string(),
                link: None,
                block: false,
                key_bits: (a.alg.key_len() * 8) as u32,
                nonce_bytes: a.alg.nonce_len(),
                tag_bytes: a.alg.tag_len(),
                random_nonce_bytes: 0,
                source: Source::Oscore(a),
            });
        }
    }
    out
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

/// The sender sequence number of the last report over `--lifetime` (the largest Partial IV the
/// device sends), at most the OSCORE crate's last one.
pub fn last_seq(req: &Request) -> u64 {
    let n = req.messages() - 1.0;
    if n >= lwcbench_oscore::MAX_SEQ as f64 {
        lwcbench_oscore::MAX_SEQ
    } else {
        n.max(0.0) as u64
    }
}

/// The request of the request's reading under `alg` at the lifetime's last sequence number.
pub fn request_size(req: &Request, alg: Algorithm) -> Result<lwcbench_oscore::reading::Size, String> {
    lwcbench_oscore::reading::protected_size(alg, &DEVICE_KID, last_seq(req), req.payload)
        .map_err(|e| format!("--payload: {} B under OSCORE {}: {e}", req.payload, alg.name()))
}

/// The crypto of an OSCORE candidate per message: its image's encrypt + tag over the AAD and
/// the plaintext of the protected request, and the request's bytes (None without an image or
/// when the request does not fit a datagram).
pub fn oscore_priced(req: &Request, data: &Data, f: &Facts, a: &OscoreAead) -> Option<(Priced, usize, String)> {
    let b = &req.board;
    let c = req.cycles(&f.cipher, &f.implementation)?;
    let sz = data.size(&b.target, &f.cipher, &f.implementation)?;
    let band = data.band(&c.timing_model)?;
    let s = request_size(req, a.alg).ok()?;
    // As the link frame's AEADs: the key schedule once per context, per message the encrypt
    // phase with the associated data counted like message bytes, plus the one cold start.
    let cycles = c.per_message((s.aad + s.plaintext) as f64, req.messages());
    let edhoc = req.edhoc.as_ref().map(|e| e.per_message_j(req.messages())).unwrap_or(0.0);
    let seq = last_seq(req);
    let priced = Priced {
        cycles,
        crypto_j: b.energy_j(cycles) + edhoc,
        crypto_s: cycles / (b.clock_mhz * 1e6),
        error: band.error_pct / 100.0,
        flash: sz.flash,
        ram: sz.ram_static + sz.stack,
        tag: s.tag,
        source: format!(
            "emulated on {} ({} model, {} MHz; data/emulated-cycles.csv image {}, the {} image data/oscore-aeads.csv maps {} to: {}), ±{} % ({}), × datasheet active power {:.4} W (data/board-power.csv, {}); encrypt + tag over the {}-byte AAD (RFC 8613 §5.4) + {}-byte plaintext, key schedule once per security context, warm cache + one cold start over the lifetime's reports{}",
            if c.board == b.id { b.id.clone() } else { format!("{}'s memory profile for {}", c.board, b.id) },
            c.timing_model, b.clock_mhz, c.image, a.image_cipher, a.algorithm, a.why, band.error_pct, band.source,
            b.active_w(), b.status, s.aad, s.plaintext,
            match &req.edhoc {
                Some(e) => format!("; + EDHOC once per device ({:.1} µJ) over the {} reports", e.energy_uj, fmt::num(req.messages())),
                None => String::new(),
            }
        ),
        flash_ram_source: format!(
            "measured here (data/mcu-sizes.csv: image {} on {}; RAM = static + stack): the AEAD only, the CoAP/OSCORE code is not counted",
            sz.image, sz.target
        ),
    };
    let radio = format!(
        "modelled: time on air of the {}-byte OSCORE request (CoAP header 4 + token {} + OSCORE option with a {}-byte Partial IV at sequence number {seq} and the 1-byte kid + payload marker + {}-byte ciphertext of the inner code, options and reading + {}-byte tag; lwcbench_oscore::reading) × transmit power, data/radio-profiles.csv {} ({}: {})",
        s.request, lwcbench_oscore::reading::TOKEN_LEN, s.piv, s.plaintext, s.tag, req.radio.name, req.radio.status, req.radio.source
    );
    Some((priced, s.request, radio))
}

/// EDHOC's handshake on the request's board: a one-time cost per device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EdhocCost {
    /// message_1 to message_4 in bytes (without CoAP).
    pub messages_bytes: [u64; 4],
    /// Bytes the device sends (message_1 and message_3).
    pub sent_bytes: u64,
    /// Round trips before the first OSCORE request.
    pub round_trips: u64,
    /// P-256 scalar multiplications on the device.
    pub scalar_mults: u64,
    /// Emulated cycles of one P-256 ECDH on the board.
    pub ecdh_cycles: f64,
    /// All of the device's scalar multiplications, in cycles.
    pub cycles: f64,
    /// Their time at the board's clock, in seconds.
    pub seconds: f64,
    /// Their energy plus sending message_1 and message_3, in µJ.
    pub energy_uj: f64,
    /// Where the figures come from.
    pub source: String,
}

impl EdhocCost {
    /// The handshake's energy spread over `messages` reports, in J.
    pub fn per_message_j(&self, messages: f64) -> f64 {
        self.energy_uj * 1e-6 / messages.max(1.0)
    }
    /// The answer's line.
    pub fn line(&self, board: &str, messages: f64) -> String {
        let m = self.messages_bytes;
        format!(
            "once per device: {} B in 4 messages ({}/{}/{}/{} B, without CoAP), {} round trips, {} P-256 scalar multiplications × {} cycles = {:.1} M cycles ({}) on {board}; {:.1} µJ with sending message_1 and message_3, {:.3} µJ per report over {} reports (in the energy above)",
            m.iter().sum::<u64>(), m[0], m[1], m[2], m[3], self.round_trips, self.scalar_mults,
            self.ecdh_cycles, self.cycles / 1e6, fmt::secs(self.seconds), self.energy_uj,
            self.energy_uj / messages.max(1.0), fmt::num(messages)
        )
    }
}

/// `--edhoc` on board `board` (priced with the emulated cycles of `cycles_from`) and `radio`:
/// the handshake from data/edhoc-cost.csv; a board without an emulated P-256 ECDH is refused.
pub fn edhoc_cost(
    board: &lwcbench_data::board::Board,
    cycles_from: &str,
    radio: &lwcbench_data::radio::Radio,
) -> Result<EdhocCost, String> {
    let origin = "data/edhoc-cost.csv";
    let rows =
        lwcbench_data::board::records(EDHOC_CSV, origin, &["item", "board", "value", "unit", "status", "source"])?;
    let get = |item: &str, board: &str| -> Option<(f64, String)> {
        rows.iter().find(|(_, f)| f[0] == item && f[1] == board).and_then(|(_, f)| {
            f[2].parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).map(|v| (v, f[5].clone()))
        })
    };
    let need = |item: &str| get(item, "").ok_or_else(|| format!("{origin}: no valid {item} row"));
    let mut messages = [0u64; 4];
    for (i, m) in messages.iter_mut().enumerate() {
        *m = need(&format!("message_{}", i + 1))?.0 as u64;
    }
    let (round_trips, _) = need("round_trips")?;
    let (mults, _) = need("scalar_mults")?;
    let boards: Vec<&str> = rows.iter().filter(|(_, f)| f[0] == "p256_ecdh").map(|(_, f)| f[1].as_str()).collect();
    let (ecdh, ecdh_source) = get("p256_ecdh", cycles_from).ok_or_else(|| {
        format!("--edhoc: no emulated P-256 ECDH for {} in {origin} (boards: {})", board.id, boards.join(", "))
    })?;
    let cycles = ecdh * mults;
    let sent = messages[0] + messages[2];
    let radio_j = radio.energy_j(messages[0] as usize) + radio.energy_j(messages[2] as usize);
    Ok(EdhocCost {
        messages_bytes: messages,
        sent_bytes: sent,
        round_trips: round_trips as u64,
        scalar_mults: mults as u64,
        ecdh_cycles: ecdh,
        cycles,
        seconds: cycles / (board.clock_mhz * 1e6),
        energy_uj: (board.energy_j(cycles) + radio_j) * 1e6,
        source: format!(
            "{origin}: {ecdh_source}; {} scalar multiplications per side (RFC 9528 method 3); the rest of the handshake (SHA-256, HKDF, AES-CCM, CBOR) and receiving message_2 and message_4 not counted",
            mults
        ),
    })
}

/// Which framing ranks first under `--framing auto`, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FramingVerdict {
    /// `link`, `oscore` or `tie`.
    pub winner: String,
    /// The sentence the text answer prints.
    pub line: String,
}

/// The verdict of `--framing auto` over the ranked candidates.
pub fn auto_verdict(ranked: &[&crate::filter::Candidate]) -> FramingVerdict {
    let is_oscore = |c: &&&crate::filter::Candidate| c.id.starts_with("OSCORE ");
    let best_o = ranked.iter().find(is_oscore);
    let best_l = ranked.iter().find(|c| !is_oscore(c));
    let show = |c: &crate::filter::Candidate| match (&c.figures, c.rank, c.score) {
        (Some(g), Some(r), Some(s)) => format!(
            "{} (rank {r}, score {:.3}: {} B in {}, {:.1} µJ, {:.1} ms)",
            c.id,
            s.value,
            g.frame_bytes,
            lwcbench_data::physics::packets_label(g.packets),
            g.energy_uj.value,
            g.latency_ms.value
        ),
        _ => c.id.clone(),
    };
    match (best_o, best_l) {
        (None, None) => FramingVerdict { winner: "none".into(), line: "no candidate of either framing passes".into() },
        (Some(o), None) => FramingVerdict {
            winner: "oscore".into(),
            line: format!("OSCORE wins: {}; no link-frame candidate passes", show(o)),
        },
        (None, Some(l)) => FramingVerdict {
            winner: "link".into(),
            line: format!("the link frame wins: {}; no OSCORE candidate passes", show(l)),
        },
        (Some(o), Some(l)) if o.rank == l.rank => FramingVerdict {
            winner: "tie".into(),
            line: format!("a tie within the error model: OSCORE {} and the link frame {}", show(o), show(l)),
        },
        (Some(o), Some(l)) => {
            let (w, win, lose) = if o.rank < l.rank { ("oscore", o, l) } else { ("link", l, o) };
            let name = if w == "oscore" { "OSCORE" } else { "the link frame" };
            FramingVerdict { winner: w.into(), line: format!("{name} wins: {} against {}", show(win), show(lose)) }
        }
    }
}

/// docs/protocols.md's table for `board`: per OSCORE AEAD, the request of a `reading`-byte reading
/// at sequence number `seq` and its image's emulated cycles per message (warm: the encrypt
/// phase over AAD + plaintext), beside the link frame of the same primitive (16-byte header +
/// reading + tag, its image's cycles over header + reading). A test keeps the document equal
/// to it.
pub fn overhead_table(board: &str, reading: usize, seq: u64) -> Result<String, String> {
    let cycles = lwcbench_data::board::cycles_table();
    let row = |cipher: &str| {
        cycles.iter().find(|c| c.board == board && c.cipher == cipher && c.implementation == "rustcrypto")
    };
    let suites = crate::link_facts::suites();
    let mut s = String::from(
        "| OSCORE AEAD | image | request B | AEAD cycles | link cipher | frame B | link cycles |\n|---|---|---:|---:|---|---:|---:|\n",
    );
    for a in aeads() {
        let sz =
            lwcbench_oscore::reading::protected_size(a.alg, &DEVICE_KID, seq, reading).map_err(|e| e.to_string())?;
        let c = row(&a.image_cipher).ok_or_else(|| format!("no {} image on {board}", a.image_cipher))?;
        let link = suites
            .iter()
            .find(|x| x.name == format!("{}/rustcrypto", a.link_cipher))
            .ok_or_else(|| format!("no link suite {}/rustcrypto", a.link_cipher))?;
        let lc = row(&a.link_cipher).ok_or_else(|| format!("no {} image on {board}", a.link_cipher))?;
        let header = crate::link_facts::HEADER_LEN;
        s.push_str(&format!(
            "| {} | {} | {} | {:.0} | {} | {} | {:.0} |\n",
            a.algorithm,
            c.image,
            sz.request,
            c.message((sz.aad + sz.plaintext) as f64),
            link.name,
            header + reading + link.tag_bytes,
            lc.message((header + reading) as f64),
        ));
    }
    Ok(s)
}
