//! The sensors, through their embedded-hal drivers (`ina219`, `ina226`), and the settings the
//! logger accepts. Register facts: TI INA219 datasheet SBOS448 (configuration register 00h,
//! bus 02h, shunt 01h), TI INA226 datasheet SBOS547 (the same addresses).
use embedded_hal::i2c::I2c;
use ina219::address::Address;
use ina219::calibration::UnCalibrated;
use ina219::configuration::{
    BusVoltageRange, Configuration, MeasuredSignals, OperatingMode, Reset, Resolution, ShuntVoltageRange,
};
use ina219::errors::{BusVoltageReadError, ShuntVoltageReadError};
use ina219::SyncIna219;

/// The current/power monitor chip on the I²C bus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SensorKind {
    /// TI INA219 (12-bit ADC, 4 mV bus LSB).
    Ina219,
    /// TI INA226 (16-bit ADC, 1.25 mV bus LSB).
    Ina226,
}

impl SensorKind {
    /// The name in the header line (`sensor=ina219`).
    pub fn name(self) -> &'static str {
        match self {
            SensorKind::Ina219 => "ina219",
            SensorKind::Ina226 => "ina226",
        }
    }
    /// Conversion times (µs per channel) and averaging counts the sensor has.
    fn tables(self) -> (&'static [u16], &'static [u16]) {
        match self {
            SensorKind::Ina219 => (&[84, 148, 276, 532], &[1, 2, 4, 8, 16, 32, 64, 128]),
            SensorKind::Ina226 => (&[140, 204, 332, 588, 1100, 2116, 4156, 8244], &[1, 4, 16, 64, 128, 256, 512, 1024]),
        }
    }
}

/// What the logger is told about its sensor and wiring; printed in the header line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The chip.
    pub sensor: SensorKind,
    /// 7-bit I²C address (0x40 on the usual breakouts; 0x40–0x4F by A0/A1).
    pub addr: u8,
    /// Shunt resistance, µΩ (1..=10⁹).
    pub shunt_uohm: u32,
    /// Shunt tolerance, ppm (at most 200 000).
    pub shunt_tol_ppm: u32,
    /// Conversion time of one channel, µs.
    pub conv_us: u16,
    /// Conversions averaged per reading.
    pub avg: u16,
    /// The trigger input's name (letters, digits, `_`, `-`; at most 24).
    pub pin: &'static str,
}

/// Why settings are refused (the firmware prints it as an `LWCP I` line and does not sample).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingsError {
    /// The I²C address is outside 0x40–0x4F.
    Address,
    /// The shunt resistance is outside 1 µΩ – 1 kΩ.
    Shunt,
    /// The shunt tolerance is above 20 %.
    Tolerance,
    /// The sensor has no such conversion time.
    ConversionTime,
    /// The sensor has no such averaging count.
    Averaging,
    /// INA219 averaging exists at 12 bits (532 µs) only.
    AveragingNeeds12Bit,
    /// The trigger pin's name is empty, longer than 24 bytes or has another character.
    PinName,
}

impl SettingsError {
    /// Percent-encoded, for an `LWCP I` line.
    pub fn text(self) -> &'static str {
        match self {
            SettingsError::Address => "i2c%20address%20not%200x40-0x4f",
            SettingsError::Shunt => "shunt_uohm%20not%201..1000000000",
            SettingsError::Tolerance => "shunt_tol_ppm%20above%20200000",
            SettingsError::ConversionTime => "invalid%20conv_us",
            SettingsError::Averaging => "invalid%20avg",
            SettingsError::AveragingNeeds12Bit => "ina219%20averaging%20needs%20conv_us=532",
            SettingsError::PinName => "invalid%20pin%20name",
        }
    }
}

impl Settings {
    /// The usual breakout: INA219 at 0x40, 0.1 Ω ±1 % shunt (R100), 12 bit (532 µs), no
    /// averaging; a sample every 1.064 ms.
    pub const fn ina219(pin: &'static str) -> Settings {
        Settings {
            sensor: SensorKind::Ina219,
            addr: 0x40,
            shunt_uohm: 100_000,
            shunt_tol_ppm: 10_000,
            conv_us: 532,
            avg: 1,
            pin,
        }
    }

