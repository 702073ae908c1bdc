//! The simulated devices of a session: each takes a counter, seals the next reading and hands
//! the frame to the transport.
use crate::wire::frame::Proto;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::now_ns;
use crate::device::counter::{CounterStore, DeviceCounter};
use crate::transport::Publisher;
use crate::wire::compact::{self, Carrier};
use crate::wire::keys::MasterKey;
use crate::wire::suite::{Keyed, Suite};

/// Receives every frame before it is sent (the kill test's capture).
pub type Capture = Box<dyn FnMut(&[u8]) -> Result<(), String> + Send>;

/// One message as the device saw it.
#[derive(Clone, Copy, Debug)]
pub struct DevSample {
    /// The device.
    pub device: u32,
    /// The frame's counter.
    pub counter: u64,
    /// Dataset row the reading came from.
    pub row: u32,
    /// When sealing began (ns).
    pub seal_start: u64,
    /// When the frame was handed to the transport (ns).
    pub sent: u64,
    /// The frame's size in bytes.
    pub wire: u32,
    /// The reading's size in bytes.
    pub plain: u32,
}

/// What one simulated device does.
pub struct DeviceSpec {
    /// The device.
    pub device: u32,
    /// Readings to send.
    pub messages: u64,
    /// None: as fast as possible.
    pub interval: Option<Duration>,
    /// Delay before the first reading (spreads devices over the interval).
    pub offset: Duration,
    /// Row of the dataset the first reading takes.
    pub first_row: usize,
}

/// Run one device: take a counter, seal the next reading, hand it to the transport.
/// `capture` (if any) receives every frame before it is sent.
pub async fn device_task(
    spec: DeviceSpec,
    keyed: Keyed,
    counter: DeviceCounter,
    readings: Arc<Vec<Vec<u8>>>,
    publisher: Publisher,
    capture: Option<Capture>,
) -> Result<Vec<DevSample>, String> {
    carried_device_task(spec, None, keyed, counter, readings, publisher, capture).await
}

/// The counter of reading `i` on `carrier`: its FCnt from the emulated LoRaWAN stack, taken from
/// the counter state only if no frame of this key may have used it.
fn carrier_counter(carrier: &Carrier, counter: &mut DeviceCounter, i: u64) -> Result<u64, String> {
    let exhausted = |at: &str| {
        format!("join epoch {} has no FCnt left under this key{at}: re-join with a higher --join-epoch", carrier.epoch)
    };
    let c = match carrier.fcnt_from {
        Some(f) => {
            let fcnt = u32::try_from(u64::from(f) + i).map_err(|_| exhausted(" (the 32-bit FCnt passes 2^32 - 1)"))?;
            counter.take_exact(carrier.counter(fcnt))?
        }
        None => counter.take_from(carrier.counter(0))?,
    };
    if c >> 32 != u64::from(carrier.epoch) {
        // Only `take_from` moves past the epoch: its FCnt space is used up, or the counter
        // state already holds a later epoch.
        return Err(exhausted(&format!(" (the counter state is at join epoch {}, FCnt {})", c >> 32, c & 0xFFFF_FFFF)));
    }
    Ok(c)
}

/// [`device_task`] on `carrier` (None: the link's own frame): with a carrier the frame is the
/// compact FRMPayload in the emulation's envelope, and its counter the carrier's FCnt.
pub async fn carried_device_task(
    spec: DeviceSpec,
    carrier: Option<Carrier>,
    mut keyed: Keyed,
    mut counter: DeviceCounter,
    readings: Arc<Vec<Vec<u8>>>,
    publisher: Publisher,
    mut capture: Option<Capture>,
) -> Result<Vec<DevSample>, String> {
    let mut out = Vec::with_capacity(spec.messages.min(1 << 20) as usize);
    if !spec.offset.is_zero() {
        tokio::time::sleep(spec.offset).await;
    }
    let mut tick = spec.interval.map(|i| {
        let mut t = tokio::time::interval(i);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        t
    });
    for i in 0..spec.messages {
        match tick.as_mut() {
            Some(t) => {
                t.tick().await;
            }
            None if i % 64 == 63 => tokio::task::yield_now().await,
            None => {}
        }
        let row = (spec.first_row + i as usize) % readings.len();
        let reading = &readings[row];
        let seal_start = now_ns();
        let mut frame = Vec::with_capacity(reading.len() + 48);
        let (c, wire) = match &carrier {
            None => {
                let c = counter.take()?;
                keyed.seal(spec.device, c, reading, &mut frame)?;
                (c, frame.len() as u32)
            }
            Some(car) => {
                let c = carrier_counter(car, &mut counter, i)?;
                let mut payload = Vec::with_capacity(reading.len() + 48);
                compact::seal(&mut keyed, spec.device, c, reading, &mut payload)?;
                // What rides the radio is the FRMPayload; the envelope is the emulation's.
                frame = compact::envelope(spec.device, c as u32, &payload);
                (c, payload.len() as u32)
            }
        };
        let sent = now_ns();
        if let Some(cap) = capture.as_mut() {
            cap(&frame)?;
        }
        publisher.send(spec.device, frame).await?;
        if out.len() < (1 << 22) {
            out.push(DevSample {
                device: spec.device,
                counter: c,
                row: row as u32,
                seal_start,
                sent,
                wire,
                plain: reading.len() as u32,
            });
        }
    }
    Ok(out)
}

