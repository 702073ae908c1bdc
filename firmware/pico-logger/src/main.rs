//! The power logger on a Raspberry Pi Pico (RP2040): an INA219 or INA226 on I2C0 (GP4 = SDA,
//! GP5 = SCL, 400 kHz), the board's trigger on GP16 (an input with pull-down, both edges by
//! interrupt), `LWCP` lines over USB CDC serial (/dev/ttyACM*). The logic is
//! firmware/power-logger; wiring, settings and sample rate: docs/power.md.
//!
//! A run starts when the host opens the port (DTR set): the logger configures the sensor and
//! prints its header, so the collector always gets one; lines are dropped while no host listens.
#![no_std]
#![no_main]

use core::cell::RefCell;

use critical_section::Mutex;
use embedded_hal::digital::InputPin;
use fugit::RateExtU32;
use lwc_power_logger::{Edge, Ina219, Ina226, Line, Logger, Sensor, SensorKind, Settings, Trigger};
use rp_pico::entry;
use rp_pico::hal::gpio::{DynBankId, DynPinId, FunctionI2C, FunctionSioInput, Interrupt, Pin, PullDown, PullUp};
use rp_pico::hal::pac::interrupt;
use rp_pico::hal::{self, pac};
use usb_device::prelude::*;
use usbd_serial::SerialPort;

#[path = "../../pico/src/glue.rs"]
mod glue;

/// The sensor, its wiring and its conversion settings (docs/power.md); change them here.
/// INA219, 12 bit, no averaging: one (bus, shunt) pair every 2 × 532 µs = 1.064 ms (≈ 940 Hz).
/// For an INA226 or another shunt: `Settings { sensor: SensorKind::Ina226, conv_us: 588, ..Settings::ina219("GP16") }`.
const SETTINGS: Settings = Settings::ina219("GP16");
// An address the sensors cannot have fails the build, not the board at run time.
const _: () = assert!(SETTINGS.addr >= 0x40 && SETTINGS.addr <= 0x4F, "I2C address not 0x40-0x4F");
/// GPIO the board's trigger output is wired to (not 4 or 5: those are the I²C pins).
const TRIGGER_GPIO: u8 = 16;
const _: () = assert!(TRIGGER_GPIO != 4 && TRIGGER_GPIO != 5 && TRIGGER_GPIO < 30);

type TriggerPin = Pin<DynPinId, FunctionSioInput, PullDown>;
/// Edge counts and queue, written by the interrupt.
static EDGES: Mutex<RefCell<Trigger<32>>> = Mutex::new(RefCell::new(Trigger::new()));
/// What the interrupt needs: the pin (to clear its flags) and the clock.
static IRQ: Mutex<RefCell<Option<(TriggerPin, hal::Timer)>>> = Mutex::new(RefCell::new(None));

#[interrupt]
fn IO_IRQ_BANK0() {
    critical_section::with(|cs| {
        let mut irq = IRQ.borrow_ref_mut(cs);
        let Some((pin, timer)) = irq.as_mut() else { return };
        let t = timer.get_counter().ticks();
        let (rose, fell) = (pin.interrupt_status(Interrupt::EdgeHigh), pin.interrupt_status(Interrupt::EdgeLow));
        pin.clear_interrupt(Interrupt::EdgeHigh);
        pin.clear_interrupt(Interrupt::EdgeLow);
        let high = pin.is_high().unwrap_or(false);
        let mut edges = EDGES.borrow_ref_mut(cs);
        if rose && fell {
            // a pulse shorter than the interrupt's latency: both edges, ending at the level now
            edges.edge(!high, t);
            edges.edge(high, t);
        } else if rose || fell {
            edges.edge(rose, t);
        }
    });
}

/// Send a line; dropped when no host has the port open (never blocks without one).
fn send(usb: &mut UsbDevice<hal::usb::UsbBus>, serial: &mut SerialPort<hal::usb::UsbBus>, line: &Line) {
    let mut rest = line.as_bytes();
    while !rest.is_empty() && serial.dtr() {
        usb.poll(&mut [serial]);
        if let Ok(n) = serial.write(rest) {
            rest = &rest[n..];
        }
    }
}