    /// The ranges the collector accepts (crates/engine/src/collect/logger.rs, `parse_header`).
    pub fn check(&self) -> Result<(), SettingsError> {
        let (conv, avg) = self.sensor.tables();
        if !(0x40..=0x4F).contains(&self.addr) {
            return Err(SettingsError::Address);
        }
        if !(1..=1_000_000_000).contains(&self.shunt_uohm) {
            return Err(SettingsError::Shunt);
        }
        if self.shunt_tol_ppm > 200_000 {
            return Err(SettingsError::Tolerance);
        }
        if !conv.contains(&self.conv_us) {
            return Err(SettingsError::ConversionTime);
        }
        if !avg.contains(&self.avg) {
            return Err(SettingsError::Averaging);
        }
        if self.sensor == SensorKind::Ina219 && self.avg > 1 && self.conv_us != 532 {
            return Err(SettingsError::AveragingNeeds12Bit);
        }
        let pin_ok = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
        if self.pin.is_empty() || self.pin.len() > 24 || !self.pin.bytes().all(pin_ok) {
            return Err(SettingsError::PinName);
        }
        Ok(())
    }

    /// µs between two samples: shunt and bus are converted in turn, each averaged `avg` times
    /// (INA219 12 bit: 2 × 532 µs = 1064 µs, ≈ 940 Hz).
    pub fn period_us(&self) -> u32 {
        2 * self.conv_us as u32 * self.avg as u32
    }
}

/// One reading as the `LWCP P` line carries it: bus-voltage count (INA219: bits 15..3
/// right-aligned, 4 mV; INA226: 1.25 mV) and the signed shunt-voltage register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raw {
    /// Bus-voltage count.
    pub bus: u16,
    /// Shunt-voltage register (INA219: 10 µV, INA226: 2.5 µV per count).
    pub shunt: i16,
}

/// Why a reading is not printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The bus transaction failed (no ACK, arbitration, a stuck line).
    I2c,
    /// INA219 math overflow flag (OVF, bus register bit 0): the current was out of range.
    Overflow,
    /// A register value outside the configured range.
    Range,
}

impl Fault {
    /// Percent-encoded, for an `LWCP I` line.
    pub fn text(self) -> &'static str {
        match self {
            Fault::I2c => "i2c%20error",
            Fault::Overflow => "ina219%20overflow%20(OVF)",
            Fault::Range => "register%20out%20of%20range",
        }
    }
}

/// A sensor the logger can configure and read.
pub trait Sensor {
    /// Write the conversion time, averaging and ranges of `s` (continuous shunt + bus).
    fn configure(&mut self, s: &Settings) -> Result<(), Fault>;
    /// The latest bus and shunt registers.
    fn read(&mut self) -> Result<Raw, Fault>;
}

/// An INA219 (the `ina219` crate, blocking).
pub struct Ina219<I2C: I2c> {
    dev: SyncIna219<I2C, UnCalibrated>,
}

impl<I2C: I2c> Ina219<I2C> {
    /// No bus traffic until [`Sensor::configure`]. `None` for an address the chip cannot have.
    pub fn new(i2c: I2C, addr: u8) -> Option<Self> {
        let a = Address::from_byte(addr).ok()?;
        Some(Ina219 { dev: SyncIna219::new_unchecked(i2c, a, UnCalibrated) })
    }
    /// The bus back.
    pub fn release(self) -> I2C {
        self.dev.destroy()
    }
}

/// The INA219's ADC field for a conversion time and averaging (SBOS448, table "ADC settings").
fn ina219_resolution(conv_us: u16, avg: u16) -> Option<Resolution> {
    Some(match (conv_us, avg) {
        (84, 1) => Resolution::Res9Bit,
        (148, 1) => Resolution::Res10Bit,
        (276, 1) => Resolution::Res11Bit,
        (532, 1) => Resolution::Res12Bit,
        (532, 2) => Resolution::Avg2,
        (532, 4) => Resolution::Avg4,
        (532, 8) => Resolution::Avg8,
        (532, 16) => Resolution::Avg16,
        (532, 32) => Resolution::Avg32,
        (532, 64) => Resolution::Avg64,
        (532, 128) => Resolution::Avg128,
        _ => return None,
    })
}

