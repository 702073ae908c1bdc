//! Out-of-process engines: a client for the line-based protocol of `docs/engine-protocol.md`.
//!
//! An engine is a command (the built-in `pycryptodome` one is a Python script) that offers
//! ciphers, runs single encrypt/decrypt operations for `lwcbench verify`, and times batches
//! of operations itself. Its samples become ordinary [`GroupResult`]s, so every result file,
//! summary, comparison and report treats them like in-process groups. The timing loop is the
//! engine's (that is the point: the study timed inside Python); this module only asks for it.
//!
//! Files: `protocol.rs` (lines and messages), `process.rs` (starting, reading, killing),
//! `check.rs` (an engine's output against the built-in ciphers), `offered.rs` (a run's
//! engines as catalogue entries and as a source of samples), `vectors.rs` (`lwcbench verify`
//! against an engine); the request/answer exchange is here.
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use lwcbench_catalog::Entry;
use lwcbench_core::{BitOrder, CipherInfo, Language, Origin};

use crate::plan::Group;
use crate::runner::{default_static, Config, GroupResult, Sample};

mod check;
mod engine;
mod limits;
mod offered;
mod process;
mod protocol;
pub mod vectors;

pub use engine::Engine;
pub use limits::{BUILTIN, LIST_TIMEOUT, MAX_LINE, MAX_NS, MAX_OFFERS, MAX_QUOTE, PROTOCOL};

pub use offered::{lock, Offered};
use process::{command_candidates, keep_stderr_tail, kill_group, list_timeout, spawn_reader, HELLO_TIMEOUT};
pub use process::{command_for, line_timeout, MAX_STDERR_LINE};
use protocol::{clip, language_of};
pub use protocol::{escape, parse_line, unescape, Failure, Fields, Hello, Line, Offer};

impl Engine {
    /// Start an engine, say hello and read its cipher list. The error is one line naming
    /// the engine and the reason.
    pub fn start(spec: &str) -> Result<Engine, String> {
        let mut first_err = None;
        for argv in command_candidates(spec)? {
            match Engine::start_argv(spec, &argv) {
                Ok(e) => return Ok(e),
                Err(m) => {
                    first_err.get_or_insert(m);
                }
            }
        }
        Err(first_err.unwrap_or_else(|| format!("engine {spec}: nothing to start")))
    }

