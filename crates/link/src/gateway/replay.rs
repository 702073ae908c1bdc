//! Per-device sliding replay window (RFC 4303 §3.4.3 / RFC 6479 style bitmap).
//!
//! Semantics, for window size W and `top` = the highest counter accepted so far:
//! * first frame of a device: accepted;
//! * counter > top: accepted, the window slides so that `top` = counter;
//! * top − W < counter ≤ top: accepted once (bit clear → set), refused as **replay** after;
//! * counter ≤ top − W: refused as **too old** (it cannot be told apart from a replay).
//!
//! The check and the update are separate: the gateway checks, then verifies the tag, and only
//! an authentic frame moves the window (a forged frame with a huge counter cannot).

/// What the window says of a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not seen, inside or above the window.
    Fresh,
    /// Already accepted.
    Replay,
    /// Below the window.
    TooOld,
}

/// A sliding replay window over a device's counters.
#[derive(Clone, Debug)]
pub struct ReplayWindow {
    size: u64,
    top: Option<u64>,
    /// Bit for counter c at position c mod size.
    bits: Vec<u64>,
}

/// Largest window (counters).
pub const MAX_WINDOW: u64 = 1 << 20;

/// Most memory the replay bitmaps of one session's gateways may take: every provisioned
/// device has its window from the start.
pub const MAX_WINDOW_MEMORY: u64 = 1 << 30;

/// Bytes of replay bitmaps for `devices` devices with a window of `window` in each of
/// `gateways` gateways (the `--workers` each keep their own).
pub fn window_memory(devices: u64, window: u64, gateways: u64) -> u64 {
    devices.saturating_mul(window.div_ceil(64) * 8).saturating_mul(gateways)
}

/// Refuse `--devices` × `--window` (× gateways) whose bitmaps exceed [`MAX_WINDOW_MEMORY`].
pub fn check_window_memory(devices: u64, window: u64, gateways: u64) -> Result<(), String> {
    let need = window_memory(devices, window, gateways);
    if need <= MAX_WINDOW_MEMORY {
        return Ok(());
    }
    let per = if gateways > 1 { format!(" across {gateways} gateway workers") } else { String::new() };
    Err(format!(
        "--devices/--window: {devices} devices with a window of {window} need {:.1} GiB of replay bitmaps{per} \
         (limit {} GiB); lower --window or provision fewer devices",
        need as f64 / (1u64 << 30) as f64,
        MAX_WINDOW_MEMORY >> 30
    ))
}

impl ReplayWindow {
    /// A window of `size` counters (1..=2^20).
    pub fn new(size: u64) -> Result<ReplayWindow, String> {
        if size == 0 || size > MAX_WINDOW {
            return Err(format!("--window: {size} is not in 1..={MAX_WINDOW}"));
        }
        Ok(ReplayWindow { size, top: None, bits: vec![0; size.div_ceil(64) as usize] })
    }

    /// The window's size (counters).
    pub fn size(&self) -> u64 {
        self.size
    }