impl<I2C: I2c> Sensor for Ina219<I2C> {
    fn configure(&mut self, s: &Settings) -> Result<(), Fault> {
        let res = ina219_resolution(s.conv_us, s.avg).ok_or(Fault::Range)?;
        // 32 V bus range, ±320 mV shunt range (PGA ÷8): nothing the board draws is clipped.
        let conf = Configuration {
            reset: Reset::Run,
            bus_voltage_range: BusVoltageRange::Fsr32v,
            shunt_voltage_range: ShuntVoltageRange::Fsr320mv,
            bus_resolution: res,
            shunt_resolution: res,
            operating_mode: OperatingMode::Continous(MeasuredSignals::ShutAndBusVoltage),
        };
        self.dev.set_configuration(conf).map_err(|_| Fault::I2c)
    }

    fn read(&mut self) -> Result<Raw, Fault> {
        let bus = self.dev.bus_voltage().map_err(|e| match e {
            BusVoltageReadError::I2cError(_) => Fault::I2c,
            BusVoltageReadError::BusVoltageOutOfRange { .. } => Fault::Range,
        })?;
        if bus.has_math_overflowed() {
            return Err(Fault::Overflow);
        }
        let shunt = self.dev.shunt_voltage().map_err(|e| match e {
            ShuntVoltageReadError::I2cError(_) => Fault::I2c,
            ShuntVoltageReadError::ShuntVoltageOutOfRange { .. } => Fault::Range,
        })?;
        Ok(Raw { bus: bus.voltage_4mv(), shunt: shunt.shunt_voltage_10uv() })
    }
}

/// An INA226 (the `ina226` crate, blocking).
pub struct Ina226<I2C: I2c> {
    dev: ina226::INA226<I2C>,
}

impl<I2C: I2c> Ina226<I2C> {
    /// No bus traffic until [`Sensor::configure`]; `addr` is the 7-bit I²C address.
    pub fn new(i2c: I2C, addr: u8) -> Self {
        Ina226 { dev: ina226::INA226::new(i2c, addr) }
    }
    /// The bus back.
    pub fn release(self) -> I2C {
        self.dev.destroy()
    }
}

/// The INA226's AVG, VBUSCT and VSHCT fields (SBOS547, configuration register).
fn ina226_config(conv_us: u16, avg: u16) -> Option<ina226::Config> {
    use ina226::{AVG, VBUSCT, VSHCT};
    let (bus, shunt) = match conv_us {
        140 => (VBUSCT::_140us, VSHCT::_140us),
        204 => (VBUSCT::_204us, VSHCT::_204us),
        332 => (VBUSCT::_332us, VSHCT::_332us),
        588 => (VBUSCT::_588us, VSHCT::_588us),
        1100 => (VBUSCT::_1100us, VSHCT::_1100us),
        2116 => (VBUSCT::_2116us, VSHCT::_2116us),
        4156 => (VBUSCT::_4156us, VSHCT::_4156us),
        8244 => (VBUSCT::_8244us, VSHCT::_8244us),
        _ => return None,
    };
    let avg = match avg {
        1 => AVG::_1,
        4 => AVG::_4,
        16 => AVG::_16,
        64 => AVG::_64,
        128 => AVG::_128,
        256 => AVG::_256,
        512 => AVG::_512,
        1024 => AVG::_1024,
        _ => return None,
    };
    Some(ina226::Config { avg, vbusct: bus, vshct: shunt, mode: ina226::MODE::ShuntBusVoltageContinuous })
}

impl<I2C: I2c> Sensor for Ina226<I2C> {
    fn configure(&mut self, s: &Settings) -> Result<(), Fault> {
        let c = ina226_config(s.conv_us, s.avg).ok_or(Fault::Range)?;
        self.dev.set_configuration(&c).map_err(|_| Fault::I2c)
    }

    fn read(&mut self) -> Result<Raw, Fault> {
        let bus = self.dev.bus_voltage_raw().map_err(|_| Fault::I2c)?;
        let shunt = self.dev.shunt_voltage_raw().map_err(|_| Fault::I2c)?;
        // Bit 15 of the bus register reads 0 (SBOS547); a 1 is a bus fault, not a voltage.
        if bus & 0x8000 != 0 {
            return Err(Fault::Range);
        }
        Ok(Raw { bus, shunt })
    }
}
