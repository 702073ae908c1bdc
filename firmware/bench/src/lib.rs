//! The benchmark suites as they run on a board, printing the line format of `docs/board.md`
//! (version 1). Shared unchanged by every Rust board image; a board supplies only [`Board`]
//! (a tick counter, an optional cycle counter, a way to write bytes) and its [`BoardInfo`].
//!
//! What is measured mirrors the host engine (`crates/engine/src/runner.rs`, docs/measurement.md):
//! per group (cipher × scenario × key/IV variant × size) a batch is calibrated so one sample
//! lasts at least `min_sample_ticks`, then `warmup` + `reps` samples are timed, each after an
//! untimed preparation (fresh key/IV for the random variants, `init`, payload restored).
//! `init` times `init(key, iv)`; `keystream` times `keystream_bits(out, n)`; `full` times
//! `apply_bits(buf, n)` (keystream + XOR into the payload). No floating point, no allocator.
#![cfg_attr(not(test), no_std)]

use core::fmt::Write;
use core::hint::black_box;

use lwcbench_core::StreamCipher;

pub use lwcbench_draco::{DracoFast, DracoRef};
pub use lwcbench_estream::{Grain128a, Trivium};

/// How this code was built (from build.rs), for `BoardInfo`.
pub mod build {
    /// `rustc -V` of the compiler that built the firmware.
    pub const COMPILER: &str = env!("BOARD_RUSTC");
    /// Cargo profile (`release`, `debug`).
    pub const PROFILE: &str = env!("BOARD_PROFILE");
    /// Optimisation level of that profile (`3`, `s`, …).
    pub const OPT: &str = env!("BOARD_OPT");
    /// Target triple (`thumbv7m-none-eabi`, …).
    pub const TARGET: &str = env!("BOARD_TARGET");
    /// Git commit of the checkout, `-dirty` when it had changes; `unknown` outside git.
    pub const COMMIT: &str = env!("BOARD_COMMIT");
}

/// What a board provides.
pub trait Board {
    /// Monotonic tick counter at `BoardInfo::tick_hz` (a board extends narrow hardware
    /// counters to 64 bits).
    fn ticks(&mut self) -> u64;
    /// Free-running core-cycle counter, wrapping at `2^BoardInfo::cycle_bits`; None if none.
    fn cycles(&mut self) -> Option<u32>;
    /// Send bytes to the host (blocking until queued).
    fn write(&mut self, bytes: &[u8]);
    /// Drive the power logger's trigger pin (docs/power.md); a board without one ignores it.
    fn trigger(&mut self, _high: bool) {}
}

/// The power logger's trigger (docs/power.md): the board drives a pin high while each timed
/// batch runs and prints a marker line (`LWCB M`) with the batch's ticks.
#[derive(Clone, Copy)]
pub struct Trigger {
    /// The pin, as printed in the header (`trigger=GP15`).
    pub pin: &'static str,
    /// Ticks the board waits with the pin low before each batch, so the logger sees the idle
    /// draw between batches (its baseline).
    pub idle_ticks: u64,
}

/// Facts printed in the header line (see docs/board.md for each key).
pub struct BoardInfo {
    /// The board's name (`board=`).
    pub board: &'static str,
    /// The microcontroller (`mcu=`).
    pub mcu: &'static str,
    /// Core clock in Hz (`cpu_hz=`).
    pub cpu_hz: u32,
    /// Rate of `Board::ticks` in Hz (`tick_hz=`).
    pub tick_hz: u32,
    /// The timer behind `Board::ticks` (`timer=`).
    pub timer: &'static str,
    /// "none" when `Board::cycles` returns None.
    pub cycles: &'static str,
    /// Width of the cycle counter (24 for SysTick, 32 for DWT CYCCNT).
    pub cycle_bits: u32,
    /// Firmware name and version (`firmware=`).
    pub firmware: &'static str,
    /// Compiler version (`compiler=`, usually [`build::COMPILER`]).
    pub compiler: &'static str,
    /// Build profile (`profile=`, usually [`build::PROFILE`]).
    pub profile: &'static str,
    /// Optimisation level (`opt=`, usually [`build::OPT`]).
    pub opt: &'static str,
    /// Target triple (`target=`, usually [`build::TARGET`]).
    pub target: &'static str,
    /// Source commit (`commit=`, usually [`build::COMMIT`]).
    pub commit: &'static str,
}

