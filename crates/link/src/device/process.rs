//! One device as its own process (`lwcbench link device`).
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::device::counter::{CounterStore, DeviceCounter};
use crate::device::fleet::{dataset_readings, device_task, Capture, DeviceSpec};
use crate::transport::broker::BrokerAddr;
use crate::transport::mqtt::mqtt_connect;
use crate::transport::{runtime, Publisher};
use crate::wire::keys::MasterKey;
use crate::wire::suite::{Keyed, Suite};

/// One device as its own process (`lwcbench link device`): its own counter state file, its own
/// MQTT session; returns after the broker acknowledged every reading (QoS 1).
pub struct DeviceProcess {
    pub suite: Suite,
    pub device: u32,
    pub session: String,
    pub broker: BrokerAddr,
    pub master: MasterKey,
    pub counters: CounterStore,
    pub messages: u64,
    pub interval: Option<Duration>,
    pub capture: Option<Capture>,
}

impl DeviceProcess {
    pub fn run(self) -> Result<u64, String> {
        let key = self.master.device_key(self.suite.id, self.device, self.suite.key_len());
        let keyed = Keyed::new(&self.suite, &key, false)?;
        let readings = dataset_readings(&lwcbench_engine::dataset::Dataset::builtin());
        let rt = runtime()?;
        let (device, session, messages, interval) = (self.device, self.session.clone(), self.messages, self.interval);
        let (broker, counters, capture) = (self.broker.clone(), self.counters.clone(), self.capture);
        let r = rt.block_on(async move {
            let conn = mqtt_connect(&format!("lwcbench-dev-{session}-{device}"), &broker).await?;
            let counter = DeviceCounter::new(&counters, device)?;
            let spec = DeviceSpec { device, messages, interval, offset: Duration::ZERO, first_row: 0 };
            let publisher = Publisher::Mqtt { client: conn.client.clone(), session: session.clone() };
            let samples = device_task(spec, keyed, counter, readings, publisher, capture).await?;
            let n = samples.len() as u64;
            let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
            while conn.acked.load(Ordering::Acquire) < n {
                if tokio::time::Instant::now() > deadline {
                    return Err(format!(
                        "broker acknowledged only {} of {n} readings within 30 s",
                        conn.acked.load(Ordering::Acquire)
                    ));
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let _ = conn.client.disconnect().await;
            Ok::<u64, String>(n)
        });
        rt.shutdown_timeout(Duration::from_secs(1));
        r
    }
}
