//! The options of a link session (`lwcbench link …`) and of its network conditions.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use lwcbench_link::session::LinkConfig;
use lwcbench_link::transport::Transport;
use lwcbench_link::wire::suite::Suite;

#[derive(Args)]
pub(super) struct SessionArgs {
    /// Cipher(s), comma-separated: "name/impl", a bare name, or a frame cipher id (see --list);
    /// default Ascon-AEAD128. With --protocol oscore: COSE AEADs (AES-CCM-16-64-128, the default,
    /// AES-CCM-16-128-128, ChaCha20/Poly1305, A128GCM).
    #[arg(long)]
    pub(super) cipher: Option<String>,
    /// link (the link frame over --transport) or oscore (CoAP over UDP with OSCORE, RFC 8613, to
    /// a CoAP gateway on loopback; docs/protocols.md).
    #[arg(long, default_value = "link", value_name = "link|oscore")]
    pub(super) protocol: String,
    /// With --protocol oscore: establish each device's OSCORE context with EDHOC (RFC 9528,
    /// method 3, the cipher suite of --edhoc-suite; static DH keys derived from the key
    /// hierarchy) at its start, instead of a pre-shared Master Secret; the AEAD is
    /// AES-CCM-16-64-128 (Appendix A.1).
    #[arg(long)]
    pub(super) edhoc: bool,
    /// With --edhoc: run a new handshake before a device's sender sequence number reaches N
    /// (N messages per context); default 2^20, the q limit of draft-ietf-core-oscore-key-limits
    /// for AES-CCM-16-64-128 (RFC 8613 §7.2.1's 2^40 Partial IVs bound it too).
    #[arg(long, value_name = "N", requires = "edhoc")]
    pub(super) rekey_after: Option<u64>,
    /// With --edhoc: the EDHOC cipher suite, 2 (P-256, through the lakers crate; what aiocoap and
    /// lakers-python speak) or 0 (X25519, through this project's own EDHOC; static X25519 keys
    /// derived from the key hierarchy). Both protect OSCORE with AES-CCM-16-64-128.
    #[arg(long, value_name = "0|2", default_value = "2", requires = "edhoc")]
    pub(super) edhoc_suite: String,
    /// Simulated sensors (async tasks in this process), 1..=100000.
    #[arg(long, default_value_t = 8)]
    pub(super) devices: u32,
    /// Readings each device sends.
    #[arg(long, default_value_t = 100)]
    pub(super) messages: u64,
    /// Report interval per device (e.g. 10ms, 1s, 500us). Ignored with --rate.
    #[arg(long, default_value = "10ms")]
    pub(super) interval: String,
    /// Total rate over all devices: readings/s (from one reading per device a day, devices/86400,
    /// to 10,000,000), or `max` (as fast as possible). Overrides --interval.
    #[arg(long)]
    pub(super) rate: Option<String>,
    /// mqtt (QoS 1, persistent sessions) or udp (plain datagrams; loss is counted).
    #[arg(long, default_value = "mqtt")]
    pub(super) transport: String,
    /// External broker mqtt://HOST:PORT (default: an embedded broker on a free loopback port).
    #[arg(long)]
    pub(super) broker: Option<String>,
    /// Store: a SQLite file path (default OUT/link.db, kept across --force),
    /// postgres://USER@HOST:PORT/DB or 'host=HOST user=USER dbname=DB' (a password is never shown).
    #[arg(long)]
    pub(super) store: Option<String>,
    /// Replay window size in counters per device (1..=1048576; devices × window bitmaps ≤ 1 GiB):
    /// also the most lateness, in counters, a frame may have (later: refused too_old, an alarm).
    #[arg(long, default_value_t = 1024)]
    pub(super) window: u64,
    /// Counters reserved per durable write of the counter state.
    #[arg(long, default_value_t = lwcbench_link::device::counter::DEFAULT_BLOCK)]
    pub(super) counter_block: u64,
    /// Master key file (created with mode 0600 if missing; default: the output directory's own key
    /// in $LWCBENCH_KEY_DIR or ~/.config/lwcbench/link-keys, never inside the results directory).
    #[arg(long)]
    pub(super) key_file: Option<PathBuf>,
    /// Counter state file of the key (default KEY_FILE.counters, beside --key-file; locked while in
    /// use, tied to the key by its fingerprint; see docs/link.md "Counter persistence rule").
    #[arg(long)]
    pub(super) counter_state: Option<PathBuf>,
    /// Publisher connections the devices share (like sensors behind a concentrator).
    #[arg(long, default_value_t = 8)]
    pub(super) connections: usize,
    /// Gateway workers: 1 = one gateway; K > 1 = K workers on one MQTT v5 shared subscription,
    /// replay state kept in the store (docs/link.md, "Scale-out"). MQTT only.
    #[arg(long, default_value_t = 1)]
    pub(super) workers: usize,
    /// Most frames the gateway stores per transaction.
    #[arg(long, default_value_t = 512)]
    pub(super) batch: usize,
    /// Seconds to wait for frames still in flight after the devices finish.
    #[arg(long, default_value_t = 20.0)]
    pub(super) drain_timeout: f64,
    /// Sensor dataset CSV (default: the built-in office-occupancy data); one row = one reading.
    #[arg(long)]
    pub(super) dataset: Option<PathBuf>,
    /// UNSAFE: stream ciphers without integrity (no tag); marked unsafe in every output.
    #[arg(long)]
    pub(super) unsafe_no_integrity: bool,
    /// Output directory (default ./lwcbench-results/<UTC time>-link).
    #[arg(short, long)]
    pub(super) out: Option<PathBuf>,
    /// Replace a finished run in --out.
    #[arg(long)]
    pub(super) force: bool,
    #[command(flatten)]
    pub(super) gate: GateArgs,
    #[command(flatten)]
    pub(super) net: NetArgs,
    #[command(flatten)]
    pub(super) carried: CarrierArgs,
    #[command(flatten)]
    pub(super) video: super::video_args::VideoArgs,
    /// List the link's ciphers (frame id, protection, overhead) and exit.
    #[arg(long)]
    pub(super) list: bool,
    /// Run the attack suite (forged, replayed, reordered frames) for each --cipher instead of a
    /// session; writes link_attack.csv; exits non-zero if any class is not handled as expected.
    #[arg(long)]
    pub(super) attack: bool,
    /// lora-minute: DRACO, Ascon-AEAD128, AES-128-CCM, ChaCha20-Poly1305 on LoRa SF7/SF9/SF12,
    /// one reading a minute: which cipher lets the battery last longest (modelled).
    /// net-sweep: Ascon-AEAD128, AES-128-CCM, DRACO over MQTT and UDP under loss 0/1/5/10 % ×
    /// delay 0/20/200 ms (root; see docs/network-conditions.md).
    #[arg(long)]
    pub(super) preset: Option<String>,
    /// Radios for the modelled energy table (comma-separated names from data/radio-profiles.csv, or all).
    #[arg(long, default_value = "all")]
    pub(super) radio: String,
    /// Device power profile for the crypto share of the energy (data/power-profiles.csv name):
    /// host seal time × its power. --board replaces it.
    #[arg(long, default_value = "ESP32")]
    pub(super) power_profile: String,
    #[arg(long, help = crate::board_help(
        "Crypto energy from the device: emulated cycles of the cipher's image on this board (",
        "; data/board-power.csv) × its datasheet power, host time × that power for ciphers without an image; \
         its sleep current unless --sleep-ua."
    ))]
    pub(super) board: Option<String>,
    /// The crypto share measured on a board: a collected run's energy.csv (`lwcbench collect
    /// --power-port`, docs/power.md), matched by the AEAD's implementation, encrypt and the
    /// reading's size; shown beside the modelled share, with the battery life it gives.
    #[arg(long, value_name = "FILE")]
    pub(super) measured_energy: Option<std::path::PathBuf>,
    /// Battery chemistry for self-discharge and shelf life (data/battery-chemistries.csv):
    /// alkaline-AA, Li-SOCl2, Li-ion, LiFePO4, CR2032.
    #[arg(long, default_value = "alkaline-AA")]
    pub(super) chemistry: String,
    /// Battery capacity for the modelled battery life (mAh).
    #[arg(long, default_value_t = 2400.0)]
    pub(super) battery_mah: f64,
    /// Battery voltage (V).
    #[arg(long, default_value_t = 3.0)]
    pub(super) battery_v: f64,
    /// Whole-board sleep current between reports (µA; default 10.2, or the --board's).
    #[arg(long)]
    pub(super) sleep_ua: Option<f64>,
    /// Report interval the battery model assumes (e.g. 60s); the session itself runs at --interval/--rate.
    #[arg(long, default_value = "60s")]
    pub(super) report_interval: String,
}

