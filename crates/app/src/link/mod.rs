//! `lwcbench link`: the chosen cipher on a sensor → broker → gateway → store path (docs/link.md).
use std::path::PathBuf;

use clap::{Args, Subcommand};

mod args;
mod chaos;
mod device;
mod gateway;
pub(crate) mod goose;
mod keygen;
mod modbus;
mod net;
mod options;
mod oscore;
mod overload;
mod provision;
mod session;
mod video;
mod video_args;

/// `lwcbench link` options: a session (no subcommand) or one of the subcommands.
#[derive(Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  lwcbench link\n  lwcbench link --cipher Ascon-AEAD128,DRACO --devices 100 --messages 1000 --rate max\n  \
lwcbench link --transport udp --interval 1ms\n  lwcbench link --broker mqtt://127.0.0.1:1883 --store postgres://user@127.0.0.1:5432/db\n  \
lwcbench link --video --transport udp --loss 5\n  lwcbench link --protocol oscore --cipher AES-CCM-16-64-128,A128GCM\n  lwcbench link --list"
)]
pub struct LinkArgs {
    #[command(subcommand)]
    sub: Option<LinkSub>,
    #[command(flatten)]
    session: args::SessionArgs,
}

#[derive(Subcommand)]
enum LinkSub {
    /// Run ONE device as its own process (publishes to a broker; for restart/kill tests).
    Device(device::DeviceArgs),
    /// Run the gateway as its own process: subscribe, check, store until SIGTERM (or SIGKILL).
    Gateway(gateway::GatewayArgs),
    /// Faults: SIGKILL and restart gateway, broker (mosquitto) and devices at seeded random
    /// moments, then prove nothing was lost, duplicated or forged into the store.
    Chaos(chaos::ChaosArgs),
    /// Overload: step the offered rate, report the sustainable rate and peak memory.
    Overload(overload::OverloadArgs),
    /// IEC 61850 GOOSE frames over a veth pair between two namespaces (AF_PACKET, root), plain
    /// and sealed per frame: publish → accepted latency against the IEC 61850-5 classes.
    Goose(goose::GooseArgs),
    /// A new master key file with its counter state (KEY_FILE.counters), for `link gateway`,
    /// sessions and `link provision`.
    Keygen(keygen::KeygenArgs),
    /// A device's own key file and counter state from the master key (devices and Modbus proxies
    /// take only such a file; gateways keep the master).
    Provision(provision::ProvisionArgs),
    /// One side of an encrypting Modbus/TCP proxy pair (bump in the wire), until SIGTERM.
    ModbusProxy(modbus::ModbusProxyArgs),
    /// Modbus/TCP poll cycles (tokio-modbus master and slave) through the proxy pair, timed
    /// plain and sealed, against the ICS budgets.
    Modbus(modbus::ModbusArgs),
}

/// `lwcbench link`: run the session or subcommand `a` asks for.
pub fn run(a: &LinkArgs) -> Result<(), String> {
    match &a.sub {
        Some(LinkSub::Device(d)) => device::device(d),
        Some(LinkSub::Gateway(g)) => gateway::gateway(g),
        Some(LinkSub::Chaos(c)) => chaos::chaos(c),
        Some(LinkSub::Overload(o)) => overload::overload(o),
        Some(LinkSub::Goose(g)) => goose::goose(g),
        Some(LinkSub::Keygen(k)) => keygen::keygen(k),
        Some(LinkSub::Provision(p)) => provision::provision(p),
        Some(LinkSub::ModbusProxy(p)) => modbus::proxy(p),
        Some(LinkSub::Modbus(m)) => modbus::measure(m),
        None => session::session(&a.session),
    }
}

impl LinkArgs {
    /// The result directory this run writes (for the Python package, which returns it): the
    /// given `--out`, or the default, which is then set in `self` so the run uses that one.
    /// None for what writes no result directory (a gateway or device process, keys, `--list`).
    pub fn fix_out(&mut self) -> Option<PathBuf> {
        let (slot, name) = match &mut self.sub {
            None if self.session.list => return None,
            None => {
                let name = if self.session.video.video.is_some() { "link-video" } else { "link" };
                (&mut self.session.out, name)
            }
            Some(LinkSub::Chaos(c)) => (&mut c.out, "link-chaos"),
            Some(LinkSub::Overload(o)) => (&mut o.out, "link-overload"),
            Some(LinkSub::Goose(g)) => (&mut g.out, "link-goose"),
            Some(LinkSub::Modbus(m)) => (&mut m.out, "link-modbus"),
            Some(_) => return None,
        };
        Some(slot.get_or_insert_with(|| options::default_out(name)).clone())
    }
}