    fn start_argv(spec: &str, argv: &[String]) -> Result<Engine, String> {
        // Its own process group: on timeout or exit the whole group is killed, not only the
        // `sh -c` wrapper, so no engine process outlives its run.
        use std::os::unix::process::CommandExt;
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("engine {spec}: cannot start `{}`: {e}", argv.join(" ")))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let tail = Arc::new(Mutex::new(String::new()));
        let t2 = tail.clone();
        std::thread::spawn(move || keep_stderr_tail(stderr, &t2));
        let mut e = Engine::over(spec, Box::new(stdin), stdout);
        e.child = Some(child);
        e.stderr_tail = tail;
        e.handshake().map_err(|m| format!("engine {spec}: {m}"))?;
        Ok(e)
    }

    /// An engine session over any byte streams (tests use canned transcripts). Call
    /// [`Engine::handshake`] before use.
    pub fn over(spec: &str, writer: Box<dyn Write + Send>, reader: impl Read + Send + 'static) -> Engine {
        Engine {
            spec: spec.to_string(),
            hello: Hello::default(),
            offers: Vec::new(),
            writer: Some(writer),
            lines: spawn_reader(reader),
            child: None,
            stderr_tail: Arc::default(),
            broken: None,
            timeout: line_timeout(),
            deadline: None,
            checked: BTreeMap::new(),
        }
    }

    /// `hello` then `list`.
    pub fn handshake(&mut self) -> Result<(), String> {
        let t = std::mem::replace(&mut self.timeout, HELLO_TIMEOUT);
        let hello = self.request(&format!("hello protocol={PROTOCOL}"), |_| Err("unexpected data line".into()));
        self.timeout = t;
        let f = match hello {
            Ok(Line::Ok(f)) => f,
            Ok(_) => return Err("'hello' must be answered with 'ok …'".into()),
            Err(Failure::Refused { code, message }) if code == "unavailable" => return Err(message),
            Err(Failure::Broken(m)) => return Err(m),
            Err(e) => return Err(format!("hello: {e}")),
        };
        self.hello = Hello::parse(&f).map_err(|e| format!("hello: {e}"))?;
        let mut offers = Vec::new();
        self.deadline = Some(Instant::now() + list_timeout());
        let list = self.request("list", |l| match l {
            Line::Data(..) if offers.len() >= MAX_OFFERS => {
                Err(format!("more than {MAX_OFFERS} cipher lines (a 'list' that does not end?)"))
            }
            Line::Data(k, f) if k == "cipher" => {
                offers.push(Offer::parse(f)?);
                Ok(())
            }
            Line::Data(k, _) => Err(format!("unexpected '{k}' line")),
            _ => unreachable!("terminal lines are not passed on"),
        });
        self.deadline = None;
        match list {
            Ok(Line::End(_)) => {}
            Ok(_) => return Err("'list' must end with 'end count=N'".into()),
            Err(Failure::Broken(m)) => return Err(m),
            Err(e) => return Err(format!("list: {e}")),
        }
        let mut names: Vec<_> = offers.iter().map(|o| o.name.to_lowercase()).collect();
        names.sort();
        if names.windows(2).any(|w| w[0] == w[1]) {
            return Err("list: a cipher name appears twice".into());
        }
        self.offers = offers;
        Ok(())
    }

    /// Why the engine stopped being usable, if it did.
    pub fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    fn next_line(&mut self) -> Result<String, String> {
        let left = self.deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let wait = left.map_or(self.timeout, |l| l.min(self.timeout));
        match self.lines.recv_timeout(wait) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) if left.is_some_and(|l| l <= self.timeout) => {
                Err(format!("answer not complete within {:.0} s", list_timeout().as_secs_f64()))
            }
            Err(RecvTimeoutError::Timeout) => {
                Err(format!("no answer within {:.0} s (LWCBENCH_ENGINE_TIMEOUT_S)", self.timeout.as_secs_f64()))
            }
            Err(RecvTimeoutError::Disconnected) => Err("the engine closed its output".into()),
        }
    }

    /// Send one request and read its answer: data lines go to `on_data`, the terminal line
    /// is returned (`ok`/`end`; `err` becomes [`Failure::Refused`]). For `end`, the number
    /// of data lines must equal `count`.
    pub fn request(
        &mut self,
        req: &str,
        mut on_data: impl FnMut(&Line) -> Result<(), String>,
    ) -> Result<Line, Failure> {
        if let Some(b) = &self.broken {
            return Err(Failure::Broken(b.clone()));
        }
        let r = self.exchange(req, &mut on_data);
        if let Err(Failure::Broken(m)) = &r {
            let tail = self.stderr_tail.lock().map(|t| t.clone()).unwrap_or_default();
            let m = if tail.is_empty() { m.clone() } else { format!("{m} (engine stderr: {})", clip(&tail)) };
            self.kill();
            self.broken = Some(m.clone());
            return Err(Failure::Broken(m));
        }
        r
    }

    fn exchange(&mut self, req: &str, on_data: &mut dyn FnMut(&Line) -> Result<(), String>) -> Result<Line, Failure> {
        let verb = req.split(' ').next().unwrap_or("").to_string();
        if req.len() + 1 > MAX_LINE || req.contains('\n') {
            return Err(Failure::Refused {
                code: "too-long".into(),
                message: format!("{verb} request of {} bytes exceeds the {MAX_LINE}-byte line limit", req.len() + 1),
            });
        }
        let w = self.writer.as_mut().ok_or_else(|| Failure::Broken("engine input closed".into()))?;
        w.write_all(req.as_bytes())
            .and_then(|_| w.write_all(b"\n"))
            .and_then(|_| w.flush())
            .map_err(|e| Failure::Broken(format!("{verb}: writing to the engine: {e}")))?;
        let mut n = 0usize;
        loop {
            let raw = self.next_line().map_err(|e| Failure::Broken(format!("{verb}: {e}")))?;
            let line = parse_line(&raw)
                .map_err(|e| Failure::Broken(format!("{verb}: malformed answer line '{}': {e}", clip(&raw))))?;
            match line {
                Line::Data(..) => {
                    on_data(&line).map_err(|e| Failure::Broken(format!("{verb}: line '{}': {e}", clip(&raw))))?;
                    n += 1;
                }
                Line::End(ref f) => {
                    let count: usize = f.num("count").map_err(Failure::Broken)?;
                    if count != n {
                        return Err(Failure::Broken(format!("{verb}: 'end count={count}' but {n} data lines arrived")));
                    }
                    return Ok(line);
                }
                Line::Err { code, message } => return Err(Failure::Refused { code, message }),
                Line::Ok(_) if n > 0 => {
                    return Err(Failure::Broken(format!(
                        "{verb}: 'ok' after {n} data lines (a multi-line answer ends with 'end count=N')"
                    )))
                }
                Line::Ok(_) => return Ok(line),
            }
        }
    }

    fn kill(&mut self) {
        self.writer = None;
        if let Some(mut c) = self.child.take() {
            kill_group(&c);
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Entries for the catalogue-shaped parts of lwcbench (selection, listing, result rows).
    pub fn entries(&self) -> Vec<Entry> {
        self.offers.iter().map(|o| self.entry(o)).collect()
    }

    fn entry(&self, o: &Offer) -> Entry {
        let h = &self.hello;
        let f = &h.fields;
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let info = CipherInfo {
            name: leak(o.name.clone()),
            implementation: leak(h.implementation.clone()),
            family: o.family,
            key_bits: o.key_bits,
            iv_bits: o.iv_bits,
            block_bits: o.block_bits,
            tag_bits: o.tag_bits,
            state_bytes: 0,
            origin: Origin::System {
                library: leak(format!("{} (engine process)", f.get("library").unwrap_or(&h.engine))),
                version: leak(f.get("library-version").unwrap_or("").to_string()),
            },
            language: language_of(&h.language).unwrap_or(Language::C),
            bit_order: BitOrder::MsbFirst,
            bit_granular: false,
            note: leak(format!("external engine; timed inside it by {}", h.timer)),
        };
        // No constructor and no in-process verification: the engine times its cipher and its
        // answers were checked against the built-in ciphers at start (`check_output`).
        Entry::elsewhere(info)
    }

    /// One encryption: `(ciphertext, tag)`.
    pub fn encrypt(
        &mut self,
        cipher: &str,
        key: &[u8],
        iv: &[u8],
        aad: &[u8],
        pt: &[u8],
        tag_bits: Option<usize>,
    ) -> Result<(Vec<u8>, Vec<u8>), Failure> {
        let tag = tag_bits.map(|t| format!(" tag-bits={t}")).unwrap_or_default();
        let req = format!(
            "encrypt cipher={} key={} iv={} aad={} pt={}{tag}",
            escape(cipher),
            hex::encode(key),
            hex::encode(iv),
            hex::encode(aad),
            hex::encode(pt)
        );
        let f = self.single(&req)?;
        let ct = f.hex("ct").map_err(|e| self.break_with(format!("encrypt: {e}")))?;
        let tag = f.hex("tag").map_err(|e| self.break_with(format!("encrypt: {e}")))?;
        Ok((ct, tag))
    }

    /// One decryption; a failed tag check is `Refused { code: "auth-failed" }`.
    pub fn decrypt(
        &mut self,
        cipher: &str,
        key: &[u8],
        iv: &[u8],
        aad: &[u8],
        ct: &[u8],
        tag: &[u8],
    ) -> Result<Vec<u8>, Failure> {
        let req = format!(
            "decrypt cipher={} key={} iv={} aad={} ct={} tag={}",
            escape(cipher),
            hex::encode(key),
            hex::encode(iv),
            hex::encode(aad),
            hex::encode(ct),
            hex::encode(tag)
        );
        let f = self.single(&req)?;
        f.hex("pt").map_err(|e| self.break_with(format!("decrypt: {e}")))
    }

    fn single(&mut self, req: &str) -> Result<Fields, Failure> {
        match self.request(req, |_| Err("unexpected data line".into()))? {
            Line::Ok(f) => Ok(f),
            _ => Err(self.break_with(format!("{}: expected 'ok …'", req.split(' ').next().unwrap_or("")))),
        }
    }

    fn break_with(&mut self, m: String) -> Failure {
        self.kill();
        self.broken = Some(m.clone());
        Failure::Broken(m)
    }

    /// Ask the engine to measure one group; `on_sample` is called per sample line.
    pub fn bench(&mut self, g: &Group, cfg: &Config, mut on_sample: impl FnMut()) -> Result<GroupResult, Failure> {
        let o = self.offers.iter().find(|o| o.name == g.entry.info.name).cloned().ok_or_else(|| Failure::Refused {
            code: "unknown-cipher".into(),
            message: format!("{} is not offered by engine {}", g.entry.info.name, self.spec),
        })?;
        if !o.scenarios.contains(&g.scenario) {
            return Err(Failure::Refused {
                code: "unsupported".into(),
                message: format!("engine {} does not offer scenario {} for {}", self.spec, g.scenario, o.name),
            });
        }
        if let Some(why) = self.check_output(&o)? {
            return Err(Failure::Refused { code: "wrong-output".into(), message: why });
        }
        let info = g.entry.info;
        let key = cfg.static_key.clone().unwrap_or_else(|| default_static(info.key_bytes()));
        let iv = cfg.static_iv.clone().unwrap_or_else(|| default_static(info.iv_bytes()));
        let kiv = format!("{}{}", if g.kiv.random_key { 'r' } else { 's' }, if g.kiv.random_iv { 'r' } else { 's' });
        let pattern = match &g.payload.bytes {
            Some(p) if !p.is_empty() => format!(" pattern={}", hex::encode(p.as_slice())),
            _ => String::new(),
        };
        let req = format!(
            "bench cipher={} scenario={} kiv={kiv} size-bits={} key={} iv={} seed={} reps={} warmup={} batch=auto min-sample-ns={}{pattern}",
            escape(&o.name),
            g.scenario,
            g.size_bits,
            hex::encode(&key),
            hex::encode(&iv),
            cfg.seed ^ crate::runner::fnv1a(&g.label()),
            cfg.reps,
            cfg.warmup,
            cfg.min_sample_ns.ceil().max(1.0) as u64,
        );
        let (reps, warm) = (cfg.reps, cfg.warmup);
        let mut samples = Vec::with_capacity(reps);
        let mut warmup = Vec::with_capacity(warm);
        let mut batch: Option<u64> = None;
        let end = self.request(&req, |l| {
            let Line::Data(k, f) = l else { unreachable!("data lines only") };
            if k != "sample" {
                return Err(format!("unexpected '{k}' line"));
            }
            let rep: usize = f.num("rep")?;
            let is_warm = match f.req("warmup")? {
                "0" => false,
                "1" => true,
                x => return Err(format!("field 'warmup': '{}' is not 0 or 1", clip(x))),
            };
            let b: u64 = f.num("batch")?;
            let ns: f64 = f.num("ns")?;
            let i = samples.len() + warmup.len();
            if rep != i {
                return Err(format!("rep {rep} out of order (expected {i})"));
            }
            if is_warm != (i < warm) || i >= warm + reps {
                return Err(format!(
                    "rep {rep} has warmup={} but {warm} warm-up and {reps} measured samples were asked for",
                    is_warm as u8
                ));
            }
            if b == 0 || batch.is_some_and(|x| x != b) {
                return Err(format!("batch {b} differs from the group's batch {}", batch.unwrap_or(0)));
            }
            batch = Some(b);
            // 0, -0, subnormal, negative, NaN, inf and absurd values are not measurements
            // (they would put inf/NaN into summary.csv).
            if !(ns.is_normal() && ns > 0.0 && ns <= MAX_NS) {
                return Err(format!("bad time: ns={ns:e} is not a positive duration of at most {MAX_NS:e} ns"));
            }
            let s = Sample { ns, cycles: None, ops: b };
            if is_warm {
                warmup.push(s)
            } else {
                samples.push(s)
            }
            on_sample();
            Ok(())
        })?;
        if !matches!(end, Line::End(_)) || samples.len() != reps {
            return Err(self.break_with(format!("bench: {} measured samples arrived, {reps} asked for", samples.len())));
        }
        Ok(GroupResult { group: g.clone(), batch: batch.unwrap_or(1), samples, warmup })
    }
}

#[cfg(test)]
mod tests;