/// What every device of a fleet shares: cipher, messages, pace and the readings they send.
pub struct Fleet<'a> {
    /// The cipher.
    pub suite: &'a Suite,
    /// `--unsafe-no-integrity`: frames without a tag.
    pub unauthenticated: bool,
    /// Readings per device.
    pub messages: u64,
    /// None: as fast as possible.
    pub interval: Option<Duration>,
    /// The readings, taken in turn.
    pub readings: &'a Arc<Vec<Vec<u8>>>,
    /// The carrier whose counter and address the frames use (None: the link's own header).
    pub carrier: Option<Carrier>,
}

/// Start every device of `cfg` as a task on `rt` (device i publishes on `publishers[i mod n]`)
/// and wait for all of them: the samples they sent, and the first device error (the others'
/// samples are kept). Shared by the plain session and the network-conditions session.
pub fn run_fleet(
    rt: &tokio::runtime::Handle,
    cfg: &Fleet,
    ids: &[u32],
    blocks: Vec<std::ops::Range<u64>>,
    master: &MasterKey,
    counters: &CounterStore,
    publishers: &[Publisher],
) -> Result<(Vec<DevSample>, Option<String>), String> {
    let mut tasks = Vec::new();
    for (i, (&d, block)) in ids.iter().zip(blocks).enumerate() {
        let keyed = match &cfg.carrier {
            Some(car) => car.keyed(cfg.suite, master, d)?,
            None => {
                let key = master.cipher_key(Proto::Sensor, d, cfg.suite.id, cfg.suite.key_len());
                Keyed::new(cfg.suite, &key, Proto::Sensor, cfg.unauthenticated)?
            }
        };
        let counter = DeviceCounter::with_block(counters, d, block);
        let offset = cfg.interval.map(|iv| iv.mul_f64(i as f64 / ids.len() as f64)).unwrap_or_default();
        let spec = DeviceSpec { device: d, messages: cfg.messages, interval: cfg.interval, offset, first_row: i * 7 };
        tasks.push(rt.spawn(carried_device_task(
            spec,
            cfg.carrier,
            keyed,
            counter,
            cfg.readings.clone(),
            publishers[i % publishers.len()].clone(),
            None,
        )));
    }
    let mut dev = Vec::new();
    let mut first_err = None;
    for t in tasks {
        match rt.block_on(t) {
            Ok(Ok(s)) => dev.extend(s),
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(e) => {
                first_err.get_or_insert(format!("device task failed: {e}"));
            }
        }
    }
    Ok((dev, first_err))
}

/// The readings of a dataset as the payloads devices send: one row of every channel, float32
/// big-endian (the engine's default encoding).
pub fn dataset_readings(ds: &lwcbench_engine::dataset::Dataset) -> Arc<Vec<Vec<u8>>> {
    Arc::new(ds.rows.iter().map(|r| r.iter().flat_map(|v| (*v as f32).to_be_bytes()).collect()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The emulated stack's FCnt is taken only if this key never sealed under it: a stack whose
    /// FCnt is reset (a second run from --fcnt-from 0) is refused, a later epoch starts at FCnt 0.
    #[test]
    fn a_reset_fcnt_is_refused_and_a_new_epoch_starts_at_zero() {
        let d = tempfile::tempdir().unwrap();
        let m = MasterKey::from_bytes([7; 32]);
        let store = CounterStore::open(&d.path().join("ctr"), 4, &m).unwrap();
        let mut ctr = DeviceCounter::new(&store, 9).unwrap();
        let from0 = Carrier { dev_addr: 9, fcnt_from: Some(0), epoch: 0 };
        assert_eq!((0..3).map(|i| carrier_counter(&from0, &mut ctr, i).unwrap()).collect::<Vec<_>>(), [0, 1, 2]);
        // the same stack started again: FCnt 0 and 2 repeat
        for i in [0, 2] {
            let e = carrier_counter(&from0, &mut ctr, i).unwrap_err();
            assert!(e.contains("reset without a re-join") && e.contains("--join-epoch"), "{e}");
        }
        // a new process on the same state: its first block starts past everything reserved
        drop((ctr, store));
        let store = CounterStore::open(&d.path().join("ctr"), 4, &m).unwrap();
        let mut ctr = DeviceCounter::new(&store, 9).unwrap();
        assert!(carrier_counter(&from0, &mut ctr, 3).is_err(), "FCnt 3 was reserved by the first process");
        let cont = Carrier { fcnt_from: None, ..from0 };
        assert_eq!(carrier_counter(&cont, &mut ctr, 0).unwrap(), 4);
        let epoch1 = Carrier { dev_addr: 9, fcnt_from: None, epoch: 1 };
        assert_eq!(carrier_counter(&epoch1, &mut ctr, 0).unwrap(), 1 << 32);
        let e = carrier_counter(&cont, &mut ctr, 0).unwrap_err();
        assert!(e.contains("join epoch 0 has no FCnt left") && e.contains("at join epoch 1"), "{e}");
        let last = Carrier { dev_addr: 9, fcnt_from: Some(u32::MAX), epoch: 1 };
        assert_eq!(carrier_counter(&last, &mut ctr, 0).unwrap(), (1 << 32) | 0xFFFF_FFFF);
        assert!(carrier_counter(&last, &mut ctr, 1).unwrap_err().contains("passes 2^32 - 1"));
        let e = carrier_counter(&Carrier { fcnt_from: Some(7), ..epoch1 }, &mut ctr, 0).unwrap_err();
        assert!(e.contains("reset without a re-join"), "{e}");
    }
}
