//! The power logger (docs/power.md): samples an INA219 or INA226 through its embedded-hal
//! driver, timestamps each sample with the logger's own 1 MHz clock, counts the board's
//! trigger edges and frames `LWCP` lines (format version 1: sequence number, CRC-32) — the
//! protocol the UNO sketch (firmware/arduino/lwcpower) prints and `lwcbench collect` reads.
//! Hardware-free: the board glue (firmware/pico-logger) supplies the I²C bus, the clock, the
//! edge interrupt and the serial port.
#![cfg_attr(not(test), no_std)]

mod line;
mod sensor;
#[cfg(test)]
mod tests;

use core::fmt::Write;

pub use line::{crc32, Line};
pub use sensor::{Fault, Ina219, Ina226, Raw, Sensor, SensorKind, Settings, SettingsError};

/// `LWCP` format version this crate prints.
pub const FORMAT_VERSION: u32 = 1;
/// Ticks per second of the timestamps (the RP2040 TIMER, µs).
pub const TICK_HZ: u32 = 1_000_000;

/// One trigger edge as the interrupt saw it: the counts after it and its time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Edge {
    /// Rising edges counted so far, this one included.
    pub rises: u32,
    /// The level after the edge.
    pub high: bool,
    /// Ticks ([`TICK_HZ`]) of the edge.
    pub t: u64,
}

/// The trigger input's state, updated from the edge interrupt: the counts live here so a
/// full queue loses an edge's line, never its count.
pub struct Trigger<const N: usize> {
    rises: u32,
    high: bool,
    queue: [Edge; N],
    head: usize,
    len: usize,
    lost: u32,
}

impl<const N: usize> Trigger<N> {
    /// Low, no edge counted, an empty queue of `N` edges.
    pub const fn new() -> Self {
        Trigger { rises: 0, high: false, queue: [Edge { rises: 0, high: false, t: 0 }; N], head: 0, len: 0, lost: 0 }
    }

    /// The pin's new level at tick `t`. A level equal to the last one is a glitch shorter
    /// than the interrupt's latency and is not an edge.
    pub fn edge(&mut self, high: bool, t: u64) {
        if high == self.high {
            return;
        }
        self.high = high;
        if high {
            self.rises = self.rises.wrapping_add(1);
        }
        if self.len == N {
            self.lost = self.lost.saturating_add(1);
            return;
        }
        self.queue[(self.head + self.len) % N] = Edge { rises: self.rises, high, t };
        self.len += 1;
    }

    /// The oldest edge not yet printed.
    pub fn pop(&mut self) -> Option<Edge> {
        if self.len == 0 {
            return None;
        }
        let e = self.queue[self.head];
        self.head = (self.head + 1) % N;
        self.len -= 1;
        Some(e)
    }

    /// Rising edges so far and the level now.
    pub fn state(&self) -> (u32, bool) {
        (self.rises, self.high)
    }

    /// A new run (a new header): counts and queue restart, the level stays what the pin is.
    pub fn restart(&mut self) {
        self.rises = 0;
        self.len = 0;
        self.lost = 0;
    }

    /// Edges whose line was lost to a full queue since the last call.
    pub fn take_lost(&mut self) -> u32 {
        core::mem::take(&mut self.lost)
    }
}

impl<const N: usize> Default for Trigger<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// Where a sample falls, from its `rises` and level (docs/power.md, `LWCP P`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// Trigger high: inside window `k` (0-based).
    In(u32),
    /// Trigger low after window `k`.
    IdleAfter(u32),
    /// Before the first rising edge the logger counted (low, or high since before it started:
    /// a window it did not see begin).
    BeforeFirst,
}

impl Window {
    /// The window of a sample taken with `rises` rising edges counted and the trigger at `high`.
    pub fn of(rises: u32, high: bool) -> Window {
        match (rises, high) {
            (0, _) => Window::BeforeFirst,
            (k, true) => Window::In(k - 1),
            (k, false) => Window::IdleAfter(k - 1),
        }
    }
}

