//! The embedded MQTT broker (rumqttd inside this process, loopback only, a free port), and
//! parsing of `--broker mqtt://HOST:PORT`.
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;

/// Where the MQTT broker is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerAddr {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// Whether it is the embedded broker of this process (rumqttd).
    pub embedded: bool,
}

impl BrokerAddr {
    /// The broker as logs and run.json name it.
    pub fn describe(&self) -> String {
        if self.embedded {
            format!("embedded rumqttd 0.20 on 127.0.0.1:{} (in this process)", self.port)
        } else {
            format!("mqtt://{}:{}", self.host, self.port)
        }
    }
}

/// Parse `mqtt://HOST:PORT` (port defaults to 1883): HOST a name, an IPv4 address or an IPv6
/// address in brackets, PORT 1 to 5 decimal digits in 1..=65535, nothing else (no path, no
/// credentials, nothing after the port). Errors name `--broker`, show the URL redacted and say
/// what is wrong.
pub fn parse_url(url: &str) -> Result<BrokerAddr, String> {
    let shown = crate::input::shown(url);
    let bad =
        |what: &str| format!("--broker: '{shown}': {what} (expected mqtt://HOST:PORT, e.g. mqtt://127.0.0.1:1883)");
    let rest = url.strip_prefix("mqtt://").ok_or_else(|| bad("must start with mqtt://"))?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.contains('@') {
        return Err(bad("credentials are not supported"));
    }
    if rest.contains(['/', '?', '#']) {
        return Err(bad("a path or query is not supported"));
    }
    let (host, port_str) = if let Some(v6) = rest.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
        if h.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(bad(&format!("'{}' in brackets is not an IPv6 address", crate::input::shown(h))));
        }
        match after {
            "" => (h, None),
            a => match a.strip_prefix(':') {
                Some(p) => (h, Some(p)),
                None => return Err(bad(&format!("'{}' after ']' is not ':PORT'", crate::input::shown(a)))),
            },
        }
    } else {
        match rest.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        }
    };
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let host_ok = host.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'));
    if !host_ok {
        return Err(bad(&format!("host '{}' holds characters no host name has", crate::input::shown(host))));
    }
    let port = match port_str {
        None => 1883,
        Some(p) => Some(p)
            .filter(|p| (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|p| p.parse::<u16>().ok())
            .filter(|&p| p != 0)
            .ok_or_else(|| bad(&format!("port '{}' is not a number in 1..=65535", crate::input::shown(p))))?,
    };
    let host = host.to_string();
    Ok(BrokerAddr { host, port, embedded: false })
}

/// A TCP port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot find a free loopback port: {e}"))?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

static EMBEDDED: OnceLock<Result<(u16, u16), String>> = OnceLock::new();

/// Start the embedded broker once per process and return its address (the MQTT 3.1.1 listener).
pub fn embedded() -> Result<BrokerAddr, String> {
    let port = EMBEDDED.get_or_init(start_embedded).clone()?.0;
    Ok(BrokerAddr { host: "127.0.0.1".into(), port, embedded: true })
}

/// The embedded broker's MQTT v5 listener (same router, so the same topics): the gateway
/// workers' shared subscription (`--workers`) connects here.
pub fn embedded_v5_port() -> Result<u16, String> {
    EMBEDDED.get_or_init(start_embedded).clone().map(|p| p.1)
}

fn start_embedded() -> Result<(u16, u16), String> {
    start_listeners([127, 0, 0, 1])
}

/// Start one more embedded broker listening on `ip` (e.g. 0.0.0.0 inside a network namespace of
/// the tool's own, where only loopback and the veth exist) and return its MQTT 3.1.1 port. Its
/// threads live in the network namespace of the calling thread.
pub fn start_embedded_on(ip: [u8; 4]) -> Result<u16, String> {
    start_listeners(ip).map(|p| p.0)
}

