//! Two network namespaces joined by a veth pair, created and removed by the tool.
//!
//! Safety rule: the addresses live on a private /30 inside the two namespaces only. Neither namespace
//! gets a default route or any other interface than `lo` and its veth end, so traffic can reach only
//! the other namespace (or the namespace's own loopback); nothing is routed to other hosts, and the
//! host's own network configuration is never touched.

use crate::error::{Error, Result};
use serde::Serialize;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};

/// Every namespace this crate creates starts with this prefix, followed by `<pid>-<n>-a|b`.
pub const NS_PREFIX: &str = "lwcb-";
/// The veth end's name inside each namespace (both namespaces use the same name: names are per namespace).
pub const VETH: &str = "lwcb0";
/// Address of side A (devices) and side B (gateway) on the /30.
pub const ADDR_A: Ipv4Addr = Ipv4Addr::new(10, 237, 0, 1);
/// Address of side B (see [`ADDR_A`]).
pub const ADDR_B: Ipv4Addr = Ipv4Addr::new(10, 237, 0, 2);
/// Prefix length of the two addresses' network.
pub const PREFIX_LEN: u8 = 30;

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// One end of the pair. By convention A holds the devices and B the gateway/broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The devices' side.
    A,
    /// The gateway's and broker's side.
    B,
}

impl Side {
    /// The opposite end.
    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
}

const CAP_NET_ADMIN: u32 = 12;
const CAP_SYS_ADMIN: u32 = 21;

fn effective_caps() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
    u64::from_str_radix(line["CapEff:".len()..].trim(), 16).ok()
}

/// Checks that this process may create namespaces (CAP_SYS_ADMIN for `ip netns add` and setns,
/// CAP_NET_ADMIN for links, qdiscs and nftables) and that `ip` is installed.
pub fn preflight() -> Result<()> {
    let caps = effective_caps().unwrap_or(0);
    for (bit, name) in [(CAP_NET_ADMIN, "CAP_NET_ADMIN"), (CAP_SYS_ADMIN, "CAP_SYS_ADMIN")] {
        if caps & (1 << bit) == 0 {
            return Err(Error::Unprivileged(format!(
                "network conditions need root ({name} is missing): run as root or without network conditions"
            )));
        }
    }
    run("ip", &["-V"]).map(|_| ())
}

/// Runs a program and returns its output; a non-zero exit becomes one error line naming the command
/// and the first line the program wrote to stderr.
pub(crate) fn run(program: &str, args: &[&str]) -> Result<Output> {
    let out = Command::new(program).args(args).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::MissingTool(format!("`{program}` not found: install it (Debian: {})", debian_package(program)))
        } else {
            Error::Failed(format!("cannot run `{program}`: {e}"))
        }
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message");
        return Err(Error::Failed(format!("`{program} {}` failed: {first}", args.join(" "))));
    }
    Ok(out)
}

/// `ip netns exec` reports a missing program as its own failure (`exec of "nft" failed: No
/// such file or directory`): name the program instead. The program's own errors stay as they
/// are — `nft list chain` of a table that does not exist also says "No such file or
/// directory", and that is not a missing `nft`.
fn exec_error(program: &str, e: Error) -> Error {
    match e {
        Error::Failed(m) if m.contains(&format!("exec of \"{program}\" failed")) => {
            Error::MissingTool(format!("`{program}` not found: install it (Debian: {})", debian_package(program)))
        }
        other => other,
    }
}

fn debian_package(program: &str) -> &'static str {
    match program {
        "ip" | "tc" => "iproute2",
        "nft" => "nftables",
        _ => "see docs/network-conditions.md",
    }
}

fn pid_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Names of all namespaces (`ip netns list` prints `name` or `name (id: N)` per line).
pub fn list_namespaces() -> Result<Vec<String>> {
    let out = run("ip", &["netns", "list"])?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect())
}

