//! Raspberry Pi Pico glue shared by the benchmark firmware (this crate) and the power logger
//! (firmware/pico-logger, which includes this file): panic, clocks, USB CDC serial.
use rp_pico::hal::clocks::ClocksManager;
use rp_pico::hal::{self, pac};
use usb_device::class_prelude::UsbBusAllocator;
use usb_device::prelude::*;
use usbd_serial::SerialPort;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {
        cortex_m::asm::bkpt();
    }
}

/// The Pico's clocks from its 12 MHz crystal: 125 MHz system, 48 MHz USB.
pub fn clocks(
    xosc: pac::XOSC,
    clocks: pac::CLOCKS,
    pll_sys: pac::PLL_SYS,
    pll_usb: pac::PLL_USB,
    resets: &mut pac::RESETS,
    watchdog: &mut hal::Watchdog,
) -> ClocksManager {
    // Fails only when the crystal or a PLL does not lock: broken hardware, nothing to run on.
    hal::clocks::init_clocks_and_plls(rp_pico::XOSC_CRYSTAL_FREQ, xosc, clocks, pll_sys, pll_usb, resets, watchdog)
        .expect("clocks and PLLs locked")
}

/// The USB controller as a bus for the device stack.
pub fn usb_bus(
    regs: pac::USBCTRL_REGS,
    dpram: pac::USBCTRL_DPRAM,
    clock: hal::clocks::UsbClock,
    resets: &mut pac::RESETS,
) -> UsbBusAllocator<hal::usb::UsbBus> {
    UsbBusAllocator::new(hal::usb::UsbBus::new(regs, dpram, clock, true, resets))
}

/// A CDC-ACM serial port (/dev/ttyACM* on Linux) with the pid.codes test VID/PID for CDC-ACM
/// class devices (16c0:27dd); `product` and `serial_number` tell the boards apart.
pub fn cdc<'a>(
    bus: &'a UsbBusAllocator<hal::usb::UsbBus>,
    product: &'static str,
    serial_number: &'static str,
) -> (UsbDevice<'a, hal::usb::UsbBus>, SerialPort<'a, hal::usb::UsbBus>) {
    let serial = SerialPort::new(bus);
    let usb = UsbDeviceBuilder::new(bus, UsbVidPid(0x16c0, 0x27dd))
        .strings(&[StringDescriptors::default().manufacturer("lwcbench").product(product).serial_number(serial_number)])
        .expect("one language is within the 16 usb-device allows")
        .device_class(usbd_serial::USB_CLASS_CDC)
        .build();
    (usb, serial)
}