/// An embedded broker with an MQTT 3.1.1 and an MQTT v5 listener on `ip`: (v3 port, v5 port).
fn start_listeners(ip: [u8; 4]) -> Result<(u16, u16), String> {
    // The port is chosen by binding :0 and released for rumqttd to bind; another process could
    // take it in between, so a few attempts are made.
    let mut last = String::new();
    for _ in 0..5 {
        let port = free_port()?;
        let port5 = free_port()?;
        let listen: SocketAddr = (ip, port).into();
        let listen5: SocketAddr = (ip, port5).into();
        // probed on loopback (an `ip` of 0.0.0.0 listens there too)
        let probe: SocketAddr = ([127, 0, 0, 1], port).into();
        let probe5: SocketAddr = ([127, 0, 0, 1], port5).into();
        let conn = rumqttd::ConnectionSettings {
            connection_timeout_ms: 10_000,
            max_payload_size: crate::wire::frame::MAX_FRAME + 1024,
            max_inflight_count: 1024,
            auth: None,
            external_auth: None,
            dynamic_filters: true,
        };
        let server = rumqttd::ServerSettings {
            name: "lwcbench-link".into(),
            listen,
            tls: None,
            next_connection_delay_ms: 0,
            connections: conn.clone(),
        };
        let server5 = rumqttd::ServerSettings {
            name: "lwcbench-link-v5".into(),
            listen: listen5,
            tls: None,
            next_connection_delay_ms: 0,
            connections: conn,
        };
        let config = rumqttd::Config {
            id: 0,
            router: rumqttd::RouterConfig {
                max_connections: 20_010,
                max_outgoing_packet_count: 1024,
                max_segment_size: 64 * 1024 * 1024,
                max_segment_count: 4,
                ..Default::default()
            },
            v4: Some(HashMap::from([("1".to_string(), server)])),
            v5: Some(HashMap::from([("5".to_string(), server5)])),
            ..Default::default()
        };
        std::thread::Builder::new()
            .name("rumqttd".into())
            .spawn(move || {
                let mut b = rumqttd::Broker::new(config);
                let _ = b.start();
            })
            .map_err(|e| format!("cannot start the embedded broker: {e}"))?;
        // Wait until it accepts connections.
        for _ in 0..100 {
            if TcpStream::connect_timeout(&probe, Duration::from_millis(100)).is_ok()
                && TcpStream::connect_timeout(&probe5, Duration::from_millis(100)).is_ok()
            {
                return Ok((port, port5));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        last = format!("embedded broker did not listen on {listen}");
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_urls() {
        assert_eq!(
            parse_url("mqtt://10.0.0.1:1884").unwrap(),
            BrokerAddr { host: "10.0.0.1".into(), port: 1884, embedded: false }
        );
        assert_eq!(parse_url("mqtt://broker").unwrap().port, 1883);
        assert_eq!(parse_url("mqtt://[::1]:9").unwrap().host, "::1");
        assert_eq!(parse_url("mqtt://[::1]").unwrap().port, 1883);
        assert_eq!(parse_url("mqtt://h:1883/").unwrap().port, 1883);
        for bad in [
            "http://x:1",
            "mqtt://",
            "mqtt://x:0",
            "mqtt://x:99999",
            "mqtt://x:1/t",
            "mqtt://u:p@x:1",
            "mqtt://:5",
            "mqtt://[::1]garbage",
            "mqtt://[::1]:+18883",
            "mqtt://h:+18883",
            "mqtt://h:018830",
            "mqtt://h: 1883",
            "mqtt://[nothost]:1",
            "mqtt://h\n:1",
            "mqtt://h:1?x",
        ] {
            let e = parse_url(bad).unwrap_err();
            assert!(e.starts_with("--broker: '") && !e.contains('\n'), "{bad}: {e}");
        }
        assert!(parse_url("mqtt://[::1]garbage").unwrap_err().contains("'garbage' after ']' is not ':PORT'"));
        assert!(parse_url("mqtt://h:+18883").unwrap_err().contains("port '+18883' is not a number"));
        let e = parse_url("mqtt://u:hunter2@h:1").unwrap_err();
        assert!(!e.contains("hunter2") && e.contains("credentials"), "{e}");
    }
}
