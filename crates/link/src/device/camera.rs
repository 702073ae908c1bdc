//! A camera device: takes the frames of a clip at its frame rate, seals each frame into
//! version 2 parts (wire::video) with counters from the durable counter state (one counter per
//! part, the sensors' rule), and hands every part to the transport.
use std::time::Duration;

use crate::clock::now_ns;
use crate::device::counter::DeviceCounter;
use crate::wire::suite::Keyed;
use crate::wire::video::{seal_frame, VIDEO_HEADER_LEN};

/// What the camera did with one frame.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shot {
    /// When the frame was taken (its scheduled capture instant), ns on `crate::clock`.
    pub capture_ns: u64,
    /// Sealing all its parts took this long.
    pub seal_ns: u64,
    /// Parts it was sent in.
    pub parts: u32,
    /// Frame bytes (plaintext).
    pub payload: u64,
    /// Bytes on the wire: every part's header, ciphertext and tag.
    pub wire: u64,
}

/// A camera: seals each frame of a clip into parts and hands them to the transport.
pub struct Camera {
    /// Its device id.
    pub device: u32,
    /// Its cipher under its key.
    pub keyed: Keyed,
    /// Its counters.
    pub counter: DeviceCounter,
    /// Largest part on the wire in bytes.
    pub part_bytes: usize,
    /// `--unsafe-no-integrity`: parts without a tag.
    pub unauthenticated: bool,
}

impl Camera {
    /// Headers, random nonces and tags of a frame in `parts` parts.
    pub fn overhead(&self, parts: u32) -> u64 {
        u64::from(parts) * (VIDEO_HEADER_LEN + self.keyed.nonce_and_tag_len()) as u64
    }

    /// Take `count` frames, frame `n` being `frame(n)`, one every `interval` (none: back to
    /// back), and give every part to `send`. Stops at the first error.
    pub fn run<'a>(
        &mut self,
        count: u32,
        interval: Option<Duration>,
        frame: impl Fn(u32) -> &'a [u8],
        mut send: impl FnMut(Vec<u8>) -> Result<(), String>,
    ) -> Result<Vec<Shot>, String> {
        let t0 = now_ns();
        let mut shots = Vec::with_capacity(count as usize);
        for n in 0..count {
            if let Some(iv) = interval {
                let due = t0 + (iv.as_nanos() as u64).saturating_mul(u64::from(n));
                let now = now_ns();
                if due > now {
                    std::thread::sleep(Duration::from_nanos(due - now));
                }
            }
            let capture_ns = now_ns();
            let data = frame(n);
            let counter = &mut self.counter;
            let parts =
                seal_frame(&mut self.keyed, self.device, n, data, self.part_bytes, self.unauthenticated, || {
                    counter.take()
                })?;
            let seal_ns = now_ns() - capture_ns;
            let wire = parts.iter().map(|p| p.len() as u64).sum();
            let k = parts.len() as u32;
            for p in parts {
                send(p)?;
            }
            shots.push(Shot { capture_ns, seal_ns, parts: k, payload: data.len() as u64, wire });
        }
        Ok(shots)
    }
}
