//! `lwcbench collect`: read a board's benchmark lines (docs/board.md) from a serial port or a
//! saved log and write the usual result files.
use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use clap::Args;
use lwcbench_engine::collect::logger::write_collected_with_power;
use lwcbench_engine::collect::logger::{self, JoinOptions, DEFAULT_MIN_SAMPLES};
use lwcbench_engine::collect::{parse_log, Source};

/// `lwcbench collect` options.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["from_log", "port"])))]
pub struct CollectArgs {
    /// How the run was asked for, as run.json records it: the Python call when the binding
    /// sets it, else this process's command line.
    #[arg(skip)]
    pub invocation: Option<Vec<String>>,
    /// A log saved by a terminal program (CoolTerm, Tera Term, minicom, screen, …); `-` = stdin.
    #[arg(long, value_name = "FILE")]
    from_log: Option<PathBuf>,
    /// Serial port the board prints to, e.g. /dev/ttyACM0 (Pico USB), /dev/ttyUSB0 (ESP), COM3.
    #[arg(long)]
    port: Option<String>,
    /// Baud rate of --port (USB CDC ignores it).
    #[arg(long, default_value_t = 115_200)]
    baud: u32,
    /// With --port: give up after this many seconds without the end line (what was read is
    /// then treated as a truncated log).
    #[arg(long, default_value_t = 900.0, value_name = "S")]
    timeout: f64,
    /// With --port: also save the raw capture to this file.
    #[arg(long, value_name = "FILE")]
    save_log: Option<PathBuf>,
    /// Output directory (default ./lwcbench-results/<UTC time>-board-<board>).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Replace a finished run in --out.
    #[arg(long)]
    force: bool,
    /// Write what is valid even if the run is truncated (missing end line, lost or corrupted
    /// lines); the truncation is recorded in run.json notes.
    #[arg(long)]
    allow_truncated: bool,
    /// Serial port of a power logger (INA219/INA226, docs/power.md) wired to the board's
    /// trigger pin: its samples are joined to the board's batches → energy.csv (measured).
    #[arg(long, value_name = "PORT", requires = "port")]
    power_port: Option<String>,
    /// Baud rate of --power-port (the logger sketch's default: a sample line every 1.064 ms
    /// needs more than 115200).
    #[arg(long, default_value_t = 1_000_000)]
    power_baud: u32,
    /// A power logger's saved capture (with --from-log).
    #[arg(long, value_name = "FILE", requires = "from_log")]
    power_from_log: Option<PathBuf>,
    /// With --power-port: also save the logger's raw capture to this file.
    #[arg(long, value_name = "FILE")]
    save_power_log: Option<PathBuf>,
    /// Fewest power samples a trigger window needs; a batch with fewer is not measured (the
    /// run says how many operations per batch the next run needs).
    #[arg(long, value_name = "N")]
    power_min_samples: Option<usize>,
}

/// Longest --timeout: 7 days.
const MAX_TIMEOUT_S: f64 = 7.0 * 24.0 * 3600.0;

/// `lwcbench collect`: read the board's lines and write the result directory.
pub fn run(a: &CollectArgs) -> Result<(), String> {
    collect(a).map(|_| ())
}

