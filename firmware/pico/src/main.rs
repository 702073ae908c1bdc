//! Raspberry Pi Pico (RP2040, Cortex-M0+ at 125 MHz): the benchmark suites of firmware/bench
//! over USB CDC serial (/dev/ttyACM0 on Linux). Only the board glue lives here.
//!
//! Time: the RP2040 TIMER (64-bit, 1 MHz from the 12 MHz crystal via the watchdog tick).
//! Cycles: SysTick clocked from the core (24 bits, wraps every 134 ms at 125 MHz; the bench
//! drops the cycle figure of a sample that could have wrapped). Starts a run on any byte
//! received (`lwcbench collect --port` sends one), so nothing is lost before the host opens
//! the port. Build, flash and collect: docs/board.md.
#![no_std]
#![no_main]

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;
use embedded_hal::digital::OutputPin;
use lwc_board_bench::{Board, BoardInfo, Config, DracoFast, DracoRef, Grain128a, RcAeads, Trigger, Trivium};
use lwcbench_core::StreamCipher;
use rp_pico::entry;
use rp_pico::hal::gpio::{DynBankId, DynPinId, DynPullType, FunctionSioOutput, Pin};
use rp_pico::hal::{self, pac, Clock};
use usb_device::prelude::*;
use usbd_serial::SerialPort;

mod glue;

/// GPIO the power logger's trigger input is wired to (docs/power.md); change it here.
const TRIGGER_GPIO: u8 = 15;
/// Its name in the header.
const TRIGGER_NAME: &str = "GP15";

struct Pico<'a> {
    timer: hal::Timer,
    trigger: Pin<DynPinId, FunctionSioOutput, DynPullType>,
    usb: UsbDevice<'a, hal::usb::UsbBus>,
    serial: SerialPort<'a, hal::usb::UsbBus>,
}

impl Pico<'_> {
    fn poll(&mut self) {
        self.usb.poll(&mut [&mut self.serial]);
    }
    /// Block until the host sends a byte.
    fn wait_for_byte(&mut self) {
        let mut buf = [0u8; 64];
        loop {
            self.poll();
            if let Ok(n) = self.serial.read(&mut buf) {
                if n > 0 {
                    return;
                }
            }
        }
    }
}

impl Board for Pico<'_> {
    fn ticks(&mut self) -> u64 {
        self.timer.get_counter().ticks()
    }
    fn cycles(&mut self) -> Option<u32> {
        Some(0xFF_FFFF - SYST::get_current())
    }
    fn write(&mut self, mut bytes: &[u8]) {
        // USB is serviced only here, between samples, never inside a timed region.
        while !bytes.is_empty() {
            self.poll();
            match self.serial.write(bytes) {
                Ok(n) => bytes = &bytes[n..],
                Err(UsbError::WouldBlock) => {}
                Err(_) => return,
            }
        }
        let _ = self.serial.flush();
    }
    fn trigger(&mut self, high: bool) {
        // SIO output: infallible.
        let _ = if high { self.trigger.set_high() } else { self.trigger.set_low() };
    }
}

/// 2 ms idle before each batch: two INA219 12-bit samples of the baseline (docs/power.md).
const CONFIG: Config = Config {
    reps: 30,
    warmup: 3,
    min_sample_ticks: 1_000,
    seed: 1,
    sizes: lwc_board_bench::SIZES,
    aead_sizes: lwc_board_bench::AEAD_SIZES,
    trigger: Some(Trigger { pin: TRIGGER_NAME, idle_ticks: 2_000 }),
};

#[entry]
fn main() -> ! {
    // The entry function runs once, so no peripheral is taken yet.
    let mut pac = pac::Peripherals::take().expect("peripherals taken once");
    let mut core = pac::CorePeripherals::take().expect("core peripherals taken once");
    let mut watchdog = hal::Watchdog::new(pac.WATCHDOG);
    let clocks = glue::clocks(pac.XOSC, pac.CLOCKS, pac.PLL_SYS, pac.PLL_USB, &mut pac.RESETS, &mut watchdog);
    let cpu_hz = clocks.system_clock.freq().to_Hz();
    let timer = hal::Timer::new(pac.TIMER, &mut pac.RESETS, &clocks);
    core.SYST.set_clock_source(SystClkSource::Core);
    core.SYST.set_reload(0xFF_FFFF);
    core.SYST.clear_current();
    core.SYST.enable_counter();

    let bus = glue::usb_bus(pac.USBCTRL_REGS, pac.USBCTRL_DPRAM, clocks.usb_clock, &mut pac.RESETS);
    let (usb, serial) = glue::cdc(&bus, "lwcbench board benchmark", "1");
    // Releases IO_BANK0 and PADS_BANK0 from reset; the trigger pin is then taken by number.
    let sio = hal::Sio::new(pac.SIO);
    let _pins = hal::gpio::Pins::new(pac.IO_BANK0, pac.PADS_BANK0, sio.gpio_bank0, &mut pac.RESETS);
    // SAFETY: no other handle to this pin is used (the typed `_pins` are never touched).
    let trigger = unsafe { hal::gpio::new_pin(DynPinId { bank: DynBankId::Bank0, num: TRIGGER_GPIO }) }
        .try_into_function::<FunctionSioOutput>()
        .ok()
        .expect("every bank-0 GPIO can be a SIO output");
    let mut b = Pico { timer, trigger, usb, serial };
    b.trigger(false);
    let info = BoardInfo {
        board: "rpi-pico",
        mcu: "RP2040 Cortex-M0+",
        cpu_hz,
        tick_hz: 1_000_000,
        timer: "RP2040 TIMER (1 MHz, 64-bit)",
        cycles: "SysTick (core clock, 24-bit)",
        cycle_bits: 24,
        firmware: env!("CARGO_PKG_VERSION"),
        compiler: lwc_board_bench::build::COMPILER,
        profile: lwc_board_bench::build::PROFILE,
        opt: lwc_board_bench::build::OPT,
        target: lwc_board_bench::build::TARGET,
        commit: lwc_board_bench::build::COMMIT,
    };
    let mut t = Trivium::default();
    let mut g = Grain128a::default();
    let mut r = DracoRef::default();
    let mut f = DracoFast::default();
    // the AEADs of the emulated images, same adapters (firmware/bench `rc`)
    let mut aeads = RcAeads::default();
    loop {
        b.wait_for_byte();
        lwc_board_bench::info_line(&mut b, "starting");
        let mut ciphers: [&mut dyn StreamCipher; 4] = [&mut r, &mut f, &mut t, &mut g];
        lwc_board_bench::run_suite(&mut b, &info, &CONFIG, &mut ciphers, &mut aeads.under());
        lwc_board_bench::info_line(&mut b, "ready: send any byte to run again");
    }
}
