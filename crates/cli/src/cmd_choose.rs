//! `lwcbench choose`: a ranked, explained cipher choice for a board, a radio and a requirement
//! (docs/choose.md). The work is `lwcbench_choose::choose`, the same call Python makes.
use std::path::PathBuf;

use clap::Args;
use lwcbench_choose::{self as choose, Options};

#[derive(Args)]
#[command(after_help = "Examples:\n  lwcbench choose --board rp2040 --radio LoRa-SF9 --interval 10m --payload 16B\n  \
lwcbench choose --board nrf52840 --radio BLE-1M --interval 1s --payload 16B --flash 32KiB --ram 8KiB --json\n  \
lwcbench choose --board esp32c3 --radio WiFi-n-MCS7 --interval 200ms --payload 38016B --out DIR\n  \
lwcbench choose --board nano33ble --radio 802.15.4 --interval 1m --tag 64 --framing auto --edhoc\n\n\
Filters (each candidate's reason is printed): status at the --require level (data/cipher-status.csv; \
the link's stream + Poly1305 composition is a `composition`, never a standard; provisional only with \
--allow-provisional), superseded versions (only with --require any), claimed security >= --security, \
constant time (unless --allow-variable-time), integrity (an AEAD, or the composition), tag >= --tag, an image \
on the board (data/emulated-cycles.csv, data/mcu-sizes.csv), --flash, --ram, the link's counter space against \
the messages over --lifetime, a report (crypto and every radio packet) that ends within --interval, and \
with --region the region's duty-cycle and dwell-time limits (data/radio-regions.csv). Energy includes the \
radio's receive windows and wake-ups (data/radio-receive.csv); a battery life below --lifetime is flagged \
\"requirement not met\". Flash and RAM rank only against --flash and --ram. The answer names the term \
that dominates the energy and how far the cipher moves battery life. See docs/choose.md.")]
pub struct ChooseArgs {
    #[arg(long, help = crate::board_help("Board (data/board-power.csv): ", "."))]
    board: String,
    /// Radio (data/radio-profiles.csv): LoRa-SF7, LoRa-SF9, LoRa-SF12, BLE-1M, 802.15.4,
    /// WiFi-n-MCS7, Ethernet-100M, or one of --radios FILE.
    #[arg(long)]
    radio: String,
    /// Your boards, in data/board-power.csv's columns (a row whose id is not a built-in board
    /// names the built-in board whose emulated cycles it runs in a cycles_of column); --board
    /// looks here first. At most 1 MiB; a bad row is an error naming the file and line.
    #[arg(long, value_name = "FILE")]
    boards: Option<String>,
    /// Your radios, in data/radio-profiles.csv's columns (a row of a built-in name replaces it).
    /// At most 1 MiB; a bad row is an error naming the file and line.
    #[arg(long, value_name = "FILE")]
    radios: Option<String>,
    /// DTIM period of the access point a Wi-Fi station joins: 1, 3 or 10 beacons (the periods
    /// data/radio-receive.csv gives a current for; default its dtim_period row, 3).
    #[arg(long)]
    dtim: Option<u32>,
    /// Time between two reports, 1 ms to 24 h (e.g. 200ms, 1s, 10m, 1h). One report (crypto and
    /// every packet on air) must end within it: a candidate that needs longer is removed.
    #[arg(long)]
    interval: String,
    /// Plaintext bytes per report, 1 B to 262112 B (the link's 256 KiB frame less header and tag;
    /// e.g. 16B, 1KiB).
    #[arg(long, default_value = "16B")]
    payload: String,
    /// Flash budget for the cipher's code and constants, up to 1 TiB (e.g. 32KiB); flash ranks
    /// only against it.
    #[arg(long)]
    flash: Option<String>,
    /// RAM budget for the cipher's static data and stack, up to 1 TiB (e.g. 8KiB); RAM ranks only
    /// against it.
    #[arg(long)]
    ram: Option<String>,
    /// Least security level in bits the cipher's designers claim (data/cipher-status.csv), 1 to 512.
    #[arg(long, default_value_t = 128)]
    security: u32,
    /// Tag length the deployment requires: 64, 96 or 128 bits. A shorter tag is out; a tag under
    /// 128 bits is shown with its forgery bound over the lifetime's messages.
    #[arg(long, default_value_t = 128)]
    tag: u32,
    /// Status level: fips (a standard approved for FIPS 140-3), standard (default: a primitive and
    /// mode exactly as a standard specifies), reviewed (also competition portfolios, NIST LWC
    /// finalists and the link's stream + Poly1305 composition, labelled), any (also the rest and
    /// superseded versions, labelled).
    #[arg(long)]
    require: Option<String>,
    /// Keep implementations whose time depends on secret data (HC-128, Sosemanuk), labelled.
    #[arg(long)]
    allow_variable_time: bool,
    /// Ranking weights, e.g. energy=3,latency=1 (criteria energy, battery, latency, flash, ram,
    /// each named at most once, each 0 or 0.001 to 1000; unnamed ones keep their default: energy 3,
    /// battery 0, latency 1, flash 1, ram 1; flash and ram rank only against --flash and --ram).
    #[arg(long)]
    weights: Option<String>,
    /// Deployment lifetime for the counter-space check, 1 s to 100 y (e.g. 10y, 180d).
    #[arg(long, default_value = "10y")]
    lifetime: String,
    /// Keep provisional reconstructions (DRACO) as candidates, labelled.
    #[arg(long)]
    allow_provisional: bool,
    /// Battery chemistry (data/battery-chemistries.csv).
    #[arg(long, default_value = "alkaline-AA")]
    chemistry: String,
    /// Battery capacity, 1 to 1000000 mAh.
    #[arg(long, default_value_t = 2400.0)]
    battery_mah: f64,
    /// Battery voltage, 0.5 to 60 V.
    #[arg(long, default_value_t = 3.0)]
    battery_v: f64,
    /// LoRaWAN region whose limits apply (data/radio-regions.csv): EU868 (1 % duty cycle), US915
    /// or AS923 (400 ms dwell time, SF7-SF10). A schedule that breaks them is out, with the limit.
    #[arg(long)]
    region: Option<String>,
    /// Sleep current between reports in µA, 0 to 100000, in place of the board's datasheet figure
    /// (data/boards.toml; the RP2040's chip figures are in data/chip-sleep.csv).
    #[arg(long)]
    sleep_ua: Option<f64>,
    /// Active current while the cipher runs in mA, 0.001 to 10000, in place of the board's figure.
    #[arg(long)]
    active_ma: Option<f64>,
    /// The frame the readings travel in: link (default: the link's own frame, every link
    /// cipher), oscore (OSCORE over CoAP, RFC 8613: the COSE AEADs, each run by the image of the
    /// same algorithm, priced with the whole protected CoAP request; Ascon-AEAD128 has no COSE
    /// identifier) or auto (both, ranked together; the answer says which framing wins and why).
    #[arg(long, value_name = "link|oscore|auto")]
    framing: Option<String>,
    /// With --framing oscore or auto: price EDHOC's handshake (RFC 9528, method 3, suite 2) as a
    /// one-time cost per device: its bytes, round trips and P-256 scalar multiplications from
    /// emulated cycles (data/edhoc-cost.csv: nano33ble, mkrzero, rp2040), spread over the
    /// lifetime's reports. Suite 2 establishes AES-CCM-16-64-128 contexts: the other AEADs are out.
    #[arg(long)]
    edhoc: bool,
    /// Only these candidates (comma-separated: cipher names or candidate ids such as
    /// AES-128-CCM/rustcrypto; under --framing oscore the COSE names, e.g. AES-CCM-16-64-128).
    #[arg(long)]
    cipher: Option<String>,
    /// Print the answer as JSON (schema lwcbench-choose/2, docs/choose.md).
    #[arg(long)]
    json: bool,
    /// Also write choose.json, choose.html (Pareto chart, ranking) and choose.txt into DIR
    /// (and choose-dataset.csv when the payload is not the built-in 16-byte reading), as one
    /// unit: all of them or none. DIR must be new or empty, or hold an earlier answer (--force).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace the earlier answer in --out DIR (only when DIR holds nothing but answer files).
    #[arg(long)]
    force: bool,
}

