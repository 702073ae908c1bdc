//! TCP impairment through Toxiproxy (Shopify's impairment proxy, built by `scripts/setup.sh --test`
//! with `go install` from the Go module proxy): latency and jitter, bandwidth, resets, timeouts.
//!
//! The server runs inside one of the pair's namespaces (`ip netns exec`), its API on that namespace's
//! loopback (127.0.0.1:8474: the namespace is ours, so the port is free), and is driven over HTTP from
//! sockets opened in the same namespace. Nothing listens outside the tool's namespaces.

use crate::conditions::{Applied, Mechanism, UserSpace};
use crate::error::{Error, Result};
use crate::netns::{NetnsPair, Side};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Version `scripts/setup.sh --test` builds (the newest the Go module proxy serves for the v2 module).
pub const TOXIPROXY_VERSION: &str = "v2.5.0";
const API_PORT: u16 = 8474;
/// Bound on an API answer; Toxiproxy's are a few hundred bytes.
const MAX_RESPONSE: u64 = 1 << 20;

/// `target/tools/toxiproxy-server` under `$LWCBENCH_ROOT`, else under the program's directory or
/// one of its parents (a checkout's `target/<profile>/[deps/]`): found at run time, so a copied or
/// installed program never reaches into the tree it was built in.
fn in_checkout() -> Option<PathBuf> {
    const REL: &str = "target/tools/toxiproxy-server";
    if let Some(root) = std::env::var_os("LWCBENCH_ROOT").filter(|r| !r.is_empty()) {
        return Some(PathBuf::from(root).join(REL)).filter(|p| p.is_file());
    }
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    exe.parent()?.ancestors().take(5).map(|d| d.join(REL)).find(|p| p.is_file())
}

/// Finds `toxiproxy-server`: `$LWCBENCH_TOXIPROXY`, then `target/tools/toxiproxy-server` (where
/// setup.sh puts it) of the checkout found at run time (`$LWCBENCH_ROOT`, else the one holding
/// the running program), then `PATH`.
pub fn find_server() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("LWCBENCH_TOXIPROXY") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(Error::MissingTool(format!("LWCBENCH_TOXIPROXY={} is not a file", p.display())))
        };
    }
    if let Some(p) = in_checkout() {
        return Ok(p);
    }
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        let p = dir.join("toxiproxy-server");
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(Error::MissingTool(
        "`toxiproxy-server` not found (needed for TCP delay/jitter without netem): run scripts/setup.sh --test \
         or set LWCBENCH_TOXIPROXY"
            .into(),
    ))
}

/// A Toxiproxy server inside one namespace of a pair; dropping it kills the server.
pub struct Toxiproxy<'p> {
    pair: &'p NetnsPair,
    side: Side,
    child: Child,
    seed: u64,
}

