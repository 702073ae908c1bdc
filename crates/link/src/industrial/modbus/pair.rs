//! A proxy pair's two sides and the link device ids of its two directions.

/// Which side of the pair a proxy is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Beside the master: accepts the master's connections, forwards to the slave-side proxy.
    Master,
    /// Beside the slave: accepts hop connections, forwards to the real slave.
    Slave,
}

impl Side {
    /// `--side`: `master` or `slave`.
    pub fn parse(s: &str) -> Result<Side, String> {
        match s {
            "master" => Ok(Side::Master),
            "slave" => Ok(Side::Slave),
            _ => Err(format!("--side: '{}' is not master or slave", crate::input::shown(s))),
        }
    }
    /// The name `--side` takes.
    pub fn name(self) -> &'static str {
        match self {
            Side::Master => "master",
            Side::Slave => "slave",
        }
    }
}

/// The hop's devices have their own id range, above every sensor id `lwcbench link` gives
/// (0..100,000) and every GOOSE APPID (16 bits): a master key shared with a link session or a
/// GOOSE publisher never seals the same (device, counter) — the same nonce — twice, even when
/// the proxy keeps its counters in another state file.
pub const DEVICE_BASE: u32 = 0x4D42_0000;
/// The largest `--pair` whose two devices fit in a u32 above [`DEVICE_BASE`].
pub const MAX_PAIR: u32 = (u32::MAX - DEVICE_BASE) / 2;

/// (sending device, receiving device) of `side` in pair `pair`.
pub fn devices(pair: u32, side: Side) -> Result<(u32, u32), String> {
    if pair > MAX_PAIR {
        return Err(format!("--pair: {pair} is above {MAX_PAIR}"));
    }
    let (to_slave, to_master) = (DEVICE_BASE + 2 * pair, DEVICE_BASE + 2 * pair + 1);
    Ok(match side {
        Side::Master => (to_slave, to_master),
        Side::Slave => (to_master, to_slave),
    })
}
