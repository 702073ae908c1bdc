//! Process supervision for a chaos run: start, stop and SIGKILL the broker, the gateway and
//! device processes, and sample what they report while the run goes on.
use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::device::capture::last_counter;
use crate::experiments::chaos::config::{ChaosConfig, Sample};
use crate::gateway::process::mem_kb;
use crate::store::inspect::Watch;

pub(super) struct Svc {
    pub(super) child: Option<Child>,
}

impl Svc {
    pub(super) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }
    pub(super) fn sigkill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
    /// SIGTERM, wait up to `t`, then SIGKILL. True if it stopped by itself.
    pub(super) fn stop(&mut self, t: Duration) -> bool {
        let Some(mut c) = self.child.take() else { return true };
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let t0 = Instant::now();
        while t0.elapsed() < t {
            if let Ok(Some(_)) = c.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = c.kill();
        let _ = c.wait();
        false
    }
}

impl Drop for Svc {
    fn drop(&mut self) {
        self.sigkill();
    }
}

pub(super) struct Ctl<'a> {
    pub(super) cfg: &'a ChaosConfig,
    pub(super) t0: Instant,
    pub(super) session: String,
    pub(super) port: u16,
    pub(super) store: String,
    pub(super) key: PathBuf,
    pub(super) broker: Svc,
    pub(super) gateways: Vec<Svc>,
    pub(super) devices: Vec<Svc>,
    pub(super) watch: Watch,
    pub(super) timeline: Vec<Sample>,
    pub(super) next_sample: Instant,
    pub(super) restarts: [u32; 4],
}

