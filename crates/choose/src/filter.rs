//! The hard filters, typed: each candidate passes every one or gets one reason per filter that
//! removed it. Status, claimed security, constant time and superseded versions come from
//! data/cipher-status.csv; the tag, the integrity and the counter from the link's facts; the
//! image, flash, RAM and schedule from the candidate's figures on the board.
use serde::Serialize;

use crate::data::{Data, Facts, Status};
use crate::figures::{counter_space, figures, Figures, Span};
use crate::fmt;
use crate::link_facts::{default_max_failed_tags, Kind};
use crate::options::{Request, Require};

/// A hard filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Filter {
    /// No status row, a provisional reconstruction, or a status below `--require`.
    Status,
    /// A version its designers or a standard replaced (unless `--require any`).
    Superseded,
    /// A claimed security level below `--security`.
    Security,
    /// An implementation whose time depends on secret data (unless `--allow-variable-time`).
    ConstantTime,
    /// No integrity on the link (a block cipher, or not carried by the link).
    Integrity,
    /// A tag shorter than `--tag`.
    Tag,
    /// No microcontroller image for the board's core.
    Image,
    /// Flash above `--flash`.
    Flash,
    /// Static RAM + stack above `--ram`.
    Ram,
    /// Fewer nonces than the messages over `--lifetime`.
    Counter,
    /// A report that does not end within `--interval`.
    Schedule,
    /// A schedule that breaks `--region`'s duty-cycle or dwell-time limit or uplink rates.
    Region,
    /// An OSCORE AEAD the EDHOC cipher suite implemented here does not establish (`--edhoc`).
    Handshake,
}

impl Filter {
    /// The name in JSON and in the verdict lines.
    pub fn name(self) -> &'static str {
        match self {
            Filter::Status => "status",
            Filter::Superseded => "superseded",
            Filter::Security => "security",
            Filter::ConstantTime => "constant_time",
            Filter::Integrity => "integrity",
            Filter::Tag => "tag",
            Filter::Image => "image",
            Filter::Flash => "flash",
            Filter::Ram => "ram",
            Filter::Counter => "counter",
            Filter::Schedule => "schedule",
            Filter::Region => "region",
            Filter::Handshake => "handshake",
        }
    }
    /// The option the filter answers to, for the error when nothing passes.
    pub fn option(self) -> &'static str {
        match self {
            Filter::Status => "--require/--allow-provisional",
            Filter::Superseded => "--require",
            Filter::Security => "--security",
            Filter::ConstantTime => "--allow-variable-time",
            Filter::Integrity => "--require",
            Filter::Tag => "--tag",
            Filter::Image => "--board",
            Filter::Flash => "--flash",
            Filter::Ram => "--ram",
            Filter::Counter => "--lifetime",
            Filter::Schedule => "--interval",
            Filter::Region => "--interval/--radio/--region",
            Filter::Handshake => "--edhoc",
        }
    }
    /// Whether an option the user may loosen removes it (the board's images are not tunable).
    pub fn tunable(self) -> bool {
        !matches!(self, Filter::Image | Filter::Integrity)
    }
}

/// A candidate's status as deployed on the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The primitive and mode exactly as a standard specifies them.
    Standard,
    /// This project's stream + Poly1305 composition: no standard specifies it.
    Composition,
    /// A competition portfolio (eSTREAM, CAESAR), no standard.
    Portfolio,
    /// A NIST LWC finalist that was not selected.
    Finalist,
    /// This project's reconstruction: never deployable.
    Provisional,
    /// None of the above.
    None,
    /// No row in data/cipher-status.csv.
    Unknown,
}

impl Level {
    /// The level as data/cipher-status.csv and the JSON spell it.
    pub fn name(self) -> &'static str {
        match self {
            Level::Standard => "standard",
            Level::Composition => "composition",
            Level::Portfolio => "portfolio",
            Level::Finalist => "finalist",
            Level::Provisional => "provisional",
            Level::None => "none",
            Level::Unknown => "unknown",
        }
    }
    fn of_row(s: &str) -> Level {
        match s {
            "standard" => Level::Standard,
            "portfolio" => Level::Portfolio,
            "finalist" => Level::Finalist,
            "provisional" => Level::Provisional,
            _ => Level::None,
        }
    }
    /// A standards body or a public selection reviewed it.
    fn reviewed(self) -> bool {
        matches!(self, Level::Standard | Level::Portfolio | Level::Finalist)
    }
}