/// [`run`], returning the result directory written.
pub fn collect(a: &CollectArgs) -> Result<PathBuf, String> {
    let started = SystemTime::now();
    if a.power_port.is_none() && a.power_from_log.is_none() {
        for (given, name) in
            [(a.power_min_samples.is_some(), "--power-min-samples"), (a.save_power_log.is_some(), "--save-power-log")]
        {
            if given {
                return Err(format!("{name}: needs a power logger (--power-port or --power-from-log)"));
            }
        }
    }
    if a.save_power_log.is_some() && a.power_port.is_none() {
        return Err("--save-power-log: only with --power-port".into());
    }
    let min_samples = a.power_min_samples.unwrap_or(DEFAULT_MIN_SAMPLES);
    if !(2..=1_000_000).contains(&min_samples) {
        return Err(format!("--power-min-samples: {min_samples} is not from 2 to 1000000"));
    }
    let mut power_text: Option<(String, String)> = None;
    let (text, description) = match (&a.from_log, &a.port) {
        (Some(f), _) => {
            let bytes = if f.as_os_str() == "-" {
                read_stream(&mut std::io::stdin(), "--from-log", "- (standard input)")?
            } else {
                read_log(f, "--from-log")?
            };
            if let Some(pf) = &a.power_from_log {
                let b = read_log(pf, "--power-from-log")?;
                power_text = Some((String::from_utf8_lossy(&b).into_owned(), format!("power log {}", pf.display())));
            }
            // Terminal logs may hold stray non-UTF-8 bytes (line noise); they can only be in
            // noise lines or make a line's CRC fail.
            (String::from_utf8_lossy(&bytes).into_owned(), format!("log {}", f.display()))
        }
        (None, Some(p)) => {
            let (board, power) = read_port(p, a)?;
            if let (Some(t), Some(pp)) = (power, &a.power_port) {
                power_text = Some((t, format!("power logger on {pp}")));
            }
            (board, format!("serial port {p} at {} baud", a.baud))
        }
        (None, None) => unreachable!("clap requires one input"),
    };
    let parsed = parse_log(&text);
    for l in parsed.summary_lines() {
        eprintln!("collect: {}", lwcbench_engine::text::one_line(&l, 2000));
    }
    let out = a.out.clone().unwrap_or_else(|| {
        let board = parsed.header.as_ref().map(|h| h.board.clone()).unwrap_or_default();
        lwcbench_engine::results::default_out(started, &format!("board-{board}"))
    });
    // the report crate's renderer: report.html in the unit, as a host run has it
    let src = Source {
        description,
        args: crate::invocation(&a.invocation),
        started,
        report: Some(lwcbench_report::render_html),
    };
    let power = match &power_text {
        None => None,
        Some((t, what)) => {
            let log = logger::parse_logger(t);
            let lines = log.summary_lines(what);
            for l in &lines {
                eprintln!("collect: {}", lwcbench_engine::text::one_line(l, 2000));
            }
            let r = logger::join(&parsed, &log, &JoinOptions { min_samples }).map_err(|e| {
                let e = e.strip_prefix("power log: ").unwrap_or(&e);
                format!("{what}: {}", lwcbench_engine::text::one_line(e, 2000))
            })?;
            for x in &r.refused {
                eprintln!("collect: power: batch {} not measured: {}", x.batch, x.reason);
            }
            if let Some(n) = r.refused.iter().filter_map(|x| x.ops_needed).max() {
                eprintln!("collect: power: some windows had too few samples: the next run needs at least {n} operations per batch");
            }
            Some((r, lines))
        }
    };
    let rec = write_collected_with_power(
        &parsed,
        &out,
        a.force,
        a.allow_truncated,
        &src,
        power.as_ref().map(|(r, l)| (r, &l[..])),
    )?;
    if let Some((r, _)) = &power {
        eprintln!(
            "collect: energy of {} batch(es) measured ({}), {} not measured; energy.csv",
            r.batches.len(),
            logger::source_label(r),
            r.refused.len()
        );
    }
    println!(
        "wrote {} ({} samples of {} groups from {}); report: {}",
        out.display(),
        parsed.samples.len(),
        rec.groups,
        rec.machine.hostname,
        out.join("report.html").display()
    );
    Ok(out)
}

/// A saved log: a regular file whole (at most MAX_CAPTURE); anything else (a FIFO, a device
/// such as /dev/zero) is a stream, read as a port is, so it cannot fill the memory.
fn read_log(path: &std::path::Path, what: &str) -> Result<Vec<u8>, String> {
    let name = path.display();
    let mut f = std::fs::File::open(path).map_err(|e| format!("{what}: {name}: {e}"))?;
    let meta = f.metadata().map_err(|e| format!("{what}: {name}: {e}"))?;
    if !meta.is_file() {
        return read_stream(&mut f, what, &name.to_string());
    }
    if meta.len() > MAX_CAPTURE as u64 {
        return Err(format!("{what}: {name} is larger than {} MiB: not a run's log", MAX_CAPTURE >> 20));
    }
    let mut b = Vec::new();
    f.take(MAX_CAPTURE as u64).read_to_end(&mut b).map_err(|e| format!("{what}: {name}: {e}"))?;
    Ok(b)
}