pub fn options(a: &ChooseArgs) -> Options {
    Options {
        board: a.board.clone(),
        radio: a.radio.clone(),
        interval: a.interval.clone(),
        payload: a.payload.clone(),
        flash: a.flash.clone(),
        ram: a.ram.clone(),
        security: a.security,
        tag: a.tag,
        require: a.require.clone(),
        weights: a.weights.clone(),
        lifetime: a.lifetime.clone(),
        allow_provisional: a.allow_provisional,
        allow_variable_time: a.allow_variable_time,
        chemistry: a.chemistry.clone(),
        battery_mah: a.battery_mah,
        battery_v: a.battery_v,
        region: a.region.clone(),
        sleep_ua: a.sleep_ua,
        active_ma: a.active_ma,
        boards: a.boards.clone(),
        radios: a.radios.clone(),
        dtim: a.dtim,
        framing: a.framing.clone(),
        edhoc: a.edhoc,
        cipher: a.cipher.clone(),
    }
}

pub fn run(a: &ChooseArgs) -> Result<(), String> {
    let (rep, written) = lwcbench_app::choose::answer(&options(a), a.out.as_deref(), a.force)?;
    if a.json {
        println!("{}", choose::render::json::json(&rep)?);
    } else {
        print!("{}", choose::render::text::text(&rep));
        if let Some(dir) = &a.out {
            println!("wrote {} in {}", written.join(", "), dir.display());
        }
    }
    Ok(())
}
