//! The sealed hop's halves: sealing with the sending device's counters, and the receiving
//! checks before and after the tag.

use super::*;

impl Sender {
    pub(super) fn take(&mut self) -> Result<u64, String> {
        if let Some(why) = &self.halted {
            return Err(why.clone());
        }
        let c = self.counter.take()?;
        self.highest = Some(self.highest.map_or(c, |h| h.max(c)));
        Ok(c)
    }

    pub(super) fn seal(
        &mut self,
        flags: u8,
        counter: u64,
        ext: u64,
        implicit: &[u8],
        plain: &[u8],
    ) -> Result<Vec<u8>, String> {
        let h = ModbusHeader {
            proto: self.keyed.proto,
            cipher: self.keyed.suite.id,
            flags,
            device: self.device,
            counter,
            ext,
        };
        let mut out = Vec::with_capacity(MAX_RECORD);
        hop::seal(&mut self.keyed, &h, implicit, plain, &mut out)?;
        Ok(out)
    }
}

impl Receiver {
    pub(super) fn refuse<T>(&mut self, r: Refusal) -> Result<T, &'static str> {
        self.tally.refused[r as usize] += 1;
        Err(r.as_str())
    }

    /// Check and open one hop frame: device, type, cipher and flags, handshake or not as expected,
    /// the failed-tag budget, a counter above `after` (the connection's last), then the tag with
    /// `implicit` in the associated data. The reason of a refusal for the log.
    pub(super) fn open(
        &mut self,
        frame: &[u8],
        implicit: &[u8],
        handshake: bool,
        after: Option<u64>,
        order: &AtomicU64,
    ) -> Result<(ModbusHeader, Vec<u8>), &'static str> {
        let Ok(h) = ModbusHeader::parse(frame) else { return self.refuse(Refusal::Malformed) };
        if h.device != self.device {
            return self.refuse(Refusal::UnknownDevice);
        }
        // The other direction's type (a frame reflected back) is refused before its tag.
        if h.proto != self.keyed.proto || h.cipher != self.keyed.suite.id || h.flags & FLAG_UNAUTHENTICATED != 0 {
            return self.refuse(Refusal::WrongCipher);
        }
        if h.is_handshake() != handshake {
            order.fetch_add(1, Ordering::Relaxed);
            return Err(if handshake {
                "not a handshake: a hop connection starts with one"
            } else {
                "a handshake frame on a connection that has had its handshake"
            });
        }
        if self.failed_tags >= self.max_failed_tags {
            return self.refuse(Refusal::TagBudget);
        }
        if after.is_some_and(|last| h.counter <= last) {
            return self.refuse(Refusal::Replay);
        }
        match hop::open(&mut self.keyed, &h, frame, implicit) {
            Ok(plain) => {
                self.top = self.top.max(Some(h.counter));
                self.tally.accepted += 1;
                Ok((h, plain))
            }
            Err(OpenError::BadTag) => {
                self.failed_tags += 1;
                if self.failed_tags == self.max_failed_tags {
                    self.tally.alarms += 1;
                    eprintln!(
                        "alarm: device {}: {} frames with a failed tag ({}); its further frames are refused \
                         (--max-failed-tags, docs/security.md)",
                        self.device,
                        self.max_failed_tags,
                        self.keyed.suite.name()
                    );
                }
                self.refuse(Refusal::BadTag)
            }
            Err(OpenError::Malformed) => self.refuse(Refusal::Malformed),
        }
    }
}

impl Hop {
    /// `--max-failed-tags` of the receiving direction (a plain hop has no tags).
    pub fn set_max_failed_tags(&self, n: u64) -> Result<(), String> {
        if n == 0 {
            return Err("--max-failed-tags: must be at least 1".into());
        }
        if let Hop::Sealed { receiver, .. } = self {
            receiver.lock().unwrap_or_else(|e| e.into_inner()).max_failed_tags = n;
        }
        Ok(())
    }

    /// `--write-deadline`: the slave side refuses a write older than this by its handshake clock.
    pub fn set_write_deadline(&self, d: Duration) -> Result<(), String> {
        if d < Duration::from_millis(1) || d > Duration::from_secs(3600) {
            return Err(format!("--write-deadline: {d:?} is not between 1ms and 1h"));
        }
        if let Hop::Sealed { receiver, .. } = self {
            receiver.lock().unwrap_or_else(|e| e.into_inner()).write_deadline = d;
        }
        Ok(())
    }

    /// A sealed hop for `side` of `pair`: keys from `key` (the pair's device key, or a master in
    /// process), counters from `store`, the replay floor from `replay_state`, which must exist
    /// (made at pairing, [`super::floor::provision_pair`]).
    /// `None`: no file, the floor lives as long as this process (the in-process measurement).
    /// `window` is kept for the callers' sake: on a connection counters must increase strictly,
    /// so the hop has no replay window.
    pub fn sealed(
        suite: &Suite,
        key: &impl KeySource,
        store: &CounterStore,
        pair: u32,
        side: Side,
        window: u64,
        replay_state: Option<&Path>,
    ) -> Result<Hop, String> {
        let _ = window;
        let (send, recv) = devices(pair, side)?;
        let (send_proto, recv_proto) = match side {
            Side::Master => (Proto::ModbusToSlave, Proto::ModbusToMaster),
            Side::Slave => (Proto::ModbusToMaster, Proto::ModbusToSlave),
        };
        // Both directions' keys come from the pair's key (the device id of a Modbus key is the pair).
        let keyed = Keyed::derived(suite, key, send_proto, pair, false)?;
        let recv_keyed = Keyed::derived(suite, key, recv_proto, pair, false)?;
        // The sending device's lease first: one process per direction, so one writer of the
        // replay state too.
        let counter = DeviceCounter::new(store, send)?;
        let (file, floor) = match replay_state {
            Some(p) => {
                let (f, floor) = Floor::open(p, key, recv)?;
                (Some(Arc::new(Mutex::new(f))), floor)
            }
            None => (None, None),
        };
        Ok(Hop::Sealed {
            sender: Arc::new(Mutex::new(Sender { keyed, device: send, counter, highest: None, halted: None })),
            receiver: Arc::new(Mutex::new(Receiver {
                keyed: recv_keyed,
                device: recv,
                floor,
                top: floor,
                file,
                failed_tags: 0,
                max_failed_tags: default_max_failed_tags(suite.tag_len(false)),
                write_deadline: DEFAULT_WRITE_DEADLINE,
                tally: Tally::default(),
            })),
        })
    }

    /// Why the sending half stopped (a counter state older than the peer has accepted).
    pub fn halted(&self) -> Option<String> {
        match self {
            Hop::Plain => None,
            Hop::Sealed { sender, .. } => sender.lock().unwrap_or_else(|e| e.into_inner()).halted.clone(),
        }
    }
}