/// The run's settings.
#[derive(Clone, Copy)]
pub struct Config {
    /// Timed samples per group.
    pub reps: u32,
    /// Warm-up samples per group, run first and printed as `LWCB W` lines.
    pub warmup: u32,
    /// Shortest sample in ticks; the batch size is calibrated to reach it.
    pub min_sample_ticks: u64,
    /// Seed of the random key/IV variants and payloads.
    pub seed: u64,
    /// Message sizes in bits (1..=1024; at most 8 are run).
    pub sizes: &'static [usize],
    /// The power logger's trigger; None = no pin, no marker lines.
    pub trigger: Option<Trigger>,
}

/// The DRACO study's suite: 1, 8, 128 and 1024 bits.
pub const SIZES: &[usize] = &[1, 8, 128, 1024];
const MAX_BYTES: usize = 128;
const MAX_BATCH: u64 = 1 << 20;
const KIVS: [(&str, bool, bool); 4] =
    [("s,s", false, false), ("s,r", false, true), ("r,s", true, false), ("r,r", true, true)];

#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    Init,
    Keystream,
    Full,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Init => "init",
            Scenario::Keystream => "keystream",
            Scenario::Full => "full",
        }
    }
}

/// CRC-32 (IEEE 802.3, as zlib), continued from `crc`.
pub fn crc32_update(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
        }
    }
    !c
}

/// xorshift64* — not cryptographic; it only has to make the random key/IV variants differ
/// from sample to sample.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn fill(&mut self, b: &mut [u8]) {
        for chunk in b.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// Longest output line: the header with every key, long build strings and the trigger.
const LINE_MAX: usize = 768;

/// One output line being built: body, then ` *crc\r\n`.
struct Line {
    buf: [u8; LINE_MAX],
    len: usize,
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let b = s.as_bytes();
        let end = self.len + b.len();
        if end > self.buf.len() - 16 {
            return Err(core::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(b);
        self.len = end;
        Ok(())
    }
}

/// A field value with spaces, `%` and non-printable bytes percent-encoded (docs/board.md).
struct Pct<'a>(&'a str);

impl core::fmt::Display for Pct<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for &b in self.0.as_bytes() {
            if b == b'%' || b == b'+' || b <= b' ' || b >= 0x7f {
                write!(f, "%{b:02X}")?;
            } else {
                f.write_char(b as char)?;
            }
        }
        Ok(())
    }
}

struct Out<'b, B: Board> {
    board: &'b mut B,
    line: Line,
    seq: u64,
    run_crc: u32,
    samples: u64,
    warmups: u64,
    /// Next marker line's batch id.
    batch: u64,
}

impl<B: Board> Out<'_, B> {
    fn start(&mut self) -> &mut Line {
        self.line.len = 0;
        &mut self.line
    }
    /// Close the line with its CRC and send it; `in_run` adds it to the run checksum.
    fn finish(&mut self, in_run: bool) {
        let body_len = self.line.len;
        let crc = crc32_update(0, &self.line.buf[..body_len]);
        if in_run {
            self.run_crc = crc32_update(self.run_crc, &self.line.buf[..body_len]);
            self.run_crc = crc32_update(self.run_crc, b"\n");
        }
        let _ = write!(self.line, " *{crc:08x}\r\n");
        self.board.write(&self.line.buf[..self.line.len]);
    }
    fn info(&mut self, msg: core::fmt::Arguments<'_>) {
        let l = self.start();
        let _ = l.write_str("LWCB I ");
        let _ = l.write_fmt(msg);
        self.finish(false);
    }
}

/// Print an `LWCB I` line (ignored by the collector; for a human watching the terminal).
pub fn info_line<B: Board>(board: &mut B, msg: &str) {
    let mut o =
        Out { board, line: Line { buf: [0; LINE_MAX], len: 0 }, seq: 0, run_crc: 0, samples: 0, warmups: 0, batch: 0 };
    o.info(format_args!("{msg}"));
}

fn ticks_since<B: Board>(b: &mut B, t0: u64) -> u64 {
    b.ticks().wrapping_sub(t0)
}