/// The explicit flags for gated suites (docs/security.md "Gated ciphers"), on every link path
/// that seals or opens with a suite.
#[derive(Args, Default, Clone, Copy)]
pub(super) struct GateArgs {
    /// Allow DRACO (ids 32–34): a provisional reconstruction of a cipher with a known attack
    /// (Banik, ToSC 2022(4)); labelled PROVISIONAL in every output.
    #[arg(long)]
    pub(super) allow_provisional: bool,
    /// UNSAFE: allow suites with keys under 112 bits (Trivium, Grain v1, MICKEY 2.0: 80 bits);
    /// labelled UNSAFE in every output.
    #[arg(long)]
    pub(super) unsafe_short_key: bool,
}

impl GateArgs {
    pub(super) fn gate(&self) -> lwcbench_link::wire::gate::Gate {
        lwcbench_link::wire::gate::Gate {
            allow_provisional: self.allow_provisional,
            unsafe_short_key: self.unsafe_short_key,
        }
    }
}

#[derive(Args, Default)]
pub(super) struct NetArgs {
    /// Network conditions: share of device → gateway packets dropped, in % (0.1 % steps). Any
    /// condition runs devices and gateway in two network namespaces the tool creates (root needed).
    #[arg(long, value_name = "PCT")]
    pub(super) loss: Option<String>,
    /// Network conditions: one-way delay added device → gateway, in ms.
    #[arg(long, value_name = "MS")]
    pub(super) delay: Option<String>,
    /// Network conditions: uniform jitter ± this many ms around --delay (at most the delay).
    #[arg(long, value_name = "MS")]
    pub(super) jitter: Option<String>,
    /// Network conditions: share of datagrams reordered, in % (UDP, or TCP with kernel netem).
    #[arg(long, value_name = "PCT")]
    pub(super) reorder: Option<String>,
    /// Network conditions: share of datagrams duplicated, in % (UDP, or TCP with kernel netem).
    #[arg(long, value_name = "PCT")]
    pub(super) duplicate: Option<String>,
    /// Network conditions: bandwidth limit device → gateway in kbit/s (tbf).
    #[arg(long, value_name = "KBIT")]
    pub(super) bandwidth: Option<String>,
    /// Network conditions: auto (kernel netem where present) or fallback (always nftables / tbf /
    /// UDP relay / Toxiproxy).
    #[arg(long, default_value = "auto", value_name = "auto|fallback")]
    pub(super) net_backend: String,
    /// Network conditions, MQTT: the broker inside namespace B: embedded (rumqttd in this process)
    /// or mosquitto (Debian's binary, started inside B by the tool).
    #[arg(long, default_value = "embedded", value_name = "embedded|mosquitto")]
    pub(super) net_broker: String,
    /// Seed of the UDP relay's and Toxiproxy's random choices.
    #[arg(long, default_value_t = 1)]
    pub(super) net_seed: u64,
}