/// One candidate's verdict and figures.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    /// "cipher/implementation".
    pub id: String,
    /// Catalogue cipher name.
    pub cipher: String,
    /// Catalogue implementation name.
    pub implementation: String,
    /// The link's frame cipher number (None: not on the link).
    pub link_id: Option<u8>,
    /// The status as deployed: a stream cipher on the link is a `composition`.
    pub status: Level,
    /// The status of the primitive itself (data/cipher-status.csv).
    pub primitive_status: String,
    /// The document that gives the primitive's status.
    pub status_document: String,
    /// Approved for FIPS 140-3 (as deployed: never a composition).
    pub fips: bool,
    /// The version that replaces it.
    pub superseded_by: Option<String>,
    /// The designers' claimed security in bits (0 without a status row).
    pub claimed_bits: u32,
    /// Key bits.
    pub key_bits: u32,
    /// Constant time (data/cipher-status.csv; false without a row).
    pub constant_time: bool,
    /// Tag bits on the link's frame (0 off the link).
    pub tag_bits: usize,
    /// How integrity is obtained.
    pub protection: String,
    /// An on-chip engine or a NIST LWC implementation, with its source (absent for this
    /// project's images).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Short labels a passed candidate carries: what a reviewer would question.
    pub labels: Vec<String>,
    /// Passed every filter.
    pub passed: bool,
    /// The filters that removed it (empty when it passed).
    pub removed_by: Vec<Filter>,
    /// One reason per filter that removed it, or why it passed.
    pub reasons: Vec<String>,
    /// Its figures on the board (None without an image).
    pub figures: Option<Figures>,
    /// Its place (None if removed; shared by ties).
    pub rank: Option<usize>,
    /// Its score (None if removed).
    pub score: Option<Span>,
}

/// How `f` gets integrity on the link.
fn protection(f: &Facts) -> String {
    if let Some(p) = crate::engines::protection(f) {
        return p;
    }
    match (f.block, f.kind()) {
        (true, _) => "none: a block cipher (needs a mode; not on the link)".to_string(),
        (false, Some(Kind::Aead)) => "the cipher's own AEAD".to_string(),
        (false, Some(Kind::StreamPoly1305)) => {
            "this project's composition: stream cipher + one-time Poly1305 (RFC 8439 style)".to_string()
        }
        // An AEAD of its own (CCM*) that no link suite carries.
        (false, None) if f.tag_bytes > 0 => {
            "none on the link: no link suite carries this AEAD, so the deploy command cannot send it".to_string()
        }
        (false, None) => "none: not on the link".to_string(),
    }
}

/// The status filter's verdict on a row at the request's level (None: passes).
fn status_verdict(req: &Request, level: Level, row: &Status) -> Option<String> {
    let primitive = Level::of_row(&row.status);
    if primitive == Level::Provisional && !req.allow_provisional {
        return Some(format!("provisional ({}): not the published cipher; --allow-provisional shows it", row.document));
    }
    let composed = level == Level::Composition;
    let what = if composed {
        format!(
            "this project's stream + Poly1305 composition, which no standard specifies (the stream cipher itself: {}, {})",
            row.status, row.document
        )
    } else {
        format!("status {} ({})", row.status, row.document)
    };
    match req.require {
        Require::Fips if !(level == Level::Standard && row.fips) => {
            Some(format!("--require fips: {what}, not approved for FIPS 140-3"))
        }
        Require::Standard if level != Level::Standard => Some(format!("--require standard: {what}, not a standard")),
        Require::Reviewed if !primitive.reviewed() => Some(format!(
            "--require reviewed: {what}: neither a standard nor a public selection (--require any shows it)"
        )),
        _ => None,
    }
}

/// A removal: the filter and its reason.
type Removal = (Filter, String);