/// Median ticks of an empty timed region (start + stop).
fn overhead<B: Board>(b: &mut B) -> u64 {
    let mut v = [0u64; 31];
    for x in v.iter_mut() {
        let t0 = b.ticks();
        *x = ticks_since(b, t0);
    }
    v.sort_unstable();
    v[v.len() / 2]
}

/// The cipher under test and its working buffers for one group.
struct Work<'c> {
    c: &'c mut dyn StreamCipher,
    sc: Scenario,
    nbits: usize,
    key: [u8; 32],
    iv: [u8; 32],
    klen: usize,
    ivlen: usize,
    payload: [u8; MAX_BYTES],
    buf: [u8; MAX_BYTES],
}

impl Work<'_> {
    fn prepare(&mut self) {
        self.buf = self.payload;
        // A cipher whose init fails here has a wrong key/IV length in INFO: a bug, not data.
        self.c.init(&self.key[..self.klen], &self.iv[..self.ivlen]).expect("init with INFO lengths");
    }
    #[inline(never)]
    fn run(&mut self, batch: u64) {
        let nb = self.nbits.div_ceil(8);
        for _ in 0..batch {
            let r = match self.sc {
                Scenario::Init => self.c.init(&self.key[..self.klen], &self.iv[..self.ivlen]),
                Scenario::Keystream => self.c.keystream_bits(&mut self.buf[..nb], self.nbits),
                Scenario::Full => self.c.apply_bits(&mut self.buf[..nb], self.nbits),
            };
            black_box(&mut self.buf);
            black_box(r).expect("cipher call with valid lengths");
        }
    }
}

/// Number of groups a run of `n_ciphers` ciphers measures with these sizes.
pub fn groups(n_ciphers: usize, sizes: &[usize]) -> usize {
    n_ciphers * KIVS.len() * (1 + 2 * sizes.len())
}

/// Run every group for every cipher and print the whole run (header … end line).
pub fn run<B: Board>(board: &mut B, info: &BoardInfo, cfg: &Config, ciphers: &mut [&mut dyn StreamCipher]) {
    assert!(cfg.sizes.iter().all(|&s| s > 0 && s <= MAX_BYTES * 8), "sizes must be 1..=1024 bits");
    let ovh = overhead(board);
    let mut o =
        Out { board, line: Line { buf: [0; LINE_MAX], len: 0 }, seq: 0, run_crc: 0, samples: 0, warmups: 0, batch: 0 };
    let n_groups = groups(ciphers.len(), cfg.sizes);
    {
        let l = o.start();
        let _ = write!(
            l,
            "LWCB H 1 board={} mcu={} cpu_hz={} tick_hz={} timer={} cycles={} overhead_ticks={ovh} reps={} warmup={} groups={n_groups} min_sample_ticks={} seed={} ciphers=",
            Pct(info.board), Pct(info.mcu), info.cpu_hz, info.tick_hz, Pct(info.timer), Pct(info.cycles), cfg.reps, cfg.warmup, cfg.min_sample_ticks, cfg.seed
        );
        for (i, c) in ciphers.iter().enumerate() {
            let ci = c.info();
            let _ = write!(
                l,
                "{}{}/{}/{}",
                if i > 0 { "," } else { "" },
                Pct(ci.name),
                Pct(ci.implementation),
                Pct(ci.language.as_str())
            );
        }
        let _ = write!(
            l,
            " firmware={} compiler={} profile={} opt={} target={} commit={}",
            Pct(info.firmware),
            Pct(info.compiler),
            Pct(info.profile),
            Pct(info.opt),
            Pct(info.target),
            Pct(info.commit)
        );
        if let Some(tr) = cfg.trigger {
            let _ = write!(l, " trigger={} idle_ticks={}", Pct(tr.pin), tr.idle_ticks);
        }
    }
    o.finish(false);
    let mut rng = Rng(cfg.seed ^ 0x9E37_79B9_7F4A_7C15);
    for c in ciphers.iter_mut() {
        let ci = c.info();
        o.info(format_args!("cipher {}/{}", Pct(ci.name), Pct(ci.implementation)));
        let mut plan = [(Scenario::Init, 0usize); 1 + 2 * 8];
        let mut np = 1;
        for &s in cfg.sizes.iter().take(8) {
            plan[np] = (Scenario::Keystream, s);
            plan[np + 1] = (Scenario::Full, s);
            np += 2;
        }
        for &(sc, nbits) in &plan[..np] {
            for &(kiv, rk, riv) in &KIVS {
                let mut w = Work {
                    c: &mut **c,
                    sc,
                    nbits,
                    key: core::array::from_fn(|i| i as u8),
                    iv: core::array::from_fn(|i| i as u8),
                    klen: ci.key_bytes(),
                    ivlen: ci.iv_bytes(),
                    payload: [0; MAX_BYTES],
                    buf: [0; MAX_BYTES],
                };
                rng.fill(&mut w.payload);
                measure_group(
                    &mut o,
                    &mut w,
                    info,
                    cfg,
                    &mut rng,
                    (ci.name, ci.implementation, ci.language.as_str(), kiv, rk, riv),
                );
            }
        }
    }
    let (ns, nw, crc) = (o.samples, o.warmups, o.run_crc);
    let l = o.start();
    let _ = write!(l, "LWCB E samples={ns} warmup={nw} crc={crc:08x}");
    o.finish(false);
}

