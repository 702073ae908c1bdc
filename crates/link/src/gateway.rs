//! The gateway's check of one frame: structure, device, cipher, replay window, tag — in that
//! order, so a forged frame never moves a window and nothing refused reaches the store.
use std::collections::HashMap;

use crate::frame::{Header, FLAG_UNAUTHENTICATED};
use crate::keys::MasterKey;
use crate::replay::{ReplayWindow, Verdict};
use crate::suite::{Keyed, OpenError, Suite};

/// Why a frame was refused. Every refusal is counted under exactly one reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Refusal {
    /// Too short, unknown version, reserved flags, counter top bit, too long.
    Malformed,
    /// Device id not provisioned at this gateway.
    UnknownDevice,
    /// Cipher id or the unsafe flag differ from what the device is provisioned with.
    WrongCipher,
    /// Counter already accepted (inside the window).
    Replay,
    /// Counter older than the window.
    TooOld,
    /// Authentication failed.
    BadTag,
}

impl Refusal {
    pub const ALL: [Refusal; 6] = [
        Refusal::Malformed,
        Refusal::UnknownDevice,
        Refusal::WrongCipher,
        Refusal::Replay,
        Refusal::TooOld,
        Refusal::BadTag,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Malformed => "malformed",
            Refusal::UnknownDevice => "unknown_device",
            Refusal::WrongCipher => "wrong_cipher",
            Refusal::Replay => "replay",
            Refusal::TooOld => "too_old",
            Refusal::BadTag => "bad_tag",
        }
    }
}

/// Counters of what the gateway did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub accepted: u64,
    pub refused: [u64; 6],
}

impl Tally {
    pub fn refused_total(&self) -> u64 {
        self.refused.iter().sum()
    }
    pub fn count(&self, r: Refusal) -> u64 {
        self.refused[r as usize]
    }
}

struct DeviceState {
    keyed: Keyed,
    window: ReplayWindow,
}

/// One opened frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    pub device: u32,
    pub counter: u64,
    pub cipher: u8,
    pub reading: Vec<u8>,
}

pub struct Gateway {
    devices: HashMap<u32, DeviceState>,
    suite: Suite,
    unauthenticated: bool,
    pub tally: Tally,
}

impl Gateway {
    /// Provision `devices` with keys derived from `master` for `suite`.
    pub fn new(
        suite: &Suite,
        master: &MasterKey,
        devices: impl IntoIterator<Item = u32>,
        window: u64,
        unauthenticated: bool,
    ) -> Result<Gateway, String> {
        let mut map = HashMap::new();
        for d in devices {
            let key = master.device_key(suite.id, d, suite.key_len());
            map.insert(
                d,
                DeviceState { keyed: Keyed::new(suite, &key, unauthenticated)?, window: ReplayWindow::new(window)? },
            );
        }
        Ok(Gateway { devices: map, suite: suite.clone(), unauthenticated, tally: Tally::default() })
    }

    fn refuse(&mut self, r: Refusal) -> Result<Opened, Refusal> {
        self.tally.refused[r as usize] += 1;
        Err(r)
    }

    /// Check and open one frame; on success the device's window has moved and the reading is
    /// returned for storing.
    pub fn open(&mut self, frame: &[u8]) -> Result<Opened, Refusal> {
        let h = match Header::parse(frame) {
            Ok(h) => h,
            Err(_) => return self.refuse(Refusal::Malformed),
        };
        let want_flags = if self.unauthenticated { FLAG_UNAUTHENTICATED } else { 0 };
        if !self.devices.contains_key(&h.device) {
            return self.refuse(Refusal::UnknownDevice);
        }
        if h.cipher != self.suite.id || h.flags != want_flags {
            return self.refuse(Refusal::WrongCipher);
        }
        let st = self.devices.get_mut(&h.device).expect("checked above");
        match st.window.check(h.counter) {
            Verdict::Fresh => {}
            Verdict::Replay => return self.refuse(Refusal::Replay),
            Verdict::TooOld => return self.refuse(Refusal::TooOld),
        }
        match st.keyed.open(&h, frame) {
            Ok(reading) => {
                st.window.accept(h.counter);
                self.tally.accepted += 1;
                Ok(Opened { device: h.device, counter: h.counter, cipher: h.cipher, reading })
            }
            Err(OpenError::BadTag) => self.refuse(Refusal::BadTag),
            Err(OpenError::Malformed) => self.refuse(Refusal::Malformed),
        }
    }
}