impl NetArgs {
    pub(super) fn any(&self) -> bool {
        [&self.loss, &self.delay, &self.jitter, &self.reorder, &self.duplicate, &self.bandwidth]
            .iter()
            .any(|o| o.is_some())
    }
}

/// The carrier the frames ride (docs/link.md "Compact header (LoRaWAN)").
#[derive(Args, Default)]
pub(super) struct CarrierArgs {
    /// none (the link's own 16-byte header) or lorawan: the compact 1-byte header with LoRaWAN's
    /// DevAddr and 32-bit FCnt as device id and counter, emulated over --transport udp. Carriers
    /// without a frame counter that never repeats (mqtt, udp, tcp, ble) are refused.
    #[arg(long, default_value = "none")]
    pub(super) carrier: String,
    /// --carrier lorawan: DevAddr of the first device, hex (device i has DevAddr + i; default 0).
    #[arg(long, value_name = "HEX")]
    pub(super) dev_addr: Option<String>,
    /// --carrier lorawan: first FCnt of the emulated LoRaWAN stack (default: where the counter
    /// state left off); an FCnt the device may have sealed under before is refused.
    #[arg(long, value_name = "N")]
    pub(super) fcnt_from: Option<u32>,
    /// --carrier lorawan: the join epoch, raised at every re-join (FCnt restarts at 0); each
    /// epoch has its own key (0 to 2^31-1; default 0).
    #[arg(long, value_name = "N")]
    pub(super) join_epoch: Option<u32>,
}

