//! Out-of-process engines: a client for the line-based protocol of `docs/engine-protocol.md`.
//!
//! An engine is a command (the built-in `pycryptodome` one is a Python script) that offers
//! ciphers, runs single encrypt/decrypt operations for `lwcbench verify`, and times batches
//! of operations itself. Its samples become ordinary [`GroupResult`]s, so every result file,
//! summary, comparison and report treats them like in-process groups. The timing loop is the
//! engine's (that is the point: the study timed inside Python); this module only asks for it.
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lwcbench_catalog::{Check, Entry, Make, VerifyCtx};
use lwcbench_core::{Aead, BitOrder, BlockCipher, CipherInfo, Family, Language, Origin, StreamCipher};

use crate::plan::{Group, Scenario};
use crate::runner::{default_static, Config, GroupResult, Sample};

pub mod vectors;

/// Protocol version this host speaks.
pub const PROTOCOL: u32 = 1;
/// Longest line in either direction, newline included.
pub const MAX_LINE: usize = 65536;
/// Longest piece of engine-provided text quoted in an error or a run.json note.
pub const MAX_QUOTE: usize = 500;
/// Most `cipher` lines a `list` answer may have (issue 15, defect 8: a `list` that never ends).
pub const MAX_OFFERS: usize = 10_000;
/// Longest a whole `list` answer may take, whatever the per-line deadline.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest per-operation time an engine may report (1000 s); larger is not a measurement.
pub const MAX_NS: f64 = 1e12;
/// Built-in engines, by name.
pub const BUILTIN: [&str; 1] = ["pycryptodome"];

// ---- lines -----------------------------------------------------------------------------

/// `name=value` fields of one line, in order, values percent-decoded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields(pub Vec<(String, String)>);

impl Fields {
    pub fn get(&self, k: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }
    pub fn req(&self, k: &str) -> Result<&str, String> {
        self.get(k).ok_or_else(|| format!("field '{k}' missing"))
    }
    pub fn num<T: std::str::FromStr>(&self, k: &str) -> Result<T, String> {
        let v = self.req(k)?;
        v.parse().map_err(|_| format!("field '{k}': '{}' is not a number", clip(v)))
    }
    pub fn hex(&self, k: &str) -> Result<Vec<u8>, String> {
        let v = self.req(k)?;
        hex::decode(v).map_err(|e| format!("field '{k}': not hex ({e})"))
    }
}

/// One answer line.
#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    /// `ok …`: success of a single-line answer (terminal).
    Ok(Fields),
    /// `end count=N …`: success after N data lines (terminal).
    End(Fields),
    /// `err <code> <message>` (terminal).
    Err { code: String, message: String },
    /// A data line: `cipher …`, `sample …`.
    Data(String, Fields),
}

impl Line {
    pub fn is_terminal(&self) -> bool {
        !matches!(self, Line::Data(..))
    }
}

fn clip(s: &str) -> &str {
    match s.char_indices().nth(60) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Percent-decode a value.
pub fn unescape(v: &str) -> Result<String, String> {
    if !v.contains('%') {
        return Ok(v.to_string());
    }
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(h.ok_or_else(|| format!("bad percent escape in '{}'", clip(v)))?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("percent escape in '{}' is not UTF-8", clip(v)))
}

/// Percent-encode a value for a request (space, '%', '=' and control characters).
pub fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        if c == ' ' || c == '%' || c == '=' || c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                s.push_str(&format!("%{b:02X}"));
            }
        } else {
            s.push(c);
        }
    }
    s
}

