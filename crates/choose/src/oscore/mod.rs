//! OSCORE (RFC 8613) as a framing `choose` offers beside the link frame (`--framing oscore|auto`,
//! docs/choose.md "OSCORE"): the OSCORE AEADs as candidates, each run by the microcontroller
//! image data/oscore-aeads.csv maps it to, priced with the exact bytes of the protected CoAP POST
//! a `lwcbench link --protocol oscore` device sends ([`lwcbench_oscore::reading::protected_size`]),
//! and EDHOC's handshake as a one-time cost (`--edhoc`, data/edhoc-cost.csv). The AEAD table and
//! `--framing` are in [`aead`], the handshake in [`edhoc`], `auto`'s verdict in [`verdict`].
use lwcbench_oscore::Algorithm;

use crate::data::{Data, Facts, Source};
use crate::fmt;
use crate::options::Request;
use crate::oscore::aead::{aeads, OscoreAead, DEVICE_KID};
use crate::priced::Priced;

pub mod aead;
pub mod edhoc;
pub mod verdict;

/// Whether `--cipher`'s `name` names the candidate of `f`.
pub fn named(f: &Facts, name: &str) -> bool {
    match f.source {
        Source::Oscore(a) => Algorithm::from_name(name).is_ok_and(|x| x == a.alg) || f.id().eq_ignore_ascii_case(name),
        _ => f.cipher.eq_ignore_ascii_case(name) || f.id().eq_ignore_ascii_case(name),
    }
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
