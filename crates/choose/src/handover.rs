//! The hand-over: the firmware build of the measured image and the `lwcbench link` command that
//! runs the chosen cipher end to end with the request's settings.
use serde::Serialize;

use crate::carrier::CarrierSecurity;
use crate::data::{Data, Facts};
use crate::filter::Candidate;
use crate::link_facts::Carrier;
use crate::options::Request;

/// The `lwcbench link` command and the firmware build that deploy the choice.
#[derive(Clone, Debug, Serialize)]
pub struct Handover {
    /// The command, word by word.
    pub link_command: Vec<String>,
    /// The command as one shell line.
    pub link_command_line: String,
    /// The firmware build of the measured image.
    pub firmware_build: String,
    /// A dataset CSV whose readings are the request's payload (None: the built-in readings are).
    pub dataset: Option<DatasetSpec>,
    /// The carrier the command's frames ride; its header is the one priced.
    pub carrier: Carrier,
    /// What the radio's carrier already protects and what the link adds
    /// (data/carrier-security.csv; None: no row covers the radio).
    pub carrier_security: Option<CarrierSecurity>,
}

/// The dataset file the command reads.
#[derive(Clone, Debug, Serialize)]
pub struct DatasetSpec {
    /// Its path.
    pub file: String,
    /// float32 channels.
    pub channels: usize,
    /// Bytes of one reading.
    pub reading_bytes: usize,
}

/// Bytes of one reading of the link's built-in dataset (one float32 per channel).
pub fn builtin_reading_bytes() -> usize {
    lwcbench_data::dataset::Dataset::builtin().channels.len() * 4
}

/// A dataset with `channels` float32 channels and a few rows: readings of `channels × 4` bytes.
pub fn dataset_csv(channels: usize) -> String {
    let mut s = String::from("time");
    for i in 0..channels {
        s.push_str(&format!(",c{i}"));
    }
    s.push('\n');
    for row in 0..4 {
        s.push_str(&format!("2026-01-01T00:00:0{row}Z"));
        for i in 0..channels {
            s.push_str(&format!(",{}", (row * 7 + i) % 1000));
        }
        s.push('\n');
    }
    s
}

fn shell_word(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:+,".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The hand-over of `chosen` (whose facts are `facts`) into `out` (DIR when None).
pub fn handover(req: &Request, chosen: &Candidate, facts: &Facts, data: &Data, out: Option<&str>) -> Handover {
    if let crate::data::Source::Oscore(a) = facts.source {
        return oscore_handover(req, chosen, a, data, out);
    }
    let dataset = dataset_spec(req, out);
    let mut cmd: Vec<String> = ["lwcbench", "link", "--cipher"].iter().map(|s| s.to_string()).collect();
    // The link's own suite: an engine or NIST LWC candidate sends that suite's frame.
    cmd.push(facts.link.as_ref().map(|s| s.name.clone()).unwrap_or_else(|| chosen.id.clone()));
    // A gated suite runs on the link only with its flag (docs/security.md "Gated ciphers").
    if let Some(s) = &facts.link {
        cmd.extend(s.gate_flags().iter().map(|f| f.to_string()));
    }
    for (k, v) in [
        ("--devices", "1".to_string()),
        ("--messages", "20".to_string()),
        ("--interval", "10ms".to_string()),
        ("--board", req.board.id.clone()),
        ("--radio", req.radio.name.clone()),
        // The shortest decimal that reads back as the same double: the link gets the request's
        // exact values, not a rounded copy.
        ("--report-interval", format!("{}s", req.interval_s)),
        ("--chemistry", req.battery.chemistry.name.clone()),
        ("--battery-mah", format!("{}", req.battery.capacity_mah)),
        ("--battery-v", format!("{}", req.battery.volts)),
    ] {
        cmd.push(k.into());
        cmd.push(v);
    }
    // The frame priced is the frame this command sends: on LoRaWAN the compact header.
    let carrier = Carrier::of_radio(&req.radio);
    cmd.extend(carrier.link_args().iter().map(|s| s.to_string()));
    if let Some(d) = &dataset {
        cmd.push("--dataset".into());
        cmd.push(d.file.clone());
    }
    cmd.push("--out".into());
    cmd.push(format!("{}/link-run", out.unwrap_or("DIR")));
    let line = cmd.iter().map(|w| shell_word(w)).collect::<Vec<_>>().join(" ");
    let firmware = match (crate::engines::firmware(facts), data.size(&req.board.target, &chosen.cipher, &chosen.implementation)) {
        (Some(other), _) => other,
        (None, Some(s)) => format!(
            "cd mcu/images && cargo build --profile release --bin {} --target {}   # the measured image (Os); artifact target/mcu/{}/release/{}",
            s.image, s.target, s.target, s.image
        ),
        (None, None) => "no microcontroller image".into(),
    };
    Handover {
        link_command: cmd,
        link_command_line: line,
        firmware_build: firmware,
        dataset,
        carrier,
        carrier_security: crate::carrier::for_radio(&req.radio.name),
    }
}

/// The hand-over of an OSCORE candidate: `lwcbench link --protocol oscore` with its AEAD, over
/// CoAP on loopback (the session has no energy model: --board and --radio are the ranking's).
fn oscore_handover(
    req: &Request,
    chosen: &Candidate,
    a: &crate::oscore::OscoreAead,
    data: &Data,
    out: Option<&str>,
) -> Handover {
    let dataset = dataset_spec(req, out);
    let mut cmd: Vec<String> = ["lwcbench", "link"].iter().map(|s| s.to_string()).collect();
    cmd.extend(Carrier::Coap.link_args().iter().map(|s| s.to_string()));
    for (k, v) in [
        ("--cipher", a.algorithm.clone()),
        ("--devices", "1".to_string()),
        ("--messages", "20".to_string()),
        ("--interval", "10ms".to_string()),
    ] {
        cmd.push(k.into());
        cmd.push(v);
    }
    if let Some(d) = &dataset {
        cmd.push("--dataset".into());
        cmd.push(d.file.clone());
    }
    cmd.push("--out".into());
    cmd.push(format!("{}/link-run", out.unwrap_or("DIR")));
    let line = cmd.iter().map(|w| shell_word(w)).collect::<Vec<_>>().join(" ");
    let firmware = match data.size(&req.board.target, &chosen.cipher, &chosen.implementation) {
        Some(s) => format!(
            "cd mcu/images && cargo build --profile release --bin {} --target {}   # the measured {} image (Os); artifact target/mcu/{}/release/{}; the device also needs a CoAP/OSCORE stack (crates/oscore's protection needs only alloc), not built for the board or measured here",
            s.image, s.target, a.algorithm, s.target, s.image
        ),
        None => "no microcontroller image".into(),
    };
    Handover {
        link_command: cmd,
        link_command_line: line,
        firmware_build: firmware,
        dataset,
        carrier: Carrier::Coap,
        // data/carrier-security.csv says what the link frame adds (its tag, its gateway): not
        // what OSCORE adds.
        carrier_security: None,
    }
}

/// The dataset file of a payload other than the built-in reading.
fn dataset_spec(req: &Request, out: Option<&str>) -> Option<DatasetSpec> {
    (req.payload != builtin_reading_bytes()).then(|| {
        let channels = req.payload.div_ceil(4);
        let dir = out.unwrap_or("DIR");
        DatasetSpec { file: format!("{dir}/choose-dataset.csv"), channels, reading_bytes: channels * 4 }
    })
}