/// Parse one answer line (without its newline). The error says what is wrong.
pub fn parse_line(s: &str) -> Result<Line, String> {
    let s = s.strip_suffix('\r').unwrap_or(s);
    if s.is_empty() {
        return Err("empty line".into());
    }
    let (kind, rest) = s.split_once(' ').unwrap_or((s, ""));
    if kind == "err" {
        let (code, message) = rest.split_once(' ').unwrap_or((rest, ""));
        if code.is_empty() {
            return Err("'err' line without a code".into());
        }
        return Ok(Line::Err { code: code.to_string(), message: message.to_string() });
    }
    if kind.is_empty() || !kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'-') {
        return Err(format!("'{}' is not a line kind", clip(kind)));
    }
    let mut fields = Vec::new();
    if !rest.is_empty() {
        for t in rest.split(' ') {
            if t.is_empty() {
                return Err("tokens must be separated by single spaces".into());
            }
            let (k, v) = t.split_once('=').ok_or_else(|| format!("'{}' is not name=value", clip(t)))?;
            if k.is_empty() {
                return Err(format!("'{}' has an empty name", clip(t)));
            }
            fields.push((k.to_string(), unescape(v)?));
        }
    }
    let fields = Fields(fields);
    match kind {
        "ok" => Ok(Line::Ok(fields)),
        "end" => {
            fields.num::<usize>("count").map_err(|e| format!("'end' line: {e}"))?;
            Ok(Line::End(fields))
        }
        _ => Ok(Line::Data(kind.to_string(), fields)),
    }
}

// ---- transport ---------------------------------------------------------------------------

/// Why a request failed.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// The engine answered `err <code> <message>`; it is still usable.
    Refused { code: String, message: String },
    /// The session is broken (dead process, timeout, malformed or truncated answer); the
    /// engine is not used again.
    Broken(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Both quote the engine: escaped and cut, so run.json notes stay one bounded line.
        match self {
            Failure::Refused { code, message } => write!(
                f,
                "engine refused ({}): {}",
                crate::text::one_line(code, 60),
                crate::text::one_line(message, MAX_QUOTE)
            ),
            Failure::Broken(m) => f.write_str(&crate::text::one_line(m, MAX_QUOTE)),
        }
    }
}

/// Read lines of at most [`MAX_LINE`] bytes on a thread, so the host can apply deadlines.
fn spawn_reader(r: impl Read + Send + 'static) -> Receiver<Result<String, String>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(r);
        loop {
            let mut buf = Vec::new();
            let res = (&mut r).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buf);
            let msg = match res {
                Err(e) => Err(format!("reading the engine's output: {e}")),
                Ok(0) => Err("the engine closed its output".to_string()),
                Ok(_) if buf.len() > MAX_LINE => Err(format!("answer line longer than {MAX_LINE} bytes")),
                Ok(_) if !buf.ends_with(b"\n") => Err(format!(
                    "truncated answer line (no newline before the end of output): '{}'",
                    clip(&String::from_utf8_lossy(&buf))
                )),
                Ok(_) => {
                    buf.pop();
                    String::from_utf8(buf).map_err(|_| "answer line is not UTF-8".to_string())
                }
            };
            let stop = msg.is_err();
            if tx.send(msg).is_err() || stop {
                return;
            }
        }
    });
    rx
}