/// Read a stream (standard input, a FIFO, a device) to its end with the port's bounds: lines
/// of at most MAX_LINE, MAX_CAPTURE in all.
fn read_stream(r: &mut dyn Read, what: &str, name: &str) -> Result<Vec<u8>, String> {
    let mut cap = Capture::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => return Ok(cap.buf),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{what}: reading {name}: {e}")),
        };
        cap.append(&chunk[..n], what, name)?;
    }
}

/// Largest capture `collect --port` keeps (a whole run's log is far smaller).
const MAX_CAPTURE: usize = 256 << 20;

/// Open a serial port for reading (8N1, no flow control).
fn open_port(name: &str, baud: u32, what: &str) -> Result<Box<dyn serialport::SerialPort>, String> {
    serialport::new(name, baud)
        .timeout(Duration::from_millis(20))
        .open()
        .map_err(|e| format!("{what}: cannot open {name}: {e}"))
}

/// Longest line `collect --port` and `--power-port` accept (docs/board.md, docs/power.md): the
/// longest line a board or logger prints is a header, a few hundred bytes.
const MAX_LINE: usize = 64 << 10;

/// A capture from one port: the bytes, and the length of the line still open at their end.
struct Capture {
    buf: Vec<u8>,
    open_line: usize,
}

impl Capture {
    fn new() -> Self {
        Capture { buf: Vec::new(), open_line: 0 }
    }

    /// Keep `chunk`, or refuse it when the capture or its open line would pass its bound.
    fn append(&mut self, chunk: &[u8], what: &str, name: &str) -> Result<(), String> {
        // A device that never stops talking must not fill the memory.
        if self.buf.len() + chunk.len() > MAX_CAPTURE {
            return Err(format!(
                "{what}: {name} sent more than {} MiB without completing a run; stopped",
                MAX_CAPTURE >> 20
            ));
        }
        // A line without end (wrong baud rate, a stuck device) is cut off here, not read
        // until --timeout: no line of the format is that long.
        self.open_line = open_line_after(self.open_line, chunk);
        if self.open_line > MAX_LINE {
            return Err(format!(
                "{what}: {name} sent a line longer than {} KiB without a line end (a wrong baud rate, or not a log); stopped",
                MAX_LINE >> 10
            ));
        }
        self.buf.extend_from_slice(chunk);
        Ok(())
    }
}

/// The length of the open line after `chunk` follows an open line of `open` bytes.
fn open_line_after(open: usize, chunk: &[u8]) -> usize {
    match chunk.iter().rposition(|&b| b == b'\n' || b == b'\r') {
        Some(i) => chunk.len() - i - 1,
        None => open.saturating_add(chunk.len()),
    }
}

/// Append what a port has ready (bounded by MAX_CAPTURE, lines by MAX_LINE).
fn read_some(port: &mut dyn serialport::SerialPort, cap: &mut Capture, what: &str, name: &str) -> Result<(), String> {
    let mut chunk = [0u8; 4096];
    match port.read(&mut chunk) {
        Ok(n) => cap.append(&chunk[..n], what, name),
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => Ok(()),
        Err(e) => Err(format!("{what}: reading {name}: {e}")),
    }
}

/// How long the logger is still read after the board's end line, for the idle samples after
/// the last batch.
const POWER_TAIL: Duration = Duration::from_millis(500);

