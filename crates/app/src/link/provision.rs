//! `lwcbench link provision`: one device's own key file and counter state, from the master.
use std::path::PathBuf;

use clap::Args;
use lwcbench_link::device::provision;
use lwcbench_link::wire::frame::Family;
use lwcbench_link::wire::suite;

#[derive(Args)]
pub(super) struct ProvisionArgs {
    /// The master key file (the gateway's; must exist with its counter state).
    #[arg(long)]
    key_file: PathBuf,
    /// What the device runs: sensor, video, modbus (DEVICE is then the proxy pair, for both
    /// proxies of the pair) or goose (DEVICE is the APPID).
    #[arg(long, default_value = "sensor")]
    protocol: String,
    /// The device id (sensor, video), the proxy pair (modbus) or the APPID (goose).
    #[arg(long)]
    device: u32,
    /// Ciphers the key may be used with, comma-separated selectors as for --cipher (default all).
    #[arg(long)]
    cipher: Option<String>,
    /// Where to write the device key (mode 0600; refused if it exists); its counter state is
    /// OUT.counters, a Modbus pair's replay states OUT.modbus-PAIR-master.replay and
    /// OUT.modbus-PAIR-slave.replay (each proxy's, beside its copy of the key).
    #[arg(long)]
    out: PathBuf,
}

/// Writes the device key and its counter state, and registers the device with the master.
pub(super) fn provision(a: &ProvisionArgs) -> Result<(), String> {
    let family = Family::parse(&a.protocol)?;
    if family == Family::Goose && a.device > u16::MAX as u32 {
        return Err(format!("--device: {} is not a GOOSE APPID (0..=65535)", a.device));
    }
    let ciphers = match &a.cipher {
        None => None,
        Some(list) => Some(list.split(',').map(|c| suite::find(c).map(|s| s.id)).collect::<Result<Vec<u8>, _>>()?),
    };
    let p = provision::provision(&a.key_file, family, a.device, ciphers, &a.out)?;
    let starts: Vec<String> = p.starts.iter().map(|(d, n)| format!("device {d} from {n}")).collect();
    println!(
        "wrote {} ({} {}, key id {}) and its counter state {} ({}); registered in {}",
        p.key_file.display(),
        family.label(),
        a.device,
        p.fingerprint,
        p.state.display(),
        starts.join(", "),
        provision::registry_path(&a.key_file).display()
    );
    if let [m, s] = p.replay.as_slice() {
        println!(
            "wrote the pair's replay states {} (for the master-side proxy) and {} (for the slave-side proxy)",
            m.display(),
            s.display()
        );
    }
    Ok(())
}