    fn bit(&self, c: u64) -> bool {
        let i = c % self.size;
        self.bits[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
    fn set(&mut self, c: u64, v: bool) {
        let i = c % self.size;
        let w = &mut self.bits[(i / 64) as usize];
        if v {
            *w |= 1 << (i % 64)
        } else {
            *w &= !(1 << (i % 64))
        }
    }

    /// Would `c` be accepted? Changes nothing.
    pub fn check(&self, c: u64) -> Verdict {
        match self.top {
            None => Verdict::Fresh,
            Some(t) if c > t => Verdict::Fresh,
            Some(t) if t - c >= self.size => Verdict::TooOld,
            Some(_) if self.bit(c) => Verdict::Replay,
            Some(_) => Verdict::Fresh,
        }
    }

    /// Record `c` as accepted (call only after `check` said Fresh and the tag verified).
    pub fn accept(&mut self, c: u64) {
        match self.top {
            Some(t) if c <= t => {}
            Some(t) => {
                // Slide: counters t+1 ..= c enter the window; their slots hold stale bits.
                if c - t >= self.size {
                    self.bits.iter_mut().for_each(|w| *w = 0);
                } else {
                    for x in t + 1..=c {
                        self.set(x, false);
                    }
                }
                self.top = Some(c);
            }
            None => {
                self.bits.iter_mut().for_each(|w| *w = 0);
                self.top = Some(c);
            }
        }
        self.set(c, true);
    }

    /// check + accept in one step (for callers that have already authenticated).
    pub fn check_and_accept(&mut self, c: u64) -> Verdict {
        let v = self.check(c);
        if v == Verdict::Fresh {
            self.accept(c);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// The reference model: a set of everything accepted and the maximum.
    struct Model {
        seen: HashSet<u64>,
        max: Option<u64>,
        w: u64,
    }
    impl Model {
        fn offer(&mut self, c: u64) -> Verdict {
            if let Some(m) = self.max {
                if c <= m && m - c >= self.w {
                    return Verdict::TooOld;
                }
            }
            if self.seen.contains(&c) {
                return Verdict::Replay;
            }
            self.seen.insert(c);
            self.max = Some(self.max.map_or(c, |m| m.max(c)));
            Verdict::Fresh
        }
    }

    /// 100,000 devices × 1,048,576 counters: 16,384 words of 8 B each = 128 KiB per device,
    /// 13,107,200,000 B = 12.2 GiB in all (worked out by hand).
    #[test]
    fn window_memory_is_bounded() {
        assert_eq!(window_memory(100_000, 1 << 20, 1), 13_107_200_000);
        let e = check_window_memory(100_000, 1 << 20, 1).unwrap_err();
        assert_eq!(
            e,
            "--devices/--window: 100000 devices with a window of 1048576 need 12.2 GiB of replay bitmaps \
             (limit 1 GiB); lower --window or provision fewer devices"
        );
        // 1,000,000 devices × the default window 1024: 16 words = 128 B each, 128,000,000 B.
        assert!(check_window_memory(1_000_000, 1024, 1).is_ok());
        // 8,192 devices × 2^20: exactly 1 GiB is allowed, one more device is not.
        assert!(check_window_memory(8192, 1 << 20, 1).is_ok());
        assert!(check_window_memory(8193, 1 << 20, 1).is_err());
        assert!(check_window_memory(8192, 1 << 20, 2).unwrap_err().contains("across 2 gateway workers"));
    }

    #[test]
    fn hand_cases() {
        let mut w = ReplayWindow::new(4).unwrap();
        assert_eq!(w.check_and_accept(10), Verdict::Fresh);
        assert_eq!(w.check_and_accept(10), Verdict::Replay);
        assert_eq!(w.check_and_accept(8), Verdict::Fresh); // out of order, inside (7..=10)
        assert_eq!(w.check_and_accept(8), Verdict::Replay);
        assert_eq!(w.check_and_accept(7), Verdict::Fresh);
        assert_eq!(w.check_and_accept(6), Verdict::TooOld);
        assert_eq!(w.check_and_accept(13), Verdict::Fresh); // window now 10..=13
        assert_eq!(w.check_and_accept(9), Verdict::TooOld);
        assert_eq!(w.check_and_accept(11), Verdict::Fresh);
        assert_eq!(w.check_and_accept(10), Verdict::Replay);
        assert_eq!(w.check_and_accept(1000), Verdict::Fresh); // jump clears everything
        assert_eq!(w.check_and_accept(999), Verdict::Fresh);
        assert_eq!(w.check_and_accept(13), Verdict::TooOld);
        assert!(ReplayWindow::new(0).is_err());
        assert!(ReplayWindow::new(MAX_WINDOW + 1).is_err());
        // check() alone never changes state.
        let w2 = ReplayWindow::new(8).unwrap();
        assert_eq!(w2.check(5), Verdict::Fresh);
        assert_eq!(w2.check(5), Verdict::Fresh);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        /// Against the set+max model: every verdict equal, for windows that are and are not
        /// multiples of 64, with counters drawn near each other (reordering, duplicates, jumps).
        #[test]
        fn matches_reference_model(
            w in prop_oneof![1u64..=5, 60u64..=70, Just(128u64), Just(1000u64)],
            ops in proptest::collection::vec(prop_oneof![0u64..40, 0u64..300, 0u64..5000], 1..400),
        ) {
            let mut win = ReplayWindow::new(w).unwrap();
            let mut m = Model { seen: HashSet::new(), max: None, w };
            for c in ops {
                prop_assert_eq!(win.check_and_accept(c), m.offer(c), "counter {} window {}", c, w);
            }
        }

        /// A refused-at-tag frame (check only, no accept) never changes later verdicts.
        #[test]
        fn check_without_accept_changes_nothing(
            ops in proptest::collection::vec((0u64..200, any::<bool>()), 1..300),
        ) {
            let mut win = ReplayWindow::new(32).unwrap();
            let mut m = Model { seen: HashSet::new(), max: None, w: 32 };
            for (c, authentic) in ops {
                if authentic {
                    prop_assert_eq!(win.check_and_accept(c), m.offer(c));
                } else {
                    let _ = win.check(c);
                }
            }
        }
    }
}
