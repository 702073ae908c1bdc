//! `lwcbench collect`: read a board's benchmark lines (docs/board.md) from a serial port or a
//! saved log and write the usual result files.
use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use clap::Args;
use lwcbench_engine::collect::{parse_log, write_collected, Source};

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["from_log", "port"])))]
pub struct CollectArgs {
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
}

/// Longest --timeout: 7 days.
const MAX_TIMEOUT_S: f64 = 7.0 * 24.0 * 3600.0;

pub fn run(a: &CollectArgs) -> Result<(), String> {
    let started = SystemTime::now();
    let (text, description) = match (&a.from_log, &a.port) {
        (Some(f), _) => {
            let bytes = if f.as_os_str() == "-" {
                let mut b = Vec::new();
                std::io::stdin().read_to_end(&mut b).map_err(|e| format!("--from-log -: reading stdin: {e}"))?;
                b
            } else {
                std::fs::read(f).map_err(|e| format!("--from-log: {}: {e}", f.display()))?
            };
            // Terminal logs may hold stray non-UTF-8 bytes (line noise); they can only be in
            // noise lines or make a line's CRC fail.
            (String::from_utf8_lossy(&bytes).into_owned(), format!("log {}", f.display()))
        }
        (None, Some(p)) => (read_port(p, a)?, format!("serial port {p} at {} baud", a.baud)),
        (None, None) => unreachable!("clap requires one input"),
    };
    let parsed = parse_log(&text);
    for l in parsed.summary_lines() {
        eprintln!("collect: {}", lwcbench_engine::text::one_line(&l, 2000));
    }
    let out = a.out.clone().unwrap_or_else(|| {
        let stamp = lwcbench_engine::results::rfc3339(started).replace(':', "-");
        let board = parsed.header.as_ref().map(|h| h.board.clone()).unwrap_or_default();
        PathBuf::from("lwcbench-results").join(format!("{stamp}-board-{board}"))
    });
    let src = Source { description, args: std::env::args().collect(), started };
    let rec = write_collected(&parsed, &out, a.force, a.allow_truncated, &src)?;
    println!(
        "wrote {} ({} samples of {} groups from {}); report: {}",
        out.display(),
        parsed.samples.len(),
        rec.groups,
        rec.machine.hostname,
        out.join("report.html").display()
    );
    Ok(())
}

/// Read from the port until an end line follows a header, or the timeout. Sends `\n` every
/// 2 s until a header arrives: the firmware starts on any received byte.
/// Largest capture `collect --port` keeps (a whole run's log is far smaller).
const MAX_CAPTURE: usize = 256 << 20;

fn read_port(name: &str, a: &CollectArgs) -> Result<String, String> {
    // Bounded so the deadline cannot overflow Duration/Instant.
    if !(a.timeout.is_finite() && a.timeout > 0.0 && a.timeout <= MAX_TIMEOUT_S) {
        return Err(format!(
            "--timeout: {} is not a number of seconds above 0 and at most {MAX_TIMEOUT_S} (7 days)",
            a.timeout
        ));
    }
    let mut port = serialport::new(name, a.baud)
        .timeout(Duration::from_millis(200))
        .open()
        .map_err(|e| format!("--port: cannot open {name}: {e}"))?;
    let t0 = Instant::now();
    let deadline = t0 + Duration::from_secs_f64(a.timeout);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut last_kick: Option<Instant> = None;
    let (mut header_seen, mut scanned) = (false, 0usize);
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
        match port.read(&mut chunk) {
            // A board that never stops talking must not fill the memory.
            Ok(n) if buf.len() + n > MAX_CAPTURE => {
                return Err(format!(
                    "--port: {name} sent more than {} MiB without completing a run; stopped",
                    MAX_CAPTURE >> 20
                ))
            }
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) => return Err(format!("--port: reading {name}: {e}")),
        }
        // Look at complete lines only; a header restarts the watch for the end line.
        if let Some(nl) = buf.iter().rposition(|&b| b == b'\n' || b == b'\r') {
            let text = String::from_utf8_lossy(&buf[scanned..=nl]).into_owned();
            scanned = nl + 1;
            if !header_seen && text.contains("LWCB H ") {
                eprintln!("collect: header received after {:.1} s", t0.elapsed().as_secs_f64());
                header_seen = true;
            }
            if header_seen && text.contains("LWCB E ") && text.rfind("LWCB E ") > text.rfind("LWCB H ") {
                break Ok(());
            }
        }
    };
    if let Some(f) = &a.save_log {
        lwcbench_engine::results::write_atomic_to(f, &buf, "--save-log")?;
    }
    if outcome.is_err() {
        eprintln!(
            "collect: no end line within {} s (header {})",
            a.timeout,
            if header_seen { "seen" } else { "never seen" }
        );
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}
