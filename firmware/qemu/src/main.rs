//! QEMU `lm3s6965evb` (TI Stellaris LM3S6965, Cortex-M3): the benchmark suites of
//! firmware/bench over UART0, timed with SysTick. Only the board glue lives here.
//!
//! Run: `qemu-system-arm -M lm3s6965evb -nographic -icount shift=0,align=off,sleep=off
//! -kernel lwc-board-qemu` (docs/board.md). With `-icount`, QEMU's virtual clock advances a
//! fixed 2^shift ns per instruction, so the SysTick counts — and the results — are
//! deterministic: they measure instructions, not the host's speed.
#![no_std]
#![no_main]

use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;
use cortex_m_rt::{entry, exception};
use lwc_board_bench::{Board, BoardInfo, Config, DracoFast, DracoRef, Grain128a, RcAeads, Trigger, Trivium};
use lwcbench_core::StreamCipher;

/// PL011 UART0 registers (LM3S6965 datasheet, "UART Register Map").
const UART0_DR: *mut u32 = 0x4000_C000 as *mut u32;
const UART0_FR: *const u32 = 0x4000_C018 as *const u32;
const FR_RXFE: u32 = 1 << 4;
const FR_TXFF: u32 = 1 << 5;

/// SysTick clock: QEMU's lm3s6965evb core clock after reset, 12.5 MHz (measured against the
/// -icount virtual clock by tests/test_qemu.py::test_systick_rate).
const SYSTICK_HZ: u32 = 12_500_000;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {
        cortex_m::asm::bkpt();
    }
}

static WRAPS: AtomicU32 = AtomicU32::new(0);

#[exception]
fn SysTick() {
    WRAPS.fetch_add(1, Ordering::Relaxed);
}

struct Qemu;

impl Board for Qemu {
    /// SysTick (24-bit, counting down from 0xFF_FFFF) extended to 64 bits by its wrap interrupt.
    fn ticks(&mut self) -> u64 {
        loop {
            let w = WRAPS.load(Ordering::Relaxed);
            let v = SYST::get_current();
            if WRAPS.load(Ordering::Relaxed) == w {
                return ((w as u64) << 24) | (0xFF_FFFF - v) as u64;
            }
        }
    }
    /// QEMU models no cycle counter (no DWT CYCCNT).
    fn cycles(&mut self) -> Option<u32> {
        None
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            // SAFETY: memory-mapped UART registers of this chip.
            unsafe {
                while UART0_FR.read_volatile() & FR_TXFF != 0 {}
                UART0_DR.write_volatile(b as u32);
            }
        }
    }
}

const INFO: BoardInfo = BoardInfo {
    board: "qemu-lm3s6965evb",
    mcu: "Cortex-M3 (QEMU TCG, -icount)",
    cpu_hz: SYSTICK_HZ,
    tick_hz: SYSTICK_HZ,
    timer: "SysTick (core clock) extended to 64 bits",
    cycles: "none",
    cycle_bits: 32,
    firmware: env!("CARGO_PKG_VERSION"),
    compiler: lwc_board_bench::build::COMPILER,
    profile: lwc_board_bench::build::PROFILE,
    opt: lwc_board_bench::build::OPT,
    target: lwc_board_bench::build::TARGET,
    commit: lwc_board_bench::build::COMMIT,
};

/// Few repetitions: the emulated run is a test of the path, not a measurement campaign. No
/// pin to drive, but the marker lines of the power trigger are printed, so the collector's
/// marker path is tested end to end (no idle wait: nothing draws power here).
const CONFIG: Config = Config {
    reps: 3,
    warmup: 1,
    min_sample_ticks: 2_000,
    seed: 1,
    sizes: lwc_board_bench::SIZES,
    aead_sizes: lwc_board_bench::AEAD_SIZES,
    trigger: Some(Trigger { pin: "markers-only", idle_ticks: 0 }),
};

fn fmt_calibration(buf: &mut [u8; 64], ticks: u64) -> &str {
    const P: &[u8] = b"calibration: 2000000 instructions = ";
    buf[..P.len()].copy_from_slice(P);
    let mut n = P.len();
    let mut digits = [0u8; 20];
    let (mut v, mut k) = (ticks, 0);
    loop {
        digits[k] = b'0' + (v % 10) as u8;
        k += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in (0..k).rev() {
        buf[n] = digits[i];
        n += 1;
    }
    buf[n..n + 6].copy_from_slice(b" ticks");
    core::str::from_utf8(&buf[..n + 6]).unwrap_or("calibration")
}

#[entry]
fn main() -> ! {
    // The entry function runs once, so the core peripherals are not taken yet.
    let mut cp = cortex_m::Peripherals::take().expect("core peripherals taken once");
    cp.SYST.set_clock_source(SystClkSource::Core);
    cp.SYST.set_reload(0xFF_FFFF);
    cp.SYST.clear_current();
    cp.SYST.enable_interrupt();
    cp.SYST.enable_counter();
    let mut b = Qemu;
    let mut t = Trivium::default();
    let mut g = Grain128a::default();
    let mut r = DracoRef::default();
    let mut f = DracoFast::default();
    // the AEADs of the emulated images, same adapters (firmware/bench `rc`)
    let mut aeads = RcAeads::default();
    // Calibration for the test: 1,000,000 iterations of a 2-instruction loop. Under
    // `-icount shift=0` (1 ns per instruction) that is 2 ms of virtual time, so the ticks it
    // takes × 500 is the SysTick rate in Hz.
    let t0 = b.ticks();
    // SAFETY: a register-only countdown loop.
    unsafe { core::arch::asm!("1:", "subs {0}, #1", "bne 1b", inout(reg) 1_000_000u32 => _, options(nomem, nostack)) };
    let cal = b.ticks() - t0;
    let mut msg = [0u8; 64];
    lwc_board_bench::info_line(&mut b, fmt_calibration(&mut msg, cal));
    loop {
        lwc_board_bench::info_line(&mut b, "ready: send any byte to start");
        let mut ciphers: [&mut dyn StreamCipher; 4] = [&mut r, &mut f, &mut t, &mut g];
        // Wait for a byte from the host (lwcbench collect sends "\n"), then run.
        // SAFETY: memory-mapped UART registers of this chip.
        unsafe {
            while UART0_FR.read_volatile() & FR_RXFE != 0 {}
            while UART0_FR.read_volatile() & FR_RXFE == 0 {
                let _ = UART0_DR.read_volatile();
            }
        }
        lwc_board_bench::run_suite(&mut b, &INFO, &CONFIG, &mut ciphers, &mut aeads.under());
    }
}
