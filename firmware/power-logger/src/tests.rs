//! Host tests. Expected register bytes come from the datasheets' register maps (TI INA219
//! SBOS448: configuration 00h, shunt 01h, bus 02h, power-on configuration 399Fh; TI INA226
//! SBOS547: the same addresses, power-on configuration 4127h); expected CRCs were computed
//! independently with Python's `zlib.crc32` over each line's body.
use embedded_hal::i2c::ErrorKind;
use embedded_hal_mock::eh1::i2c::{Mock, Transaction as T};

use super::*;

const A: u8 = 0x40;

fn ina219_settings() -> Settings {
    let s = Settings::ina219("GP16");
    assert_eq!((s.addr, s.shunt_uohm, s.shunt_tol_ppm, s.conv_us, s.avg), (A, 100_000, 10_000, 532, 1));
    s
}

/// The INA219's 12-bit power-on configuration 399Fh (SBOS448): BRNG 32 V, PG ÷8, BADC = SADC
/// = 0011, mode 111.
fn configure_12bit() -> T {
    T::write(A, vec![0x00, 0x39, 0x9F])
}

/// One INA219 reading: bus register (02h), then shunt register (01h), each a write of the
/// pointer and a 2-byte read.
fn ina219_reading(bus: [u8; 2], shunt: [u8; 2]) -> [T; 2] {
    [T::write_read(A, vec![0x02], bus.to_vec()), T::write_read(A, vec![0x01], shunt.to_vec())]
}

fn text(l: &Line) -> String {
    String::from_utf8(l.as_bytes().to_vec()).unwrap()
}

fn polled<S: Sensor>(lg: &mut Logger<S>, now: u64, trig: (u32, bool)) -> Vec<String> {
    let mut v = Vec::new();
    lg.poll(now, trig, &mut |l| v.push(text(l)));
    v
}

#[test]
fn crc_is_zlibs() {
    // zlib.crc32(b"123456789") = 0xcbf43926, the CRC-32 check value; b"" = 0
    assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    assert_eq!(crc32(b""), 0);
}

#[test]
fn ina219_run_gives_the_protocols_lines() {
    let mut i2c = Mock::new(
        &[
            vec![configure_12bit()],
            // bus 5.000 V = 1250 × 4 mV: 1250 << 3 = 2710h, CNVR (bit 1) set; shunt 900 × 10 µV
            ina219_reading([0x27, 0x12], [0x03, 0x84]).to_vec(),
            // shunt −5 counts, two's complement FFFBh
            ina219_reading([0x27, 0x12], [0xFF, 0xFB]).to_vec(),
            // a bus error: no ACK
            vec![T::write_read(A, vec![0x02], vec![0x00, 0x00]).with_error(ErrorKind::Other)],
            ina219_reading([0x27, 0x12], [0x03, 0x84]).to_vec(),
        ]
        .concat(),
    );
    let mut lg = Logger::new(Ina219::new(i2c.clone(), A).unwrap(), ina219_settings());
    let mut trig = Trigger::<4>::new();
    assert_eq!(
        text(&lg.begin(0)),
        "LWCP H 1 sensor=ina219 shunt_uohm=100000 shunt_tol_ppm=10000 tick_hz=1000000 conv_us=532 avg=1 pin=GP16 period_us=1064 firmware=lwc-power-logger *2b1ae0ac\r\n"
    );
    assert!(polled(&mut lg, 1063, trig.state()).is_empty(), "no sample before one period");
    assert_eq!(polled(&mut lg, 1064, trig.state()), ["LWCP P 0 1064 0 0 1250 900 *2fc5513e\r\n"]);
    trig.edge(true, 1500);
    let e = trig.pop().unwrap();
    assert_eq!(text(&lg.edge_line(e).unwrap()), "LWCP T 1 1 1 1500 *dc56f7f7\r\n");
    assert_eq!(polled(&mut lg, 2128, trig.state()), ["LWCP P 2 2128 1 1 1250 -5 *3b87130a\r\n"]);
    // the I²C error: an I line and a gap in seq, no panic
    assert_eq!(polled(&mut lg, 3192, trig.state()), ["LWCP I sample%203%20lost:%20i2c%20error *f2cc245f\r\n"]);
    trig.edge(false, 4000);
    assert_eq!(
        polled(&mut lg, 4256, trig.state()),
        ["LWCP I readings%20resume:%201%20lost *7851cba6\r\n", "LWCP P 4 4256 1 0 1250 900 *de157788\r\n"]
    );
    drop(lg.release().release());
    i2c.done();
}