/// Apply every filter to `f`.
pub fn judge(req: &Request, data: &Data, f: &Facts) -> Candidate {
    let row = data.status_of(&f.cipher);
    let figs = figures(req, data, f);
    let prot = protection(f);
    let level = deployed_level(row, f);
    let tag_bits = f.tag_bytes * 8;
    let mut removed: Vec<Removal> = Vec::new();
    status_filters(req, row, level, &mut removed);
    link_filters(req, f, &prot, &mut removed);
    board_filters(req, f, figs.as_ref(), &mut removed);
    let passed = removed.is_empty();
    let (labels, mut reasons) = match row {
        Some(r) if passed => passed_verdict(req, f, r, level, &prot, figs.as_ref()),
        _ => (Vec::new(), removed.iter().map(|(k, r)| format!("{}: {r}", k.name())).collect()),
    };
    // An engine or NIST LWC candidate says where it comes from, in or out; an engine priced
    // from estimates says so where its rank is shown.
    let origin = crate::engines::origin(f);
    let mut labels = labels;
    if let (true, crate::data::Source::Engine(e)) = (passed, f.source) {
        if e.status == "estimate" {
            labels.push("ESTIMATED ENGINE FIGURES".to_string());
        }
    }
    reasons.extend(origin.clone());
    Candidate {
        id: f.id(),
        cipher: f.cipher.clone(),
        implementation: f.implementation.clone(),
        link_id: f.link_id(),
        status: level,
        primitive_status: row.map(|r| r.status.clone()).unwrap_or_default(),
        status_document: row.map(|r| r.document.clone()).unwrap_or_default(),
        fips: level == Level::Standard && row.is_some_and(|r| r.fips),
        superseded_by: row.and_then(|r| r.superseded_by.clone()),
        claimed_bits: row.map(|r| r.claimed_bits).unwrap_or(0),
        key_bits: f.key_bits,
        constant_time: row.is_some_and(|r| r.constant_time),
        tag_bits,
        protection: prot,
        origin,
        labels,
        passed,
        removed_by: removed.into_iter().map(|(k, _)| k).collect(),
        reasons,
        figures: figs,
        rank: None,
        score: None,
    }
}

/// The status of `f` as deployed on the link.
fn deployed_level(row: Option<&Status>, f: &Facts) -> Level {
    // A reconstruction is provisional however the link wraps it: it must never protect data.
    match (row, f.kind()) {
        (None, _) => Level::Unknown,
        (Some(r), _) if Level::of_row(&r.status) == Level::Provisional => Level::Provisional,
        (Some(_), Some(Kind::StreamPoly1305)) => Level::Composition,
        (Some(r), _) => Level::of_row(&r.status),
    }
}

/// The filters on the status row: status, superseded, claimed security, constant time.
fn status_filters(req: &Request, row: Option<&Status>, level: Level, removed: &mut Vec<Removal>) {
    match row {
        None => removed.push((Filter::Status, "no row in data/cipher-status.csv: status unknown".into())),
        Some(r) => {
            if let Some(why) = status_verdict(req, level, r) {
                removed.push((Filter::Status, why));
            }
            if let Some(by) = r.superseded_by.as_ref().filter(|_| req.require != Require::Any) {
                removed.push((Filter::Superseded, format!("superseded by {by}; --require any shows it")));
            }
            if r.claimed_bits < req.security {
                removed.push((
                    Filter::Security,
                    format!(
                        "claimed security {} bits ({}) is below --security {}",
                        r.claimed_bits, r.claim_source, req.security
                    ),
                ));
            }
            if !r.constant_time && !req.allow_variable_time {
                removed.push((
                    Filter::ConstantTime,
                    format!("not constant-time: {}; --allow-variable-time shows it", r.constant_time_source),
                ));
            }
        }
    }
}

/// The filters on the link: integrity, then the tag length.
fn link_filters(req: &Request, f: &Facts, prot: &str, removed: &mut Vec<Removal>) {
    let tag_bits = f.tag_bytes * 8;
    match (f.block, f.kind()) {
        (true, _) | (false, None) => {
            let why = if f.block || f.tag_bytes == 0 { format!("no integrity: {prot}") } else { prot.to_string() };
            removed.push((Filter::Integrity, why));
            // An engine's own format (BLE's CCM) still has a tag: below --tag it is out on that too.
            if tag_bits > 0 && (tag_bits as u32) < req.tag_bits {
                removed.push((Filter::Tag, format!("its {tag_bits}-bit tag is below --tag {}", req.tag_bits)));
            }
        }
        _ => {
            if (tag_bits as u32) < req.tag_bits {
                removed.push((
                    Filter::Tag,
                    format!(
                        "its {tag_bits}-bit tag is below --tag {} (the link sends the cipher's own tag)",
                        req.tag_bits
                    ),
                ));
            }
        }
    }
}