/// Deadline for a line to arrive (the first answer to `hello` gets [`HELLO_TIMEOUT`]).
pub fn line_timeout() -> Duration {
    std::env::var("LWCBENCH_ENGINE_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(Duration::from_secs(30))
}
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(20);

/// [`LIST_TIMEOUT`], or `$LWCBENCH_ENGINE_LIST_TIMEOUT_S` if it is shorter (tests).
fn list_timeout() -> Duration {
    std::env::var("LWCBENCH_ENGINE_LIST_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0 && *s < LIST_TIMEOUT.as_secs_f64())
        .map(Duration::from_secs_f64)
        .unwrap_or(LIST_TIMEOUT)
}

/// The `hello` answer.
#[derive(Clone, Debug, Default)]
pub struct Hello {
    pub engine: String,
    pub implementation: String,
    pub language: String,
    pub timer: String,
    pub resolution_ns: f64,
    pub fields: Fields,
}

impl Hello {
    fn parse(f: &Fields) -> Result<Hello, String> {
        let p: u32 = f.num("protocol")?;
        if p != PROTOCOL {
            return Err(format!("engine answered protocol {p}, this lwcbench speaks {PROTOCOL}"));
        }
        let implementation = f.req("implementation")?.to_string();
        if implementation.is_empty() || implementation.contains('/') {
            return Err(format!("implementation '{implementation}' must be non-empty and without '/'"));
        }
        let language = f.req("language")?.to_string();
        language_of(&language)?;
        Ok(Hello {
            engine: f.req("engine")?.to_string(),
            implementation,
            language,
            timer: f.req("timer")?.to_string(),
            resolution_ns: f.num("resolution-ns")?,
            fields: f.clone(),
        })
    }
    /// One line for run.json notes and `list`.
    pub fn describe(&self) -> String {
        let f = &self.fields;
        let lib = match (f.get("library"), f.get("library-version")) {
            (Some(l), Some(v)) => format!(", {l} {v}"),
            (Some(l), None) => format!(", {l}"),
            _ => String::new(),
        };
        let rt = f.get("runtime").map(|r| format!(", {r}")).unwrap_or_default();
        format!(
            "engine {} {}{lib}{rt}; timer {} (resolution {} ns)",
            self.engine,
            f.get("engine-version").unwrap_or(""),
            self.timer,
            self.resolution_ns
        )
    }
}

fn language_of(s: &str) -> Result<Language, String> {
    match s {
        "Rust" => Ok(Language::Rust),
        "C" => Ok(Language::C),
        "C++" => Ok(Language::Cpp),
        "Python" => Ok(Language::Python),
        _ => Err(format!("language '{}' is not one of Rust, C, C++, Python", clip(s))),
    }
}

/// One cipher an engine offers (a `cipher` line of `list`).
#[derive(Clone, Debug, PartialEq)]
pub struct Offer {
    pub name: String,
    pub family: Family,
    pub key_bits: u16,
    pub iv_bits: u16,
    pub block_bits: u16,
    pub tag_bits: u16,
    pub scenarios: Vec<Scenario>,
}

impl Offer {
    fn parse(f: &Fields) -> Result<Offer, String> {
        let name = f.req("name")?.to_string();
        if name.is_empty() || name.contains('/') {
            return Err(format!("cipher name '{name}' must be non-empty and without '/'"));
        }
        let family = match f.req("family")? {
            "block" => Family::Block,
            "aead" => Family::Aead,
            "stream" => Family::Stream,
            "mode" => Family::Mode,
            x => return Err(format!("family '{}' is not block, aead, stream or mode", clip(x))),
        };
        let bits = |k: &str| -> Result<u16, String> {
            let v: u16 = f.num(k)?;
            if !v.is_multiple_of(8) {
                return Err(format!("field '{k}': {v} is not a whole number of bytes"));
            }
            Ok(v)
        };
        let key_bits = bits("key-bits")?;
        if key_bits == 0 {
            return Err("field 'key-bits': 0".into());
        }
        let scenarios = f
            .req("scenarios")?
            .split(',')
            .map(|s| {
                Scenario::parse(s)
                    .filter(|sc| sc.applies_to(family))
                    .ok_or_else(|| format!("scenario '{}' is not one for family {}", clip(s), family.as_str()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Offer {
            name,
            family,
            key_bits,
            iv_bits: bits("iv-bits")?,
            block_bits: bits("block-bits")?,
            tag_bits: bits("tag-bits")?,
            scenarios,
        })
    }
}

/// A running engine: the process (if any), its lines, and what it said about itself.
pub struct Engine {
    /// The name given on the command line (built-in name or command).
    pub spec: String,
    pub hello: Hello,
    pub offers: Vec<Offer>,
    writer: Option<Box<dyn Write + Send>>,
    lines: Receiver<Result<String, String>>,
    child: Option<Child>,
    stderr_tail: Arc<Mutex<String>>,
    broken: Option<String>,
    timeout: Duration,
    /// End of the current answer's time budget (the whole `list`), if any.
    deadline: Option<Instant>,
    /// Ciphers whose output was checked before timing: name → the one-line failure, if any.
    checked: BTreeMap<String, Option<String>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Engine({}, {} ciphers)", self.spec, self.offers.len())
    }
}

/// The command line of an engine spec: a built-in name, or a shell command.
pub fn command_for(spec: &str) -> Result<Vec<String>, String> {
    command_candidates(spec).map(|mut c| c.remove(0))
}

/// Command lines to try in turn: a built-in engine may run under several interpreters, and
/// the first whose library is present wins.
fn command_candidates(spec: &str) -> Result<Vec<Vec<String>>, String> {
    let s = spec.trim();
    if s.contains(' ') || s.contains('/') {
        return Ok(vec![vec!["sh".into(), "-c".into(), s.to_string()]]);
    }
    if s.eq_ignore_ascii_case("pycryptodome") {
        let script = find_script("pycryptodome")?.display().to_string();
        return Ok(pythons().into_iter().map(|p| vec![p, script.clone()]).collect());
    }
    Err(format!(
        "--engine: unknown engine '{s}' (built-in: {}; or give a command line, e.g. 'python3 my_engine.py')",
        BUILTIN.join(", ")
    ))
}

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `$LWCBENCH_PYTHON` alone if set; else the project venv (here, then in the source tree),
/// `python3` on PATH and the system's /usr/bin/python3 (where Debian's python3-pycryptodome
/// lives), those that exist, in that order.
fn pythons() -> Vec<String> {
    if let Some(p) = std::env::var_os("LWCBENCH_PYTHON") {
        return vec![p.to_string_lossy().into_owned()];
    }
    let mut out: Vec<String> = [PathBuf::from(".venv/bin/python"), source_root().join(".venv/bin/python")]
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    out.push("python3".into());
    if Path::new("/usr/bin/python3").is_file() {
        out.push("/usr/bin/python3".into());
    }
    out
}

fn find_script(name: &str) -> Result<PathBuf, String> {
    let mut cands = Vec::new();
    if let Some(d) = std::env::var_os("LWCBENCH_ENGINES") {
        cands.push(PathBuf::from(d).join(name).join("engine.py"));
    }
    cands.push(PathBuf::from("engines").join(name).join("engine.py"));
    cands.push(source_root().join("engines").join(name).join("engine.py"));
    cands.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        format!(
            "engine script not found (looked in {}; set LWCBENCH_ENGINES to the folder holding {name}/engine.py)",
            cands.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        )
    })
}

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
        // `sh -c` wrapper (issue 15, defect 19).
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
        let make = match o.family {
            Family::Stream => Make::Stream(no_stream),
            Family::Block => Make::Block(no_block),
            Family::Aead => Make::Aead(no_aead),
            Family::Mode => Make::Mode(no_mode),
        };
        Entry::from_parts(info, make, no_verify)
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
            // (they put inf/NaN into summary.csv; issue 15, defect 12).
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

impl Engine {
    /// Before a cipher is timed, check what the engine computes (issue 15, defect 12): one
    /// encryption of a fixed input must equal lwcbench's own implementation of the same cipher
    /// (when the catalogue has one of that name and family), must not be the plaintext, and
    /// must decrypt back to the plaintext. `Ok(Some(why))`: the engine's output is wrong; the
    /// answer is kept, so every group of the cipher fails with the same line.
    fn check_output(&mut self, o: &Offer) -> Result<Option<String>, Failure> {
        if let Some(r) = self.checked.get(&o.name) {
            return Ok(r.clone());
        }
        let key: Vec<u8> = (0..o.key_bits / 8).map(|i| (i as u8).wrapping_mul(29).wrapping_add(7)).collect();
        let iv: Vec<u8> = (0..o.iv_bits / 8).map(|i| (i as u8).wrapping_mul(13).wrapping_add(101)).collect();
        let aad: Vec<u8> = if o.family == Family::Aead { b"lwcbench check".to_vec() } else { Vec::new() };
        let bb = (o.block_bits / 8).max(1) as usize;
        let len = if 32 % bb == 0 { 32 } else { 2 * bb };
        let pt: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(53).wrapping_add(1)).collect();
        let q = |b: &[u8]| crate::text::one_line(&hex::encode(b), 80);
        let why = match self.encrypt(&o.name, &key, &iv, &aad, &pt, None) {
            Err(Failure::Refused { code, message }) => Some(format!(
                "{}: the output check's encryption was refused ({}): {}",
                o.name,
                crate::text::one_line(&code, 60),
                crate::text::one_line(&message, MAX_QUOTE)
            )),
            Err(f) => return Err(f),
            Ok((ct, tag)) => {
                if let Some((id, (mut want_ct, want_tag))) = reference_encrypt(o, &key, &iv, &aad, &pt) {
                    // The catalogue's CBC/ECB pad with PKCS#7; an engine may encrypt the whole
                    // blocks it is given without padding. The input is whole blocks, so the
                    // padding is one extra block at the end: compare what both computed.
                    if o.family != Family::Aead && ct.len() + bb == want_ct.len() {
                        want_ct.truncate(ct.len());
                    }
                    if (&ct, &tag) != (&want_ct, &want_tag) {
                        Some(format!(
                            "{}: wrong output: the engine's encryption of a fixed input (ct {} tag {}) differs from {id} (ct {} tag {})",
                            o.name,
                            q(&ct),
                            q(&tag),
                            q(&want_ct),
                            q(&want_tag)
                        ))
                    } else {
                        None
                    }
                } else if ct == pt {
                    Some(format!("{}: wrong output: the engine's ciphertext equals the plaintext", o.name))
                } else {
                    None
                }
                .or_else(|| match self.decrypt(&o.name, &key, &iv, &aad, &ct, &tag) {
                    Ok(back) if back == pt => None,
                    Ok(back) => Some(format!(
                        "{}: wrong output: decrypting the engine's own ciphertext gives {} instead of {}",
                        o.name,
                        q(&back),
                        q(&pt)
                    )),
                    Err(f) => Some(format!("{}: decrypting the engine's own ciphertext failed: {f}", o.name)),
                })
            }
        };
        if let Some(b) = &self.broken {
            return Err(Failure::Broken(b.clone()));
        }
        self.checked.insert(o.name.clone(), why.clone());
        Ok(why)
    }
}

/// An implementation id with the ciphertext and tag it produced.
type Reference = (String, (Vec<u8>, Vec<u8>));

/// `(implementation id, (ct, tag))` from the first catalogue implementation with this
/// cipher name whose family matches and that accepts the input; `None` if there is none.
fn reference_encrypt(o: &Offer, key: &[u8], iv: &[u8], aad: &[u8], pt: &[u8]) -> Option<Reference> {
    let family_fits = |f: Family| f == o.family || (o.family == Family::Block && f == Family::Mode);
    lwcbench_catalog::registry()
        .into_iter()
        .filter(|e| e.info.name.eq_ignore_ascii_case(&o.name) && family_fits(e.info.family))
        .filter(|e| e.info.key_bits == o.key_bits && e.info.iv_bits == o.iv_bits)
        .find_map(|e| {
            let out = match e.make {
                Make::Aead(m) => {
                    let mut c = m();
                    c.set_key(key).ok()?;
                    let mut buf = pt.to_vec();
                    let mut tag = vec![0u8; (o.tag_bits / 8) as usize];
                    c.encrypt(iv, aad, &mut buf, &mut tag).ok()?;
                    (buf, tag)
                }
                Make::Mode(m) => {
                    let mut c = m();
                    c.set_key(key).ok()?;
                    let mut buf = pt.to_vec();
                    buf.resize(c.ciphertext_len(pt.len()).max(pt.len()), 0);
                    let n = c.encrypt(iv, &mut buf, pt.len()).ok()?;
                    buf.truncate(n);
                    (buf, Vec::new())
                }
                Make::Block(m) => {
                    let mut c = m();
                    c.set_key(key).ok()?;
                    let bb = c.info().block_bytes();
                    if bb == 0 || !pt.len().is_multiple_of(bb) {
                        return None;
                    }
                    let mut buf = pt.to_vec();
                    buf.chunks_mut(bb).for_each(|b| c.encrypt_block(b));
                    (buf, Vec::new())
                }
                Make::Stream(m) => {
                    let mut c = m();
                    c.init(key, iv).ok()?;
                    let mut buf = pt.to_vec();
                    c.apply(&mut buf).ok()?;
                    (buf, Vec::new())
                }
            };
            Some((e.id(), out))
        })
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Closing stdin ends the session; give the engine a moment, then make sure it is gone.
        self.writer = None;
        if let Some(mut c) = self.child.take() {
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(2) {
                if matches!(c.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            kill_group(&c);
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// SIGKILL to the engine's process group (it was started as the group leader).
fn kill_group(c: &Child) {
    if let Ok(pid) = i32::try_from(c.id()) {
        // SAFETY: a signal to the group this process created for the engine.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// Longest engine stderr line kept for error messages; the rest of a longer line is dropped.
pub const MAX_STDERR_LINE: usize = 4096;

/// Reads the engine's stderr to its end in fixed-size chunks (an engine writing gigabytes
/// without a newline costs no memory) and keeps the last non-blank line, cut at
/// [`MAX_STDERR_LINE`] bytes.
fn keep_stderr_tail(mut r: impl Read, tail: &Mutex<String>) {
    let mut cur: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8192];
    let publish = |line: &[u8]| {
        let t = String::from_utf8_lossy(line);
        if !t.trim().is_empty() {
            *tail.lock().unwrap_or_else(|e| e.into_inner()) = t.trim_end().to_string();
        }
    };
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &chunk[..n] {
            if b == b'\n' {
                publish(&cur);
                cur.clear();
            } else if cur.len() < MAX_STDERR_LINE {
                cur.push(b);
            }
        }
    }
    publish(&cur);
}

#[cfg(test)]
#[test]
fn stderr_without_newline_is_bounded() {
    // 64 MiB of 'x' without a newline, then a short line: the kept tail is that line; the
    // long one never grows past MAX_STDERR_LINE (issue 15, defect 8).
    let tail = Mutex::new(String::new());
    let long = std::io::repeat(b'x').take(64 << 20);
    keep_stderr_tail(long.chain(&b"\nlast words\n"[..]), &tail);
    assert_eq!(*tail.lock().unwrap(), "last words");
    let tail = Mutex::new(String::new());
    keep_stderr_tail(std::io::repeat(b'y').take(1 << 20), &tail);
    assert_eq!(tail.lock().unwrap().len(), MAX_STDERR_LINE);
}

fn no_stream() -> Box<dyn StreamCipher + Send> {
    panic!("an external engine's cipher has no in-process instance")
}
fn no_block() -> Box<dyn BlockCipher + Send> {
    panic!("an external engine's cipher has no in-process instance")
}
fn no_aead() -> Box<dyn Aead + Send> {
    panic!("an external engine's cipher has no in-process instance")
}
fn no_mode() -> Box<dyn lwcbench_core::CipherMode + Send> {
    panic!("an external engine's cipher has no in-process instance")
}
fn no_verify(_: &Entry, _: &VerifyCtx) -> Vec<Check> {
    Vec::new()
}

// ---- engines in a run ------------------------------------------------------------------------

/// The engines of one run and the catalogue entries they offer; part of a
/// [`crate::plan::Selection`].
#[derive(Clone, Default)]
pub struct Offered {
    engines: Vec<Arc<Mutex<Engine>>>,
    /// Entry id (lower case) → index into `engines`.
    owner: BTreeMap<String, usize>,
    entries: Vec<Entry>,
}

impl std::fmt::Debug for Offered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|e| e.id())).finish()
    }
}

impl Offered {
    /// Start every engine; an engine that cannot start is left out and its one-line reason
    /// returned, so the caller can say so and carry on.
    pub fn start(specs: &[String]) -> (Offered, Vec<String>) {
        let mut o = Offered::default();
        let mut failed = Vec::new();
        for s in specs {
            match Engine::start(s).and_then(|e| o.add(e)) {
                Ok(()) => {}
                Err(e) => failed.push(format!("{e}; its rows are off")),
            }
        }
        (o, failed)
    }

    /// Add a started engine; its entry ids must not clash with the catalogue's or another
    /// engine's.
    pub fn add(&mut self, e: Engine) -> Result<(), String> {
        let reg: Vec<String> = lwcbench_catalog::registry().iter().map(|e| e.id().to_lowercase()).collect();
        let entries = e.entries();
        for en in &entries {
            let id = en.id().to_lowercase();
            if reg.contains(&id) || self.owner.contains_key(&id) {
                return Err(format!("engine {}: {} is already provided by another implementation", e.spec, en.id()));
            }
        }
        let i = self.engines.len();
        for en in &entries {
            self.owner.insert(en.id().to_lowercase(), i);
        }
        self.entries.extend(entries);
        self.engines.push(Arc::new(Mutex::new(e)));
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.engines.is_empty()
    }
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }
    pub fn engines(&self) -> &[Arc<Mutex<Engine>>] {
        &self.engines
    }
    /// Implementation names of the engines.
    pub fn implementations(&self) -> Vec<String> {
        self.engines.iter().map(|e| lock(e).hello.implementation.clone()).collect()
    }
    /// False only for an engine's entry whose engine does not list this scenario.
    pub fn offers_scenario(&self, e: &Entry, sc: Scenario) -> bool {
        match self.engine_for(e) {
            Some(eng) => lock(&eng).offers.iter().any(|o| o.name == e.info.name && o.scenarios.contains(&sc)),
            None => true,
        }
    }
    /// The engine that offers this entry, if an engine does.
    pub fn engine_for(&self, e: &Entry) -> Option<Arc<Mutex<Engine>>> {
        self.owner.get(&e.id().to_lowercase()).map(|&i| self.engines[i].clone())
    }
    /// run.json notes for the engines whose groups are in the run.
    pub fn notes(&self, groups: &[Group]) -> Vec<String> {
        let mut out = Vec::new();
        for (i, eng) in self.engines.iter().enumerate() {
            if !groups.iter().any(|g| self.owner.get(&g.entry.id().to_lowercase()) == Some(&i)) {
                continue;
            }
            let e = lock(eng);
            let note = e.hello.fields.get("note").map(|n| format!(": {n}")).unwrap_or_default();
            out.push(format!(
                "implementation {}: times are taken inside an external engine process over the engine protocol (docs/engine-protocol.md), not by lwcbench's clock — {}{note}",
                e.hello.implementation,
                e.hello.describe()
            ));
        }
        out
    }
}

impl crate::plan::ExtraEntries for Offered {
    fn entries(&self) -> &[Entry] {
        Offered::entries(self)
    }
    fn offers_scenario(&self, e: &Entry, sc: Scenario) -> bool {
        Offered::offers_scenario(self, e, sc)
    }
}

/// Lock an engine; a panic elsewhere while holding it does not make it unusable.
pub fn lock(e: &Mutex<Engine>) -> std::sync::MutexGuard<'_, Engine> {
    e.lock().unwrap_or_else(|p| p.into_inner())
}

/// Measure one group through its engine (see [`Engine::bench`]); errors are one line.
pub fn measure_group(
    e: &Mutex<Engine>,
    g: &Group,
    cfg: &Config,
    on_sample: impl FnMut(),
) -> Result<GroupResult, String> {
    let mut e = lock(e);
    let spec = e.spec.clone();
    e.bench(g, cfg, on_sample)
        .map_err(|f| format!("{}: engine {}: {f}", g.label(), crate::text::one_line(&spec, MAX_QUOTE)))
}

#[cfg(test)]
mod tests;