fn log_file(p: &Path) -> Result<std::fs::File, String> {
    std::fs::OpenOptions::new().create(true).append(true).open(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn wait_port(port: u16, child: &mut Child, what: &str) -> Result<(), String> {
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(st)) = child.try_wait() {
            return Err(format!("{what} exited: {st}"));
        }
        if t0.elapsed() > Duration::from_secs(20) {
            return Err(format!("{what} did not listen on 127.0.0.1:{port} within 20 s"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

impl Ctl<'_> {
    pub(super) fn dev_path(&self, d: u32, ext: &str) -> PathBuf {
        self.cfg.dir.join(format!("device-{d}.{ext}"))
    }

    pub(super) fn start_broker(&mut self) -> Result<(), String> {
        let dir = &self.cfg.dir;
        let conf = dir.join("mosquitto.conf");
        let data = dir.join("broker");
        std::fs::create_dir_all(&data).map_err(|e| format!("{}: {e}", data.display()))?;
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let text = format!(
            "listener {} 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location {}/\n\
             autosave_interval 1\nmax_queued_messages 0\nmax_inflight_messages 0\n{}",
            self.port,
            data.display(),
            if root { "user root\n" } else { "" }
        );
        std::fs::write(&conf, text).map_err(|e| format!("{}: {e}", conf.display()))?;
        let log = log_file(&dir.join("mosquitto.log"))?;
        let mut child = Command::new(&self.cfg.mosquitto)
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("--mosquitto: cannot start {}: {e}", self.cfg.mosquitto.display()))?;
        wait_port(self.port, &mut child, "mosquitto")?;
        self.broker.child = Some(child);
        Ok(())
    }

    /// Gateway `i`'s file `name` (one gateway: `gateway.log`, else `gateway-I.log`).
    pub(super) fn gw_path(&self, i: usize, name: &str) -> PathBuf {
        self.cfg.dir.join(if self.gateways.len() == 1 {
            format!("gateway{name}")
        } else {
            format!("gateway-{i}{name}")
        })
    }

    pub(super) fn start_gateway(&mut self, i: usize) -> Result<(), String> {
        let c = self.cfg;
        let devices = format!("0-{}", c.devices - 1);
        let (stats, log) = (self.gw_path(i, "-stats.jsonl"), self.gw_path(i, ".log"));
        let mut cmd = Command::new(&c.exe);
        if self.gateways.len() > 1 {
            cmd.args(["link", "gateway", "--shared", "chaos", "--member", &format!("g{i}")]);
        } else {
            cmd.args(["link", "gateway"]);
        }
        let mut child = cmd
            .args(["--broker", &format!("mqtt://127.0.0.1:{}", self.port)])
            .args(["--session", &self.session, "--cipher", &c.suite.name(), "--devices", &devices])
            .args(crate::wire::gate::flags(&c.suite))
            .arg("--key-file")
            .arg(&self.key)
            .args(["--store", &self.store, "--window", &c.window.to_string(), "--batch", &c.batch.to_string()])
            .arg("--stats")
            .arg(&stats)
            .stdout(Stdio::piped())
            .stderr(log_file(&log)?)
            .spawn()
            .map_err(|e| format!("cannot start {} link gateway: {e}", c.exe.display()))?;
        let out = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let t0 = Instant::now();
        loop {
            if let Ok(l) = rx.recv_timeout(Duration::from_millis(50)) {
                if l.trim() == "ready" {
                    break;
                }
            }
            if let Ok(Some(st)) = child.try_wait() {
                return Err(format!("gateway exited: {st} (see {})", log.display()));
            }
            if t0.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                return Err("gateway did not subscribe within 30 s".into());
            }
        }
        self.gateways[i].child = Some(child);
        Ok(())
    }

    pub(super) fn start_device(&mut self, d: u32) -> Result<(), String> {
        let c = self.cfg;
        let child = Command::new(&c.exe)
            .args(["link", "device", "--durable", "--id", &d.to_string(), "--session", &self.session])
            .args(["--broker", &format!("mqtt://127.0.0.1:{}", self.port), "--cipher", &c.suite.name()])
            .args(crate::wire::gate::flags(&c.suite))
            .arg("--key-file")
            .arg(self.cfg.dir.join(format!("device-{d}.key")))
            .args(["--counter-block", "64", "--messages", "0"])
            .args(["--interval", &format!("{}us", c.interval.as_micros())])
            .arg("--capture")
            .arg(self.dev_path(d, "capture"))
            .arg("--stats")
            .arg(self.dev_path(d, "json"))
            .args(["--resend-window", &format!("{}ms", c.resend_window.as_millis())])
            .stdout(Stdio::null())
            .stderr(log_file(&self.dev_path(d, "log"))?)
            .spawn()
            .map_err(|e| format!("cannot start {} link device: {e}", c.exe.display()))?;
        self.devices[d as usize].child = Some(child);
        Ok(())
    }

    pub(super) fn stored_max(&mut self) -> HashMap<u32, u64> {
        self.watch.stored_max()
    }

    pub(super) fn stored_count(&mut self) -> u64 {
        self.watch.stored_count()
    }

    pub(super) fn device_stats(&self) -> Vec<DeviceStatsFile> {
        (0..self.cfg.devices)
            .filter_map(|d| std::fs::read(self.dev_path(d, "json")).ok())
            .filter_map(|b| serde_json::from_slice(&b).ok())
            .collect()
    }

    /// Take a timeline sample if one is due.
    pub(super) fn tick(&mut self) {
        if Instant::now() < self.next_sample {
            return;
        }
        self.next_sample += self.cfg.sample_every;
        // Summed over the gateway processes.
        let mem: Vec<(u64, u64)> = self.gateways.iter().filter_map(|g| g.pid().and_then(mem_kb)).collect();
        let (g_rss, g_hwm) = (mem.iter().map(|m| m.0).sum(), mem.iter().map(|m| m.1).sum());
        let b_rss = self.broker.pid().and_then(mem_kb).map(|m| m.0).unwrap_or(0);
        let stored = self.stored_count();
        let refused = (0..self.gateways.len())
            .map(|i| {
                let pid = self.gateways[i].pid();
                gateway_stats(&self.gw_path(i, "-stats.jsonl"))
                    .iter()
                    .filter(|l| Some(l.pid) == pid)
                    .map(|l| l.refused)
                    .next_back()
                    .unwrap_or(0)
            })
            .sum();
        let ds = self.device_stats();
        self.timeline.push(Sample {
            t_s: self.t0.elapsed().as_secs_f64(),
            gateway_rss_kb: g_rss,
            gateway_hwm_kb: g_hwm,
            broker_rss_kb: b_rss,
            stored_rows: stored,
            gateway_refused: refused,
            device_ack_timeouts: ds.iter().map(|s| s.ack_timeouts).sum(),
            device_reconnects: ds.iter().map(|s| s.reconnects).sum(),
        });
    }

    pub(super) fn sleep(&mut self, d: Duration) {
        let end = Instant::now() + d;
        while Instant::now() < end {
            self.tick();
            std::thread::sleep(Duration::from_millis(10).min(end.saturating_duration_since(Instant::now())));
        }
    }

    pub(super) fn last_counters(&self) -> Vec<Option<u64>> {
        (0..self.cfg.devices).map(|d| last_counter(&self.dev_path(d, "capture"))).collect()
    }
}

#[derive(serde::Deserialize, Default)]
pub(super) struct DeviceStatsFile {
    #[serde(default)]
    pub(super) ack_timeouts: u64,
    #[serde(default)]
    pub(super) reconnects: u64,
    #[serde(default)]
    pub(super) ring_resent: u64,
    #[serde(default)]
    pub(super) resent_on_start: u64,
}

#[derive(serde::Deserialize)]
pub(super) struct GwLine {
    pub(super) pid: u32,
    #[serde(default)]
    pub(super) duplicates: u64,
    #[serde(default)]
    pub(super) refused: u64,
}

pub(super) fn gateway_stats(file: &Path) -> Vec<GwLine> {
    std::fs::read_to_string(file).unwrap_or_default().lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}