impl SessionArgs {
    /// `--carrier` and its options, refused where the session cannot carry compact frames.
    pub(super) fn carrier(&self) -> Result<Option<lwcbench_link::wire::compact::Carrier>, String> {
        let c = &self.carried;
        let car = lwcbench_link::wire::compact::Carrier::parse(
            &c.carrier,
            c.dev_addr.as_deref(),
            c.fcnt_from,
            c.join_epoch,
            &self.transport,
        )?;
        if car.is_some() {
            let other = [
                (self.attack, "--attack"),
                (self.video.video.is_some(), "--video"),
                (self.net.any(), "network conditions"),
                (self.workers > 1, "--workers above 1"),
                (self.unsafe_no_integrity, "--unsafe-no-integrity"),
            ];
            if let Some((_, what)) = other.iter().find(|(on, _)| *on) {
                return Err(format!("--carrier lorawan: not with {what}"));
            }
        }
        Ok(car)
    }
}

/// What a session run of one cipher needs besides these options.
pub(super) struct RunInputs<'a> {
    pub(super) interval: Option<Duration>,
    pub(super) store: &'a str,
    pub(super) key_file: &'a Path,
    pub(super) counter_file: &'a Path,
    pub(super) readings: &'a Arc<Vec<Vec<u8>>>,
}

impl SessionArgs {
    /// The configuration of one cipher's session: the one place the options become a
    /// [`LinkConfig`] (plain sessions and network-condition runs alike).
    pub(super) fn link_config(
        &self,
        suite: &Suite,
        transport: Transport,
        run: &RunInputs,
        session: String,
    ) -> LinkConfig {
        LinkConfig {
            suite: suite.clone(),
            unauthenticated: self.unsafe_no_integrity,
            devices: self.devices,
            messages: self.messages,
            interval: run.interval,
            transport,
            store: run.store.to_string(),
            window: self.window,
            counter_block: self.counter_block,
            key_file: run.key_file.to_path_buf(),
            counter_file: run.counter_file.to_path_buf(),
            connections: self.connections,
            drain_timeout: Duration::from_secs_f64(self.drain_timeout),
            readings: Arc::clone(run.readings),
            batch: self.batch,
            session,
            // checked by `SessionArgs::carrier` before any session starts
            carrier: self.carrier().ok().flatten(),
        }
    }
}