#[test]
fn ina219_register_for_each_resolution() {
    // SBOS448 configuration register: bit 13 BRNG, 12–11 PG, 10–7 BADC, 6–3 SADC, 2–0 MODE
    for (conv, avg, want) in [
        (84u16, 1u16, [0x38u8, 0x07u8]), // 9 bit: BADC = SADC = 0000 → 0011 1000 0000 0111
        (532, 1, [0x39, 0x9F]),          // 12 bit: 0011
        (532, 128, [0x3F, 0xFF]),        // 128 samples: 1111
        (532, 8, [0x3D, 0xDF]),          // 8 samples: 1011 → 0011 1101 1101 1111
    ] {
        let mut i2c = Mock::new(&[T::write(A, vec![0x00, want[0], want[1]])]);
        let mut lg =
            Logger::new(Ina219::new(i2c.clone(), A).unwrap(), Settings { conv_us: conv, avg, ..ina219_settings() });
        assert!(text(&lg.begin(0)).contains(&format!("period_us={} ", 2 * conv as u32 * avg as u32)));
        i2c.done();
    }
}

#[test]
fn ina219_overflow_is_not_a_sample() {
    let mut i2c = Mock::new(&[
        configure_12bit(),
        // OVF (bit 0) set: the shunt register is not read
        T::write_read(A, vec![0x02], vec![0x27, 0x13]),
    ]);
    let mut lg = Logger::new(Ina219::new(i2c.clone(), A).unwrap(), ina219_settings());
    lg.begin(0);
    assert_eq!(
        polled(&mut lg, 1064, (0, false)),
        ["LWCP I sample%200%20lost:%20ina219%20overflow%20(OVF) *768975c7\r\n"]
    );
    i2c.done();
}

#[test]
fn ina226_writes_its_configuration_and_reads_raw() {
    let s = Settings {
        sensor: SensorKind::Ina226,
        shunt_uohm: 2_000,
        shunt_tol_ppm: 1_000,
        conv_us: 588,
        avg: 16,
        ..ina219_settings()
    };
    let mut i2c = Mock::new(&[
        // bit 14 reads 1; AVG 010 (16) bits 11–9, VBUSCT 011 (588 µs) 8–6, VSHCT 011 5–3, mode 111: 44DFh
        T::write(A, vec![0x00, 0x44, 0xDF]),
        // bus 4000 × 1.25 mV = 5 V (0FA0h), shunt −1200 × 2.5 µV (FB50h); register pointer, then read
        T::write(A, vec![0x02]),
        T::read(A, vec![0x0F, 0xA0]),
        T::write(A, vec![0x01]),
        T::read(A, vec![0xFB, 0x50]),
    ]);
    let mut lg = Logger::new(Ina226::new(i2c.clone(), A), s);
    assert_eq!(
        text(&lg.begin(0)),
        "LWCP H 1 sensor=ina226 shunt_uohm=2000 shunt_tol_ppm=1000 tick_hz=1000000 conv_us=588 avg=16 pin=GP16 period_us=18816 firmware=lwc-power-logger *54cee716\r\n"
    );
    assert_eq!(polled(&mut lg, 18_816, (0, false)), ["LWCP P 0 18816 0 0 4000 -1200 *c70bf51b\r\n"]);
    i2c.done();
}

#[test]
fn ina226_power_on_default_is_4127h() {
    let s = Settings { sensor: SensorKind::Ina226, conv_us: 1100, avg: 1, ..ina219_settings() };
    let mut i2c = Mock::new(&[T::write(A, vec![0x00, 0x41, 0x27])]);
    Logger::new(Ina226::new(i2c.clone(), A), s).begin(0);
    i2c.done();
}

