//! The replay window of a Recipient Context (RFC 8613 §7.4): a sliding window anchored at the
//! highest Partial IV received, with one bit per sequence number below it. A number is
//! accepted once; a number below the window is refused, since it can no longer be told from
//! a replay. The window is updated only after the message verifies (§8.2 step 6), so a forged
//! message cannot move it.
use crate::Error;

/// The default window size, the one aiocoap and libcoap use.
pub const DEFAULT_SIZE: u32 = 32;

/// A replay window of 1 to 64 sequence numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayWindow {
    size: u32,
    /// The highest sequence number accepted (None: none yet).
    top: Option<u64>,
    /// Bit i set: `top - i` was accepted (bit 0 is `top` itself).
    seen: u64,
}

impl Default for ReplayWindow {
    fn default() -> Self {
        ReplayWindow::new(DEFAULT_SIZE)
    }
}

impl ReplayWindow {
    /// An empty window of `size` numbers, clamped to 1..=64.
    ///
    /// An empty window accepts any first number: after a server restart that lost its window
    /// this is what §7.5.1 warns about, so a deployment restores the window or uses the Echo
    /// option (RFC 9175) before trusting freshness; docs/oscore.md says neither is done yet.
    pub fn new(size: u32) -> ReplayWindow {
        ReplayWindow { size: size.clamp(1, 64), top: None, seen: 0 }
    }

    /// The window size.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The highest sequence number accepted so far.
    pub fn highest(&self) -> Option<u64> {
        self.top
    }

    /// Whether `seq` may be accepted (not seen, not below the window). Changes nothing.
    pub fn check(&self, seq: u64) -> Result<(), Error> {
        let Some(top) = self.top else { return Ok(()) };
        if seq > top {
            return Ok(());
        }
        let back = top - seq;
        if back >= u64::from(self.size) {
            return Err(Error::TooOld(seq));
        }
        if self.seen >> back & 1 == 1 {
            return Err(Error::Replayed(seq));
        }
        Ok(())
    }

    /// Record `seq` as received (after its message verified); refused as [`check`] refuses.
    ///
    /// [`check`]: ReplayWindow::check
    pub fn accept(&mut self, seq: u64) -> Result<(), Error> {
        self.check(seq)?;
        match self.top {
            Some(top) if seq <= top => self.seen |= 1 << (top - seq),
            Some(top) => {
                let shift = seq - top;
                self.seen = if shift >= 64 { 0 } else { self.seen << shift };
                self.seen |= 1;
                self.top = Some(seq);
            }
            None => {
                self.seen = 1;
                self.top = Some(seq);
            }
        }
        // Bits beyond the window are never consulted; clearing them keeps equality meaningful.
        if self.size < 64 {
            self.seen &= (1u64 << self.size) - 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_number_is_accepted_once_and_old_ones_are_refused() {
        let mut w = ReplayWindow::new(32);
        w.accept(20).unwrap();
        assert_eq!(w.accept(20), Err(Error::Replayed(20)));
        w.accept(5).unwrap(); // 15 below the top: inside a 32-wide window
        assert_eq!(w.check(5), Err(Error::Replayed(5)));
        w.accept(100).unwrap();
        // 100 - 69 = 31: the last number inside the window; 68 is 32 below, outside.
        w.accept(69).unwrap();
        assert_eq!(w.check(68), Err(Error::TooOld(68)));
        assert_eq!(w.check(20), Err(Error::TooOld(20)));
        assert_eq!(w.check(69), Err(Error::Replayed(69)));
        w.check(70).unwrap();
        // A jump past 64 forgets every bit but keeps refusing the numbers below.
        w.accept(1000).unwrap();
        assert_eq!(w.check(100), Err(Error::TooOld(100)));
        w.check(999).unwrap();
        assert_eq!(w.highest(), Some(1000));
    }

    #[test]
    fn a_window_of_64_tracks_its_last_bit() {
        let mut w = ReplayWindow::new(64);
        w.accept(63).unwrap();
        w.accept(0).unwrap();
        assert_eq!(w.check(0), Err(Error::Replayed(0)));
        w.accept(64).unwrap();
        assert_eq!(w.check(0), Err(Error::TooOld(0)));
        assert_eq!(w.check(63), Err(Error::Replayed(63)));
        w.check(1).unwrap();
    }

    #[test]
    fn a_fresh_window_accepts_the_largest_number() {
        let mut w = ReplayWindow::default();
        w.accept(crate::MAX_SEQ).unwrap();
        assert_eq!(w.check(crate::MAX_SEQ), Err(Error::Replayed(crate::MAX_SEQ)));
    }
}