/// The loop, for either sensor type.
fn run<S: Sensor>(
    mut logger: Logger<S>,
    timer: hal::Timer,
    mut usb: UsbDevice<hal::usb::UsbBus>,
    mut serial: SerialPort<hal::usb::UsbBus>,
) -> ! {
    let mut connected = false;
    let mut batch = [Edge::default(); 32];
    loop {
        usb.poll(&mut [&mut serial]);
        let mut sink = [0u8; 64];
        let _ = serial.read(&mut sink); // the host's bytes (the collector's kick) mean nothing here
        if serial.dtr() != connected {
            connected = serial.dtr();
            if connected {
                critical_section::with(|cs| EDGES.borrow_ref_mut(cs).restart());
                let header = logger.begin(timer.get_counter().ticks());
                send(&mut usb, &mut serial, &header);
            }
        }
        if !connected {
            continue;
        }
        // The clock is read with the queue drained, so no edge older than `now` is left behind.
        let (n, lost, state, now) = critical_section::with(|cs| {
            let mut edges = EDGES.borrow_ref_mut(cs);
            let mut n = 0;
            while let Some(e) = edges.pop() {
                batch[n] = e;
                n += 1;
            }
            (n, edges.take_lost(), edges.state(), timer.get_counter().ticks())
        });
        for e in &batch[..n] {
            if let Some(l) = logger.edge_line(*e) {
                send(&mut usb, &mut serial, &l);
            }
        }
        if lost > 0 {
            let l = logger.lost_edges_line(lost);
            send(&mut usb, &mut serial, &l);
        }
        logger.poll(now, state, &mut |l| send(&mut usb, &mut serial, l));
    }
}

#[entry]
fn main() -> ! {
    // The entry function runs once, so no peripheral is taken yet.
    let mut pac = pac::Peripherals::take().expect("peripherals taken once");
    let mut watchdog = hal::Watchdog::new(pac.WATCHDOG);
    let clocks = glue::clocks(pac.XOSC, pac.CLOCKS, pac.PLL_SYS, pac.PLL_USB, &mut pac.RESETS, &mut watchdog);
    let timer = hal::Timer::new(pac.TIMER, &mut pac.RESETS, &clocks);
    let sio = hal::Sio::new(pac.SIO);
    let pins = rp_pico::Pins::new(pac.IO_BANK0, pac.PADS_BANK0, sio.gpio_bank0, &mut pac.RESETS);
    let sda: Pin<_, FunctionI2C, PullUp> = pins.gpio4.reconfigure();
    let scl: Pin<_, FunctionI2C, PullUp> = pins.gpio5.reconfigure();
    let i2c = hal::I2C::i2c0(pac.I2C0, sda, scl, 400.kHz(), &mut pac.RESETS, &clocks.system_clock);
    // SAFETY: the typed handle of this pin (in `pins`) is never used; the const check above
    // keeps it off the I²C pins.
    let trigger = unsafe { hal::gpio::new_pin(DynPinId { bank: DynBankId::Bank0, num: TRIGGER_GPIO }) }
        .try_into_function::<FunctionSioInput>()
        .ok()
        .expect("every bank-0 GPIO can be a SIO input")
        .into_pull_type::<PullDown>();
    trigger.set_interrupt_enabled(Interrupt::EdgeHigh, true);
    trigger.set_interrupt_enabled(Interrupt::EdgeLow, true);
    critical_section::with(|cs| IRQ.borrow(cs).replace(Some((trigger, timer))));
    // SAFETY: the handler only touches what is behind the critical-section mutexes.
    unsafe { pac::NVIC::unmask(pac::Interrupt::IO_IRQ_BANK0) };

    let bus = glue::usb_bus(pac.USBCTRL_REGS, pac.USBCTRL_DPRAM, clocks.usb_clock, &mut pac.RESETS);
    let (usb, serial) = glue::cdc(&bus, "lwcbench power logger", "2");
    match SETTINGS.sensor {
        SensorKind::Ina219 => {
            let s = Ina219::new(i2c, SETTINGS.addr).expect("address checked at compile time");
            run(Logger::new(s, SETTINGS), timer, usb, serial)
        }
        SensorKind::Ina226 => run(Logger::new(Ina226::new(i2c, SETTINGS.addr), SETTINGS), timer, usb, serial),
    }
}