/// The filters on the board: image, flash, RAM, the counter over the lifetime, the schedule and
/// the region.
fn board_filters(req: &Request, f: &Facts, figs: Option<&Figures>, removed: &mut Vec<Removal>) {
    // An OSCORE request larger than a UDP datagram has no figures either: that is the reason.
    let oversize = match f.source {
        crate::data::Source::Oscore(a) => crate::oscore::request_size(req, a.alg).err(),
        _ => None,
    };
    match figs {
        None if oversize.is_some() => removed.push((Filter::Image, oversize.unwrap_or_default())),
        None => removed.push((
            Filter::Image,
            format!(
                "no microcontroller image of this implementation for {} ({}) in data/emulated-cycles.csv and data/mcu-sizes.csv: no figures on the board",
                req.board.id, req.board.target
            ),
        )),
        Some(g) => {
            if let Some(max) = req.flash.filter(|&m| g.flash_bytes > m) {
                removed.push((Filter::Flash, format!("image {} B is above --flash {}", g.flash_bytes, fmt::bytes(max))));
            }
            if let Some(max) = req.ram.filter(|&m| g.ram_bytes > m) {
                removed.push((Filter::Ram, format!("RAM {} B is above --ram {}", g.ram_bytes, fmt::bytes(max))));
            }
        }
    }
    // The counter space over the lifetime (of the nonce the link builds: link ciphers only).
    if let crate::data::Source::Oscore(a) = f.source {
        oscore_filters(req, a, removed);
    }
    let space = counter_space(f.nonce_bytes);
    if f.link.is_some() && space < req.messages() {
        removed.push((
            Filter::Counter,
            format!(
                "{:.0} messages over --lifetime exceed the {space:.0} nonces of a {}-byte nonce under the link's 8-byte counter",
                req.messages(),
                f.nonce_bytes
            ),
        ));
    }
    // The schedule: one report (crypto, then every packet on air) ends before the next.
    if let Some(g) = figs.filter(|g| g.latency_ms.value > req.interval_s * 1e3) {
        let why = format!("one report {}, longer than --interval {}", report_time(g, req), fmt::secs(req.interval_s));
        removed.push((Filter::Schedule, why));
    }
    // The region's limits on the same schedule (data/radio-regions.csv).
    if let Some(g) = figs.filter(|g| !g.region_violations.is_empty()) {
        removed.push((Filter::Region, g.region_violations.join("; ")));
    }
}

/// An OSCORE candidate's own filters: the sender sequence numbers of one context over the
/// lifetime, and with `--edhoc` the AEAD the implemented cipher suite establishes.
fn oscore_filters(req: &Request, a: &crate::oscore::OscoreAead, removed: &mut Vec<Removal>) {
    if crate::oscore::SEQ_SPACE < req.messages() {
        removed.push((
            Filter::Counter,
            format!(
                "{:.0} messages over --lifetime exceed the 2^40 sender sequence numbers of one OSCORE context (RFC 8613 §7.2.1)",
                req.messages()
            ),
        ));
    }
    if req.edhoc.is_some() && a.alg != crate::oscore::EDHOC_AEAD {
        removed.push((
            Filter::Handshake,
            format!(
                "--edhoc: EDHOC cipher suite 2, the one implemented here, establishes {} contexts (RFC 9528 Appendix A.1: the suite's application AEAD), not {}",
                crate::oscore::EDHOC_AEAD.name(),
                a.algorithm
            ),
        ));
    }
}

/// A passed candidate's labels and verdict lines, then the lifetime requirement it misses.
fn passed_verdict(
    req: &Request,
    f: &Facts,
    r: &Status,
    level: Level,
    prot: &str,
    figs: Option<&Figures>,
) -> (Vec<String>, Vec<String>) {
    let (mut labels, mut why) = verdict_lines(req, f, r, level, prot);
    // A battery life short of --lifetime does not remove a candidate (it may still be the
    // best there is) but the answer says the requirement is not met.
    if let Some(short) = figs.and_then(|g| g.lifetime_shortfall.as_ref()) {
        labels.push("REQUIREMENT NOT MET".to_string());
        why.push(short.clone());
    }
    (labels, why)
}