/// Read from the port until an end line follows a header, or the timeout. Sends `\n` every
/// 2 s until a header arrives: the firmware starts on any received byte. Returns the board's
/// text up to the run's end line, and the power logger's text.
fn read_port(name: &str, a: &CollectArgs) -> Result<(String, Option<String>), String> {
    // Bounded so the deadline cannot overflow Duration/Instant.
    if !(a.timeout.is_finite() && a.timeout > 0.0 && a.timeout <= MAX_TIMEOUT_S) {
        return Err(format!(
            "--timeout: {} is not a number of seconds above 0 and at most {MAX_TIMEOUT_S} (7 days)",
            a.timeout
        ));
    }
    let mut port = open_port(name, a.baud, "--port")?;
    let mut power = match &a.power_port {
        Some(p) => Some((open_port(p, a.power_baud, "--power-port")?, p.as_str(), Capture::new())),
        None => None,
    };
    let t0 = Instant::now();
    let deadline = t0 + Duration::from_secs_f64(a.timeout);
    let mut cap = Capture::new();
    let mut last_kick: Option<Instant> = None;
    let (mut header_seen, mut scanned) = (false, 0usize);
    // Where the collected run's end line stops in `buf`.
    let mut run_end = None;
    eprintln!("collect: reading {name} (timeout {} s); waiting for the board's header line", a.timeout);
    let outcome = loop {
        if Instant::now() >= deadline {
            break Err(());
        }
        if !header_seen && last_kick.is_none_or(|t| t.elapsed() >= Duration::from_secs(2)) {
            // A failed write (port not ready yet) is retried on the next kick.
            let _ = std::io::Write::write_all(&mut port, b"\n");
            last_kick = Some(Instant::now());
        }
        read_some(&mut *port, &mut cap, "--port", name)?;
        let buf = &cap.buf;
        if let Some((pp, pn, pc)) = power.as_mut() {
            read_some(&mut **pp, pc, "--power-port", pn)?;
        }
        // Look at complete lines only, each once; a header restarts the watch for the end line.
        if let Some(nl) = buf[scanned..].iter().rposition(|&b| b == b'\n' || b == b'\r').map(|i| scanned + i) {
            let text = String::from_utf8_lossy(&buf[scanned..=nl]).into_owned();
            scanned = nl + 1;
            if !header_seen && text.contains("LWCB H ") {
                eprintln!("collect: header received after {:.1} s", t0.elapsed().as_secs_f64());
                header_seen = true;
            }
            if header_seen && text.contains("LWCB E ") && text.rfind("LWCB E ") > text.rfind("LWCB H ") {
                run_end = Some(end_of_last_end_line(&buf[..=nl]));
                break Ok(());
            }
        }
    };
    if let Some((pp, pn, pc)) = power.as_mut() {
        let t = Instant::now();
        while t.elapsed() < POWER_TAIL {
            read_some(&mut **pp, pc, "--power-port", pn)?;
        }
    }
    let buf = cap.buf;
    if let Some(f) = &a.save_log {
        lwcbench_engine::results::write_atomic_to(f, &buf, "--save-log")?;
    }
    // What follows the end line (a run the board started on a late kick, cut off where the
    // read stopped) is kept in --save-log but not parsed: it is not part of this run.
    if let Some(cut) = run_end {
        let tail = buf.len() - cut;
        if buf[cut..].iter().any(|b| !b.is_ascii_whitespace()) {
            eprintln!("collect: {tail} byte(s) after the run's end line are not parsed (kept by --save-log)");
        }
    }
    let board = String::from_utf8_lossy(&buf[..run_end.unwrap_or(buf.len())]).into_owned();
    let power = power.map(|(_, _, pc)| pc.buf);
    if let (Some(f), Some(pb)) = (&a.save_power_log, &power) {
        lwcbench_engine::results::write_atomic_to(f, pb, "--save-power-log")?;
    }
    if outcome.is_err() {
        eprintln!(
            "collect: no end line within {} s (header {})",
            a.timeout,
            if header_seen { "seen" } else { "never seen" }
        );
    }
    Ok((board, power.map(|pb| String::from_utf8_lossy(&pb).into_owned())))
}

/// The index just past the line terminator that ends the last `LWCB E ` line of `seg` (which
/// ends with a terminator); the whole of `seg` if it holds no such line.
fn end_of_last_end_line(seg: &[u8]) -> usize {
    let Some(at) = seg.windows(7).rposition(|w| w == b"LWCB E ") else { return seg.len() };
    let Some(nl) = seg[at..].iter().position(|&b| b == b'\n' || b == b'\r').map(|i| at + i) else {
        return seg.len();
    };
    // A CR LF pair ends one line.
    if seg[nl] == b'\r' && seg.get(nl + 1) == Some(&b'\n') {
        nl + 2
    } else {
        nl + 1
    }
}