/// Deletes namespaces this crate created in runs whose process no longer exists (killed with SIGKILL,
/// so no destructor ran). Only names of the form `lwcb-<pid>-<n>-a|b` whose pid is dead are touched.
/// Returns the names removed.
pub fn cleanup_stale() -> Result<Vec<String>> {
    let mut removed = Vec::new();
    for name in list_namespaces()? {
        let Some(pid) = owner_pid(&name) else { continue };
        if !pid_alive(pid) {
            // Programs the dead run started inside it (broker, Toxiproxy, devices) would keep the
            // namespace alive, invisibly, after `ip netns del`: end them first.
            kill_processes_in(&name)?;
            match run("ip", &["netns", "del", &name]) {
                Ok(_) => removed.push(name),
                // Another run's cleanup may have removed it between our listing and our delete.
                Err(_) if !list_namespaces()?.contains(&name) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(removed)
}

/// SIGKILLs every process inside one of our stale namespaces (`ip netns pids`).
fn kill_processes_in(name: &str) -> Result<()> {
    let Ok(out) = run("ip", &["netns", "pids", name]) else { return Ok(()) }; // already gone
    for pid in String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
        if pid > 1 && pid != std::process::id() as i32 {
            // SAFETY: plain syscall; the pid was listed as living in a namespace this tool created.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    Ok(())
}

/// The pid encoded in a namespace name this crate made, or None for any other name.
fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(NS_PREFIX)?;
    let mut parts = rest.split('-');
    let pid = parts.next()?.parse().ok()?;
    parts.next()?.parse::<u64>().ok()?;
    matches!(parts.next()?, "a" | "b").then_some(())?;
    parts.next().is_none().then_some(pid)
}

/// Two namespaces joined by a veth pair (`lwcb0` in each), A = 10.237.0.1/30, B = 10.237.0.2/30.
/// Dropping it deletes both namespaces (and with them the veth pair, qdiscs and nftables rules),
/// also during unwinding from a panic.
#[derive(Debug)]
pub struct NetnsPair {
    ns_a: String,
    ns_b: String,
    /// Namespaces created so far (a failed setup removes exactly these).
    created: Vec<String>,
}

impl NetnsPair {
    /// Creates the pair. Removes stale namespaces of killed runs first.
    pub fn create() -> Result<NetnsPair> {
        preflight()?;
        cleanup_stale()?;
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let mut pair = NetnsPair {
            ns_a: format!("{NS_PREFIX}{pid}-{id}-a"),
            ns_b: format!("{NS_PREFIX}{pid}-{id}-b"),
            created: Vec::new(),
        };
        // On any error below, `pair` is dropped and removes what was created.
        for ns in [pair.ns_a.clone(), pair.ns_b.clone()] {
            run("ip", &["netns", "add", &ns])?;
            pair.created.push(ns);
        }
        let (a, b) = (pair.ns_a.clone(), pair.ns_b.clone());
        // Created directly inside the namespaces: the veth never exists in the host namespace.
        run("ip", &["link", "add", VETH, "netns", &a, "type", "veth", "peer", "name", VETH, "netns", &b])?;
        for (ns, addr) in [(&a, ADDR_A), (&b, ADDR_B)] {
            let cidr = format!("{addr}/{PREFIX_LEN}");
            run("ip", &["-n", ns, "addr", "add", &cidr, "dev", VETH])?;
            run("ip", &["-n", ns, "link", "set", VETH, "up"])?;
            run("ip", &["-n", ns, "link", "set", "lo", "up"])?;
        }
        Ok(pair)
    }

    /// The name of one side's namespace.
    pub fn namespace(&self, side: Side) -> &str {
        match side {
            Side::A => &self.ns_a,
            Side::B => &self.ns_b,
        }
    }

    /// One side's address on the veth pair.
    pub fn addr(&self, side: Side) -> Ipv4Addr {
        match side {
            Side::A => ADDR_A,
            Side::B => ADDR_B,
        }
    }

    /// Refuses an address outside the pair (anything but the two veth addresses, loopback, or for a
    /// listening socket the unspecified address): the safety rule in code, on top of the missing routes.
    pub fn check_internal(&self, what: &str, addr: std::net::SocketAddr, listening: bool) -> Result<()> {
        let ip = addr.ip();
        let ok = ip.is_loopback()
            || ip == std::net::IpAddr::V4(ADDR_A)
            || ip == std::net::IpAddr::V4(ADDR_B)
            || (listening && ip.is_unspecified());
        if ok {
            Ok(())
        } else {
            Err(Error::Invalid(format!(
                "{what} {addr} is outside the test network: only {ADDR_A}, {ADDR_B} and loopback are allowed"
            )))
        }
    }

    /// A command that runs `program` inside the namespace of `side` (`ip netns exec`).
    pub fn command(&self, side: Side, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", self.namespace(side), program]);
        c
    }

    /// Runs a program inside the namespace of `side`, with the same error reporting as [`run`].
    pub(crate) fn run_in(&self, side: Side, program: &str, args: &[&str]) -> Result<Output> {
        let mut all = vec!["netns", "exec", self.namespace(side), program];
        all.extend_from_slice(args);
        run("ip", &all).map_err(|e| exec_error(program, e))
    }

    /// Runs `f` on a helper thread that has entered the namespace of `side`. Sockets `f` opens stay in
    /// that namespace and can then be used from any thread or async runtime of this process.
    pub fn in_ns<T: Send>(&self, side: Side, f: impl FnOnce() -> T + Send) -> Result<T> {
        let path = format!("/run/netns/{}", self.namespace(side));
        let file = std::fs::File::open(&path).map_err(|e| Error::Failed(format!("cannot open {path}: {e}")))?;
        std::thread::scope(|s| {
            s.spawn(|| {
                // setns(2) changes the network namespace of this thread only.
                if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                    let e = std::io::Error::last_os_error();
                    return Err(Error::Failed(format!("setns({path}) failed: {e}")));
                }
                Ok(f())
            })
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
        })
    }

    /// Deletes both namespaces now and reports a failure (Drop does the same but can only warn).
    pub fn teardown(mut self) -> Result<()> {
        self.remove()
    }

    fn remove(&mut self) -> Result<()> {
        let mut first_err = None;
        for ns in std::mem::take(&mut self.created) {
            if let Err(e) = run("ip", &["netns", "del", &ns]) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl Drop for NetnsPair {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            eprintln!("warning: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two "No such file or directory" failures seen on Debian 12 (iproute2 6.1, nftables
    /// 1.0.6): a program `ip netns exec` cannot start, and `nft list chain` of a table that does
    /// not exist. Only the first is a missing tool.
    #[test]
    fn a_missing_table_is_not_a_missing_program() {
        let missing_prog = Error::Failed(
            "`ip netns exec lwcb-1-0-b nft -j list chain inet t c` failed: exec of \"nft\" failed: No such file or directory"
                .into(),
        );
        assert!(matches!(exec_error("nft", missing_prog), Error::MissingTool(m) if m.contains("nftables")));
        let missing_table = Error::Failed(
            "`ip netns exec lwcb-1-0-b nft -j list chain inet t c` failed: Error: No such file or directory".into(),
        );
        assert!(
            matches!(exec_error("nft", missing_table), Error::Failed(m) if m.ends_with("Error: No such file or directory"))
        );
    }

    #[test]
    fn owner_pid_parses_only_own_names() {
        assert_eq!(owner_pid("lwcb-123-0-a"), Some(123));
        assert_eq!(owner_pid("lwcb-123-7-b"), Some(123));
        assert_eq!(owner_pid("lwcb-123-7-c"), None);
        assert_eq!(owner_pid("lwcb-123-a"), None);
        assert_eq!(owner_pid("lwcb-123-7-a-x"), None);
        assert_eq!(owner_pid("docker-123-0-a"), None);
        assert_eq!(owner_pid("lwcb-x-0-a"), None);
    }
}
