//! The simulated devices of a session: each takes a counter, seals the next reading and hands
//! the frame to the transport.
use crate::wire::frame::Proto;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::now_ns;
use crate::device::counter::{CounterStore, DeviceCounter};
use crate::transport::Publisher;
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
        let c = counter.take()?;
        let mut frame = Vec::with_capacity(reading.len() + 48);
        keyed.seal(spec.device, c, reading, &mut frame)?;
        let sent = now_ns();
        if let Some(cap) = capture.as_mut() {
            cap(&frame)?;
        }
        let wire = frame.len() as u32;
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
        let key = master.cipher_key(Proto::Sensor, d, cfg.suite.id, cfg.suite.key_len());
        let keyed = Keyed::new(cfg.suite, &key, Proto::Sensor, cfg.unauthenticated)?;
        let counter = DeviceCounter::with_block(counters, d, block);
        let offset = cfg.interval.map(|iv| iv.mul_f64(i as f64 / ids.len() as f64)).unwrap_or_default();
        let spec = DeviceSpec { device: d, messages: cfg.messages, interval: cfg.interval, offset, first_row: i * 7 };
        tasks.push(rt.spawn(device_task(
            spec,
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
