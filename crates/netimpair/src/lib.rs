//! Network conditions for `lwcbench link`: two network namespaces joined by a veth pair that the tool
//! creates and removes, and loss, delay, jitter, reordering, duplication and rate limits on that path,
//! each applied by the best mechanism available (netem, nftables, tbf, a UDP relay of ours, Toxiproxy)
//! and recorded. See docs/network-conditions.md.

pub mod conditions;
/// The crate's error type.
pub mod error;
pub mod netns;
pub mod relay;
pub mod toxiproxy;

pub use conditions::{apply, netem_available, nft_dropped, Applied, Backend, Conditions, Mechanism, Plan, Transport};
pub use error::{Error, Result};
pub use netns::{cleanup_stale, preflight, NetnsPair, Side};
pub use relay::{RelayConfig, RelayCounts, UdpRelay};
pub use toxiproxy::Toxiproxy;
