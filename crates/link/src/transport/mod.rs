//! How frames travel from the devices to the gateway: MQTT QoS 1 through a broker ([`mqtt`],
//! [`broker`]) or plain UDP datagrams ([`udp`]).
use std::net::SocketAddr;
use std::sync::Arc;

use rumqttc::{AsyncClient, QoS};

use crate::transport::broker::BrokerAddr;
use crate::transport::mqtt::topic;

pub mod broker;
pub mod mqtt;
pub mod udp;

/// How frames travel.
#[derive(Clone, Debug)]
pub enum Transport {
    /// MQTT 3.1.1 through the broker at this address.
    Mqtt(BrokerAddr),
    /// Plain UDP datagrams to the gateway on loopback: no retransmission, loss is counted.
    Udp,
}

impl Transport {
    /// The transport as run.json names it.
    pub fn describe(&self) -> String {
        match self {
            Transport::Mqtt(b) => format!("MQTT 3.1.1 QoS 1, persistent sessions, {}", b.describe()),
            Transport::Udp => "UDP datagrams on loopback (no retransmission)".into(),
        }
    }
}

/// How a device hands a frame to the transport.
#[derive(Clone)]
pub enum Publisher {
    /// Publish at QoS 1 on the device's topic of `session`.
    Mqtt {
        /// The MQTT client.
        client: AsyncClient,
        /// The session (its topics).
        session: String,
    },
    /// Send a datagram from `sock` to `to`.
    Udp {
        /// The socket.
        sock: Arc<tokio::net::UdpSocket>,
        /// The gateway's (or the relay's) address.
        to: SocketAddr,
    },
}

impl Publisher {
    /// Send one frame of `device`.
    pub async fn send(&self, device: u32, frame: Vec<u8>) -> Result<(), String> {
        match self {
            Publisher::Mqtt { client, session } => client
                .publish(topic(session, device), QoS::AtLeastOnce, false, frame)
                .await
                .map_err(|e| format!("mqtt publish: {e}")),
            Publisher::Udp { sock, to } => {
                // A full socket buffer is loss on this transport, not an error.
                let _ = sock.send_to(&frame, to).await;
                Ok(())
            }
        }
    }
}

/// The multi-threaded tokio runtime the link's network tasks run on.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("link-rt")
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}