/// A passed candidate's labels (what a reviewer would question) and its verdict lines: why it
/// passed, then one line per label, the forgery bound of a short tag last.
fn verdict_lines(req: &Request, f: &Facts, r: &Status, level: Level, prot: &str) -> (Vec<String>, Vec<String>) {
    let tag_bits = f.tag_bytes * 8;
    let mut why = vec![format!(
        "passed: {} ({}){}, claimed security {} bits ≥ {}, {}, {}, {tag_bits}-bit tag ≥ {}",
        level.name(),
        r.document,
        if level == Level::Standard && r.fips { ", FIPS 140-3 approved" } else { "" },
        r.claimed_bits,
        req.security,
        if r.constant_time { "constant-time" } else { "variable-time" },
        prot,
        req.tag_bits
    )];
    let mut labels = Vec::new();
    match level {
        Level::Standard => {}
        Level::Composition => {
            labels.push("COMPOSITION".to_string());
            why.push(format!(
                "COMPOSITION: this project's stream + Poly1305 construction, which no standard specifies (the stream cipher itself: {}, {})",
                r.status, r.document
            ));
        }
        Level::Provisional => {
            labels.push("PROVISIONAL".to_string());
            why.push("PROVISIONAL reconstruction: not the published cipher, must not protect data".into());
        }
        other => {
            labels.push("NOT A STANDARD".to_string());
            why.push(format!("NOT A STANDARD: {} ({})", other.name(), r.document));
        }
    }
    if let Some(by) = &r.superseded_by {
        labels.push("SUPERSEDED".to_string());
        why.push(format!("SUPERSEDED by {by}: {}", r.source));
    }
    if !r.constant_time {
        labels.push("VARIABLE-TIME".to_string());
        why.push(format!("VARIABLE-TIME: {}", r.constant_time_source));
    }
    // A short tag's forgery bound: about q/2^t for q attempts (docs/security.md).
    if tag_bits > 0 && tag_bits < 128 && matches!(f.source, crate::data::Source::Oscore(_)) {
        // The OSCORE gateway keeps no failed-tag budget: only the bound over the lifetime.
        labels.push(format!("{tag_bits}-BIT TAG"));
        why.push(format!(
            "forgery bound ({tag_bits}-bit tag): about q/2^{tag_bits} after q forged requests; one per message over the \
             lifetime (q = {:.0}): {:.1e}; the OSCORE gateway of `lwcbench link --protocol oscore` keeps no failed-tag \
             budget (docs/security.md)",
            req.messages(),
            req.messages() / 2f64.powi(tag_bits as i32)
        ));
    } else if tag_bits > 0 && tag_bits < 128 {
        labels.push(format!("{tag_bits}-BIT TAG"));
        let budget = default_max_failed_tags(f.tag_bytes);
        why.push(format!(
            "forgery bound ({tag_bits}-bit tag): about q/2^{tag_bits} after q forged frames; one per message over the \
             lifetime (q = {:.0}): {:.1e}; the link's failed-tag budget per device (--max-failed-tags, \
             {budget}): {:.1e} (docs/security.md)",
            req.messages(),
            req.messages() / 2f64.powi(tag_bits as i32),
            budget as f64 / 2f64.powi(tag_bits as i32)
        ));
    }
    (labels, why)
}

/// How long one report of `g` takes: its time on air over all packets, and the crypto.
pub fn report_time(g: &Figures, req: &Request) -> String {
    let air_s = g.air_time_ms / 1e3;
    format!(
        "takes {} ({} on air in {} packet{} of {} for the {}-byte frame + {} crypto)",
        fmt::secs(g.latency_ms.value / 1e3),
        fmt::secs(air_s),
        g.packets,
        if g.packets == 1 { "" } else { "s" },
        req.radio.name,
        g.frame_bytes,
        fmt::secs((g.latency_ms.value - g.air_time_ms) / 1e3)
    )
}