fn measure_group<B: Board>(
    o: &mut Out<'_, B>,
    w: &mut Work<'_>,
    info: &BoardInfo,
    cfg: &Config,
    rng: &mut Rng,
    (name, imp, lang, kiv, rk, riv): (&str, &str, &str, &str, bool, bool),
) {
    // Calibrate: double the batch until one sample lasts min_sample_ticks, then size it.
    let mut batch = 1u64;
    loop {
        w.prepare();
        let t0 = o.board.ticks();
        w.run(batch);
        let t = ticks_since(o.board, t0);
        if t >= cfg.min_sample_ticks || batch >= MAX_BATCH {
            batch = (cfg.min_sample_ticks * batch).div_ceil(t.max(1)).clamp(1, MAX_BATCH);
            break;
        }
        batch *= 2;
    }
    // An interrupt during calibration inflates `t` and shrinks the batch: confirm it.
    for _ in 0..20 {
        w.prepare();
        let t0 = o.board.ticks();
        w.run(batch);
        if ticks_since(o.board, t0) >= cfg.min_sample_ticks / 2 || batch >= MAX_BATCH {
            break;
        }
        batch *= 2;
    }
    let size = if w.sc == Scenario::Init { 0 } else { w.nbits };
    let cycle_limit = if info.cycle_bits >= 32 { u32::MAX as u64 } else { (1u64 << info.cycle_bits) - 1 };
    for i in 0..cfg.warmup + cfg.reps {
        if rk {
            rng.fill(&mut w.key[..w.klen]);
        }
        if riv {
            rng.fill(&mut w.iv[..w.ivlen]);
        }
        w.prepare();
        if let Some(tr) = cfg.trigger {
            let idle = o.board.ticks();
            while ticks_since(o.board, idle) < tr.idle_ticks {}
            o.board.trigger(true);
        }
        let c0 = o.board.cycles();
        let t0 = o.board.ticks();
        w.run(batch);
        let t = ticks_since(o.board, t0);
        let c1 = o.board.cycles();
        if cfg.trigger.is_some() {
            o.board.trigger(false);
        }
        // The cycle counter wraps: trust its difference only well inside one period, judged
        // by the tick counter.
        let expect_cycles = t as u128 * info.cpu_hz as u128 / info.tick_hz.max(1) as u128;
        let cycles = match (c0, c1) {
            (Some(a), Some(b)) if expect_cycles < (cycle_limit as u128) * 3 / 4 => {
                Some(b.wrapping_sub(a) as u64 & cycle_limit)
            }
            _ => None,
        };
        let warm = i < cfg.warmup;
        let rep = if warm { i } else { i - cfg.warmup };
        let seq = o.seq;
        if cfg.trigger.is_some() {
            // Outside seq and the end line's crc: the S/W lines are those of a run without it.
            let id = o.batch;
            let l = o.start();
            let _ = write!(l, "LWCB M {id} {seq} {batch} {t0} {}", t0.wrapping_add(t));
            o.finish(false);
            o.batch += 1;
        }
        let l = o.start();
        let _ = write!(
            l,
            "LWCB {} {seq} {} {} {} stream {} {kiv} {size} random {rep} {batch} {t} ",
            if warm { "W" } else { "S" },
            Pct(name),
            Pct(imp),
            Pct(lang),
            w.sc.name()
        );
        let _ = match cycles {
            Some(c) => write!(l, "{c}"),
            None => l.write_str("-"),
        };
        o.finish(true);
        o.seq += 1;
        if warm {
            o.warmups += 1;
        } else {
            o.samples += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A board whose clock advances 7 ticks per read and whose cycle counter is 24 bits.
    struct Fake {
        t: u64,
        out: Vec<u8>,
        /// (tick, level) of every trigger change.
        pin: Vec<(u64, bool)>,
    }
    impl Board for Fake {
        fn ticks(&mut self) -> u64 {
            self.t += 7;
            self.t
        }
        fn cycles(&mut self) -> Option<u32> {
            Some((self.t as u32).wrapping_mul(3) & 0xFF_FFFF)
        }
        fn write(&mut self, b: &[u8]) {
            self.out.extend_from_slice(b);
        }
        fn trigger(&mut self, high: bool) {
            self.pin.push((self.t, high));
        }
    }

    const INFO: BoardInfo = BoardInfo {
        board: "fake board",
        mcu: "none",
        cpu_hz: 3,
        tick_hz: 1,
        timer: "t",
        cycles: "c",
        cycle_bits: 24,
        firmware: "0",
        compiler: "rustc",
        profile: "test",
        opt: "0",
        target: "host",
        commit: "x",
    };

    #[test]
    fn crc_check_value() {
        assert_eq!(crc32_update(0, b"123456789"), 0xCBF4_3926); // the CRC-32 check value
    }

    #[test]
    fn run_prints_the_promised_lines() {
        let mut b = Fake { t: 0, out: Vec::new(), pin: Vec::new() };
        let cfg = Config { reps: 3, warmup: 1, min_sample_ticks: 5, seed: 1, sizes: &[8, 1024], trigger: None };
        let mut t = Trivium::default();
        let mut d = DracoRef::default();
        run(&mut b, &INFO, &cfg, &mut [&mut t, &mut d]);
        let text = String::from_utf8(b.out).unwrap();
        let lines: Vec<&str> = text.split("\r\n").filter(|l| !l.is_empty()).collect();
        let count = |k: &str| lines.iter().filter(|l| l.starts_with(k)).count();
        let g = groups(2, &[8, 1024]);
        assert_eq!(g, 2 * 4 * 5);
        assert_eq!(count("LWCB S "), g * 3);
        assert_eq!(count("LWCB W "), g);
        assert!(lines[0].starts_with("LWCB H 1 board=fake%20board "), "{}", lines[0]);
        assert!(
            lines[0].contains(" groups=40 ") && lines[0].contains("ciphers=Trivium/rust/Rust,DRACO/rust-ref/Rust ")
        );
        assert!(lines.last().unwrap().starts_with(&format!("LWCB E samples={} warmup={} crc=", g * 3, g)));
        // each line's own checksum
        for l in &lines {
            let (body, crc) = l.rsplit_once(" *").unwrap();
            assert_eq!(u32::from_str_radix(crc, 16).unwrap(), crc32_update(0, body.as_bytes()), "{l}");
        }
        // a keystream sample: 14 fields, batch ≥ 1; the cycle reads enclose the two tick reads,
        // and the second tick read advances the fake clock by 7 more: cycles = 3 × (ticks + 7)
        let s = lines.iter().find(|l| l.contains(" keystream r,s 1024 ")).unwrap();
        let f: Vec<&str> = s.split(' ').collect();
        assert_eq!(f.len(), 16, "{s}");
        let (ticks, cycles): (u64, u64) = (f[13].parse().unwrap(), f[14].parse().unwrap());
        assert!(f[12].parse::<u64>().unwrap() >= 1);
        assert_eq!(cycles, 3 * (ticks + 7));
        assert!(b.pin.is_empty() && count("LWCB M ") == 0);
    }

    /// The QEMU image's header with the trigger keys overflowed a 512-byte line (the collector
    /// then found no header at all); the same strings with a whole commit id must fit.
    #[test]
    fn a_long_header_with_the_trigger_keeps_its_checksum() {
        let mut b = Fake { t: 0, out: Vec::new(), pin: Vec::new() };
        let info = BoardInfo {
            board: "qemu-lm3s6965evb",
            mcu: "Cortex-M3 (QEMU TCG, -icount)",
            timer: "SysTick (core clock) extended to 64 bits",
            cpu_hz: 12_500_000,
            tick_hz: 12_500_000,
            cycles: "none",
            firmware: "0.1.0",
            compiler: "rustc 1.95.0 (59807616e 2026-04-14)",
            profile: "release",
            opt: "3",
            target: "thumbv7m-none-eabi",
            // a whole commit id, as a build from a detached checkout may give
            commit: "984892ae76c5f0d2c8a41e3b9d7f6a5c4b3e2d1f",
            ..INFO
        };
        let tr = Trigger { pin: "markers-only", idle_ticks: 0 };
        let cfg = Config { reps: 1, warmup: 0, min_sample_ticks: 5, seed: 1, sizes: &[8], trigger: Some(tr) };
        let (mut r, mut f, mut t, mut g) =
            (DracoRef::default(), DracoFast::default(), Trivium::default(), Grain128a::default());
        run(&mut b, &info, &cfg, &mut [&mut r, &mut f, &mut t, &mut g]);
        let text = String::from_utf8(b.out).unwrap();
        let header = text.split("\r\n").next().unwrap();
        let (body, crc) = header.rsplit_once(" *").expect("the header has its checksum");
        assert!(body.ends_with(" trigger=markers-only idle_ticks=0"), "{body}");
        assert_eq!(u32::from_str_radix(crc, 16).unwrap(), crc32_update(0, body.as_bytes()));
    }

    #[test]
    fn the_trigger_encloses_each_timed_batch_and_its_marker_names_it() {
        let mut b = Fake { t: 0, out: Vec::new(), pin: Vec::new() };
        let tr = Trigger { pin: "GP15", idle_ticks: 50 };
        let cfg = Config { reps: 2, warmup: 1, min_sample_ticks: 5, seed: 1, sizes: &[8], trigger: Some(tr) };
        let mut t = Trivium::default();
        run(&mut b, &INFO, &cfg, &mut [&mut t]);
        let text = String::from_utf8(b.out).unwrap();
        let lines: Vec<&str> = text.split("\r\n").filter(|l| !l.is_empty()).collect();
        assert!(lines[0].contains(" trigger=GP15 idle_ticks=50 *"), "{}", lines[0]);
        let g = groups(1, &[8]);
        let markers: Vec<Vec<u64>> = lines
            .iter()
            .filter(|l| l.starts_with("LWCB M "))
            .map(|l| l.rsplit_once(" *").unwrap().0.split(' ').skip(2).map(|x| x.parse().unwrap()).collect())
            .collect();
        assert_eq!(markers.len(), g * 3, "one marker per warm-up and measured sample");
        assert_eq!(b.pin.len(), 2 * markers.len());
        for (i, m) in markers.iter().enumerate() {
            let (id, seq, ops, start, end) = (m[0], m[1], m[2], m[3], m[4]);
            assert_eq!((id, seq), (i as u64, i as u64));
            // the sample line right after the marker: same seq, batch and ticks
            let at = lines.iter().position(|l| l.starts_with(&format!("LWCB M {id} "))).unwrap();
            let f: Vec<&str> = lines[at + 1].split(' ').collect();
            assert!(f[1] == "S" || f[1] == "W");
            assert_eq!(f[2].parse::<u64>().unwrap(), seq);
            assert_eq!(f[12].parse::<u64>().unwrap(), ops);
            assert_eq!(f[13].parse::<u64>().unwrap(), end - start);
            // the pin rises before the first tick read and falls after the last; the fake
            // clock advances 7 per read, so the idle wait shows as ≥ 50 ticks low before it
            let ((rise, hi), (fall, lo)) = (b.pin[2 * i], b.pin[2 * i + 1]);
            assert!(hi && !lo && rise < start && fall >= end, "{rise} {start} {end} {fall}");
            if i > 0 {
                assert!(rise - b.pin[2 * i - 1].0 >= 50);
            }
        }
        // markers are outside the run checksum: the end line's crc covers S/W lines only
        let mut crc = 0;
        for l in lines.iter().filter(|l| l.starts_with("LWCB S ") || l.starts_with("LWCB W ")) {
            crc = crc32_update(crc, l.rsplit_once(" *").unwrap().0.as_bytes());
            crc = crc32_update(crc, b"\n");
        }
        assert!(lines.last().unwrap().contains(&format!("crc={crc:08x}")));
    }
}