/// The sampling loop's state: sequence numbers, the next sample's due time, lost readings.
pub struct Logger<S: Sensor> {
    sensor: S,
    settings: Settings,
    seq: u64,
    next_sample: u64,
    running: bool,
    /// Readings lost in the current run of faults, and the fault.
    faults: u32,
    fault: Option<Fault>,
}

fn info(text: &str) -> Line {
    let mut l = Line::of('I');
    let _ = write!(l, " {text}");
    l.finish()
}

impl<S: Sensor> Logger<S> {
    /// Not running until [`Logger::begin`]; nothing is sent to the sensor before it.
    pub fn new(sensor: S, settings: Settings) -> Self {
        Logger { sensor, settings, seq: 0, next_sample: 0, running: false, faults: 0, fault: None }
    }

    /// (Re)start a run at tick `now`: check the settings, configure the sensor, and return the
    /// header; an `LWCP I` line instead (and no sampling) if either fails. Counts restart: the
    /// collector uses the lines after the last header.
    pub fn begin(&mut self, now: u64) -> Line {
        self.running = false;
        self.seq = 0;
        self.faults = 0;
        self.fault = None;
        let s = self.settings;
        if let Err(e) = s.check() {
            return info(e.text());
        }
        if self.sensor.configure(&s).is_err() {
            return info("sensor%20not%20answering%20at%20its%20address");
        }
        self.running = true;
        self.next_sample = now + s.period_us() as u64;
        let mut l = Line::of('H');
        let _ = write!(
            l,
            " {FORMAT_VERSION} sensor={} shunt_uohm={} shunt_tol_ppm={} tick_hz={TICK_HZ} conv_us={} avg={} pin={} period_us={} firmware=lwc-power-logger",
            s.sensor.name(),
            s.shunt_uohm,
            s.shunt_tol_ppm,
            s.conv_us,
            s.avg,
            s.pin,
            s.period_us()
        );
        l.finish()
    }

    /// The `LWCP T` line of an edge taken from [`Trigger::pop`].
    pub fn edge_line(&mut self, e: Edge) -> Option<Line> {
        if !self.running {
            return None;
        }
        let mut l = Line::of('T');
        let _ = write!(l, " {} {} {} {}", self.seq, e.rises, e.high as u8, e.t);
        self.seq += 1;
        Some(l.finish())
    }

    /// The line saying `n` edge lines were lost to a full queue.
    pub fn lost_edges_line(&self, n: u32) -> Line {
        let mut l = Line::of('I');
        let _ = write!(l, " {n}%20trigger%20edge%20lines%20lost:%20queue%20full");
        l.finish()
    }

    /// One step of the loop at tick `now` with the trigger's `(rises, level)`: a sample when
    /// one is due, handed to `out`. A reading that fails costs a sequence number (a gap the
    /// collector counts) and gives an `LWCP I` line at the first failure of a run; another
    /// says how many were lost when readings resume.
    pub fn poll(&mut self, now: u64, trigger: (u32, bool), out: &mut dyn FnMut(&Line)) {
        if !self.running || now < self.next_sample {
            return;
        }
        let period = self.settings.period_us() as u64;
        self.next_sample += period;
        if self.next_sample <= now {
            // fell behind (USB stalled): skip, never burst
            self.next_sample = now + period;
        }
        let seq = self.seq;
        self.seq += 1;
        match self.sensor.read() {
            Err(f) => {
                self.faults = self.faults.saturating_add(1);
                if self.fault.replace(f).is_none() {
                    let mut l = Line::of('I');
                    let _ = write!(l, " sample%20{seq}%20lost:%20{}", f.text());
                    out(&l.finish());
                }
            }
            Ok(r) => {
                if self.fault.take().is_some() {
                    let mut l = Line::of('I');
                    let _ = write!(l, " readings%20resume:%20{}%20lost", self.faults);
                    self.faults = 0;
                    out(&l.finish());
                }
                let (rises, high) = trigger;
                let mut l = Line::of('P');
                let _ = write!(l, " {seq} {now} {rises} {} {} {}", high as u8, r.bus, r.shunt);
                out(&l.finish());
            }
        }
    }

    /// The settings it was made with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The sensor back.
    pub fn release(self) -> S {
        self.sensor
    }
}