#[test]
fn bad_settings_touch_no_bus_and_never_sample() {
    let mut i2c = Mock::new(&[]);
    for (s, want) in [
        (Settings { avg: 3, ..ina219_settings() }, "LWCP I invalid%20avg *741151f3\r\n"),
        (Settings { conv_us: 84, avg: 2, ..ina219_settings() }, ""),
        (Settings { conv_us: 532, sensor: SensorKind::Ina226, ..ina219_settings() }, ""),
        (Settings { shunt_uohm: 0, ..ina219_settings() }, ""),
        (Settings { shunt_tol_ppm: 200_001, ..ina219_settings() }, ""),
        (Settings { addr: 0x3F, ..ina219_settings() }, ""),
        (Settings { pin: "GP 16", ..ina219_settings() }, ""),
    ] {
        let mut lg = Logger::new(Ina219::new(i2c.clone(), 0x40).unwrap(), s);
        let l = text(&lg.begin(0));
        assert!(l.starts_with("LWCP I "), "{s:?}: {l}");
        if !want.is_empty() {
            assert_eq!(l, want);
        }
        assert!(polled(&mut lg, 1_000_000, (0, false)).is_empty());
        assert!(lg.edge_line(Edge { rises: 1, high: true, t: 5 }).is_none());
    }
    i2c.done();
}

#[test]
fn a_silent_sensor_gives_an_info_line() {
    let mut i2c = Mock::new(&[configure_12bit().with_error(ErrorKind::Other)]);
    let mut lg = Logger::new(Ina219::new(i2c.clone(), A).unwrap(), ina219_settings());
    assert!(text(&lg.begin(0)).starts_with("LWCP I sensor%20not%20answering"));
    assert!(polled(&mut lg, 5_000, (0, false)).is_empty());
    i2c.done();
}

#[test]
fn a_late_poll_skips_instead_of_bursting() {
    let mut i2c = Mock::new(
        &[
            vec![configure_12bit()],
            ina219_reading([0x27, 0x12], [0x03, 0x84]).to_vec(),
            ina219_reading([0x27, 0x12], [0x03, 0x84]).to_vec(),
        ]
        .concat(),
    );
    let mut lg = Logger::new(Ina219::new(i2c.clone(), A).unwrap(), ina219_settings());
    lg.begin(0);
    assert_eq!(polled(&mut lg, 10_000, (0, false)).len(), 1);
    // next due 10000 + 1064, not 2128
    assert!(polled(&mut lg, 11_063, (0, false)).is_empty());
    assert_eq!(
        polled(&mut lg, 11_064, (0, false)),
        ["LWCP P 1 11064 0 0 1250 900 *".to_string()
            + &format!("{:08x}", crc32(b"LWCP P 1 11064 0 0 1250 900"))
            + "\r\n"]
    );
    i2c.done();
}

#[test]
fn trigger_counts_edges_and_windows() {
    let mut t = Trigger::<2>::new();
    assert_eq!(Window::of(t.state().0, t.state().1), Window::BeforeFirst);
    t.edge(false, 1); // no change from the initial low: not an edge
    t.edge(true, 10);
    t.edge(true, 11); // a glitch seen as two highs
    assert_eq!(t.state(), (1, true));
    assert_eq!(Window::of(1, true), Window::In(0));
    t.edge(false, 20);
    assert_eq!(Window::of(1, false), Window::IdleAfter(0));
    t.edge(true, 30); // the queue (2) is full: the line is lost, the count is not
    assert_eq!(t.state(), (2, true));
    assert_eq!(Window::of(2, true), Window::In(1));
    assert_eq!(t.take_lost(), 1);
    assert_eq!(t.take_lost(), 0);
    assert_eq!(t.pop(), Some(Edge { rises: 1, high: true, t: 10 }));
    assert_eq!(t.pop(), Some(Edge { rises: 1, high: false, t: 20 }));
    assert_eq!(t.pop(), None);
    t.edge(false, 40);
    assert_eq!(t.pop(), Some(Edge { rises: 2, high: false, t: 40 }));
    assert_eq!(Window::of(2, false), Window::IdleAfter(1));
    // high at a restart: a window whose start the logger did not see
    t.edge(true, 50);
    t.restart();
    assert_eq!(t.state(), (0, true));
    assert_eq!(t.pop(), None);
    assert_eq!(Window::of(0, true), Window::BeforeFirst);
    t.edge(false, 60);
    t.edge(true, 70);
    assert_eq!(t.state(), (1, true));
}