impl<'p> Toxiproxy<'p> {
    /// Starts the server in the namespace of `side` and waits (at most 10 s) until its API answers.
    /// `seed` makes its random choices (jitter, toxicity) repeatable.
    pub fn start(pair: &'p NetnsPair, side: Side, seed: u64) -> Result<Toxiproxy<'p>> {
        let bin = find_server()?;
        let child = pair
            .command(side, &bin.to_string_lossy())
            .args(["-host", "127.0.0.1", "-port", &API_PORT.to_string(), "-seed", &seed.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Error::Failed(format!("cannot start {}: {e}", bin.display())))?;
        let mut t = Toxiproxy { pair, side, child, seed };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if t.request("GET", "/version", None).is_ok() {
                return Ok(t);
            }
            if let Ok(Some(status)) = t.child.try_wait() {
                return Err(Error::Failed(format!("toxiproxy-server exited at start ({status})")));
            }
            if Instant::now() > deadline {
                return Err(Error::Failed("toxiproxy-server did not answer on its API within 10 s".into()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Creates a proxy listening on `listen` (in this namespace) forwarding to `upstream`.
    pub fn proxy(&self, name: &str, listen: SocketAddr, upstream: SocketAddr) -> Result<()> {
        check_name(name)?;
        self.pair.check_internal("proxy listen address", listen, true)?;
        self.pair.check_internal("proxy upstream", upstream, false)?;
        let body = serde_json::json!({"name": name, "listen": listen.to_string(), "upstream": upstream.to_string(),
                                      "enabled": true});
        self.request("POST", "/proxies", Some(&body)).map(|_| ())
    }

    /// Adds a toxic (see Toxiproxy's README for types and attributes). `stream` is "upstream" (client →
    /// server) or "downstream".
    pub fn toxic(&self, proxy: &str, kind: &str, stream: &str, attributes: serde_json::Value) -> Result<()> {
        check_name(proxy)?;
        if stream != "upstream" && stream != "downstream" {
            return Err(Error::Invalid(format!("toxic stream `{stream}` is neither upstream nor downstream")));
        }
        let body = serde_json::json!({"name": format!("{kind}_{stream}"), "type": kind, "stream": stream,
                                      "toxicity": 1.0, "attributes": attributes});
        self.request("POST", &format!("/proxies/{proxy}/toxics"), Some(&body)).map(|_| ())
    }

    /// Applies the delay and jitter a [`crate::conditions::Plan`] left for user space to a proxy, on
    /// the client → server direction, and returns the records. Reordering and duplication cannot be
    /// applied to a TCP byte stream and are refused.
    pub fn apply_user_space(&self, proxy: &str, u: &UserSpace) -> Result<Vec<Applied>> {
        if u.reorder_pct > 0.0 || u.duplicate_pct > 0.0 {
            return Err(Error::Invalid("Toxiproxy cannot reorder or duplicate a TCP stream".into()));
        }
        let mut out = Vec::new();
        if u.delay_ms > 0 {
            let attrs = serde_json::json!({"latency": u.delay_ms, "jitter": u.jitter_ms});
            self.toxic(proxy, "latency", "upstream", attrs)?;
            let detail =
                format!("toxiproxy {TOXIPROXY_VERSION} proxy {proxy}: latency toxic upstream, seed {}", self.seed);
            out.push(self.record("delay", format!("{} ms", u.delay_ms), &detail));
            if u.jitter_ms > 0 {
                out.push(self.record("jitter", format!("{} ms", u.jitter_ms), &detail));
            }
        }
        Ok(out)
    }

    fn record(&self, condition: &'static str, value: String, detail: &str) -> Applied {
        Applied { condition, value, mechanism: Mechanism::Toxiproxy, side: self.side, detail: detail.into() }
    }

    /// One HTTP/1.1 request to the API (Connection: close); returns the body of a 2xx answer.
    fn request(&self, method: &str, path: &str, body: Option<&serde_json::Value>) -> Result<String> {
        let api = SocketAddr::from(([127, 0, 0, 1], API_PORT));
        let io = |e: std::io::Error| Error::Failed(format!("toxiproxy API {method} {path}: {e}"));
        let mut s =
            self.pair.in_ns(self.side, || TcpStream::connect_timeout(&api, Duration::from_secs(2)))?.map_err(io)?;
        s.set_read_timeout(Some(Duration::from_secs(5))).map_err(io)?;
        s.set_write_timeout(Some(Duration::from_secs(5))).map_err(io)?;
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).map_err(io)?;
        let mut resp = Vec::new();
        s.take(MAX_RESPONSE).read_to_end(&mut resp).map_err(io)?;
        let resp = String::from_utf8_lossy(&resp);
        let status: u16 = resp.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        let body = resp.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        if !(200..300).contains(&status) {
            // The API's error text is untrusted: one line, printable, bounded.
            let msg: String = body.chars().filter(|c| !c.is_control()).take(200).collect();
            return Err(Error::Failed(format!("toxiproxy API {method} {path} answered {status}: {msg}")));
        }
        Ok(body.to_owned())
    }
}

fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 64 || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(Error::Invalid(format!("proxy name {name:?} must be 1-64 of [A-Za-z0-9_-]")));
    }
    Ok(())
}

impl Drop for Toxiproxy<'_> {
    fn drop(&mut self) {
        // `ip netns exec` execs the server, so the child pid is the server itself.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
