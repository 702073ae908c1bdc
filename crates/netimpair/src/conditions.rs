//! Network conditions on the veth path and the record of which mechanism applied each one.
//!
//! Kernel mechanisms are used where they exist: `netem` for delay, jitter, loss, reordering and
//! duplication (detected, since many kernels and containers lack it), `tbf` for rate limits, and
//! nftables (`numgen random mod 1000 < N drop`) for loss where netem is missing. What the kernel
//! cannot do here is left to user space: [`crate::relay::UdpRelay`] for UDP and Toxiproxy
//! ([`crate::toxiproxy`]) for TCP. Every condition ends up in exactly one [`Applied`] record.

use crate::error::{Error, Result};
use crate::netns::{NetnsPair, Side, VETH};
use serde::{Deserialize, Serialize};

/// What the path should do to traffic in one direction. Zero / None means "not impaired".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    /// Share of packets dropped, in percent (0.1 % resolution).
    pub loss_pct: f64,
    /// Added one-way delay.
    pub delay_ms: u32,
    /// Uniform jitter ± this around the delay; must not exceed the delay.
    pub jitter_ms: u32,
    /// Share of packets delivered out of order, in percent.
    pub reorder_pct: f64,
    /// Share of packets delivered twice, in percent.
    pub duplicate_pct: f64,
    /// Rate limit in kbit/s (1 kbit = 1000 bit).
    pub rate_kbit: Option<u32>,
}

impl Conditions {
    /// Refuse percentages outside 0..=100, jitter above the delay and a zero rate.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [("loss", self.loss_pct), ("reorder", self.reorder_pct), ("duplicate", self.duplicate_pct)] {
            if !(0.0..=100.0).contains(&v) {
                return Err(Error::Invalid(format!("{name} {v} % is outside 0..=100")));
            }
        }
        if self.jitter_ms > self.delay_ms {
            return Err(Error::Invalid(format!(
                "jitter {} ms exceeds the delay {} ms (a packet cannot leave before it arrived)",
                self.jitter_ms, self.delay_ms
            )));
        }
        if self.rate_kbit == Some(0) {
            return Err(Error::Invalid("rate 0 kbit/s would block the path: give a positive rate".into()));
        }
        Ok(())
    }

    /// True when nothing is impaired.
    pub fn is_none(&self) -> bool {
        *self == Conditions::default()
    }
}

/// The mechanism that applied a condition (as written to run.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mechanism {
    /// The kernel's netem qdisc.
    Netem,
    /// An nftables random-drop rule.
    Nftables,
    /// The kernel's token-bucket filter qdisc.
    Tbf,
    /// This crate's UDP relay.
    Relay,
    /// A Toxiproxy proxy (TCP).
    Toxiproxy,
}

/// One applied condition: what, how much, by which mechanism, where, and the exact rule or setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Applied {
    /// The condition: "loss", "delay", "jitter", "reorder", "duplicate" or "rate".
    pub condition: &'static str,
    /// Its amount with unit, as shown.
    pub value: String,
    /// What applied it.
    pub mechanism: Mechanism,
    /// Namespace side whose egress (tc) or ingress (nftables) carries the rule, or where the relay/proxy runs.
    pub side: Side,
    /// The exact rule or setting (command line or relay/proxy parameters).
    pub detail: String,
}

/// The link transport the conditions apply to; it decides the user-space fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// UDP: the relay.
    Udp,
    /// TCP: Toxiproxy.
    Tcp,
}

/// Auto uses netem where the kernel has it; Fallback always uses nftables/tbf/relay/Toxiproxy (so the
/// fallbacks can be tested and compared on kernels that do have netem).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// netem where the kernel has it.
    Auto,
    /// The fallbacks even where netem exists.
    Fallback,
}

/// Delay, jitter, reordering and duplication that no kernel mechanism applied: the caller must put a
/// [`crate::relay::UdpRelay`] (UDP) or Toxiproxy (TCP, delay and jitter only) on the path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserSpace {
    /// Added one-way delay.
    pub delay_ms: u32,
    /// Uniform jitter ± this around the delay.
    pub jitter_ms: u32,
    /// Share of packets delivered out of order, in percent.
    pub reorder_pct: f64,
    /// Share of packets delivered twice, in percent.
    pub duplicate_pct: f64,
}

impl UserSpace {
    /// True when user space has nothing to do.
    pub fn is_none(&self) -> bool {
        *self == UserSpace::default()
    }
}

/// How a set of conditions is applied: the kernel rules, and what is left to user space.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// One record per condition, kernel and user-space mechanisms alike.
    pub applied: Vec<Applied>,
    /// What the caller's relay or proxy must do.
    pub user_space: UserSpace,
}

/// Whether the kernel offers the netem qdisc, probed on the loopback of the pair's namespace A
/// (added and removed again; the namespace is ours, so nothing else is affected).
pub fn netem_available(pair: &NetnsPair) -> Result<bool> {
    match pair.run_in(Side::A, "tc", &["qdisc", "add", "dev", "lo", "root", "netem", "delay", "0ms"]) {
        Ok(_) => {
            pair.run_in(Side::A, "tc", &["qdisc", "del", "dev", "lo", "root"])?;
            Ok(true)
        }
        // "Specified qdisc kind is unknown." (module missing) or the kernel refusing the kind.
        Err(Error::Failed(m)) if m.contains("unknown") || m.contains("not supported") => Ok(false),
        Err(e) => Err(e),
    }
}

/// The `tc` arguments of the netem qdisc for `c` (without the rate, which tbf applies below it) and
/// one record per condition. Syntax as in tc-netem(8): `netem delay D [J] loss P% duplicate P% reorder P%`.
fn netem_args(c: &Conditions, from: Side) -> Result<(Vec<String>, Vec<Applied>)> {
    let mut applied = Vec::new();
    if c.reorder_pct > 0.0 && c.delay_ms == 0 {
        return Err(Error::Invalid(
            "reorder needs a delay > 0 with netem (it reorders by sending some packets without the delay)".into(),
        ));
    }
    let mut args: Vec<String> = ["qdisc", "add", "dev", VETH, "root", "handle", "1:", "netem"].map(String::from).into();
    let mut push = |cond: &'static str, value: String, words: Vec<String>| {
        args.extend(words);
        applied.push(Applied {
            condition: cond,
            value,
            mechanism: Mechanism::Netem,
            side: from,
            detail: String::new(),
        });
    };
    if c.delay_ms > 0 {
        let mut w = vec!["delay".to_string(), format!("{}ms", c.delay_ms)];
        if c.jitter_ms > 0 {
            w.push(format!("{}ms", c.jitter_ms));
        }
        push("delay", format!("{} ms", c.delay_ms), w);
        if c.jitter_ms > 0 {
            push("jitter", format!("{} ms", c.jitter_ms), vec![]);
        }
    }
    if c.loss_pct > 0.0 {
        push("loss", format!("{} %", c.loss_pct), vec!["loss".into(), format!("{}%", c.loss_pct)]);
    }
    if c.duplicate_pct > 0.0 {
        push("duplicate", format!("{} %", c.duplicate_pct), vec!["duplicate".into(), format!("{}%", c.duplicate_pct)]);
    }
    if c.reorder_pct > 0.0 {
        push("reorder", format!("{} %", c.reorder_pct), vec!["reorder".into(), format!("{}%", c.reorder_pct)]);
    }
    let detail = format!("tc {}", args.join(" "));
    for a in applied.iter_mut() {
        a.detail = detail.clone();
    }
    Ok((args, applied))
}

/// nftables names used for loss (inside the receiving namespace only).
pub const NFT_TABLE: &str = "lwcbench";
/// The chain in [`NFT_TABLE`] that holds the drop rule.
pub const NFT_CHAIN: &str = "loss";

/// Converts a percentage to the per-mille threshold of the nftables rule (0.1 % resolution).
pub fn loss_permille(pct: f64) -> u32 {
    (pct * 10.0).round() as u32
}

/// tbf burst for a rate: 10 ms worth of bytes, at least 3000 bytes (two full-size frames) so a
/// single 1500-byte frame always fits the bucket.
pub fn tbf_burst_bytes(rate_kbit: u32) -> u32 {
    (u64::from(rate_kbit) * 1000 / 8 / 100).max(3000) as u32
}

/// Applies the kernel-side conditions for traffic sent from `from` to the other side and returns what
/// applied them plus what is left for user space. Rules die with the namespaces.
pub fn apply(pair: &NetnsPair, from: Side, c: &Conditions, transport: Transport, backend: Backend) -> Result<Plan> {
    c.validate()?;
    let to = from.other();
    let mut applied = Vec::new();
    let mut user_space = UserSpace::default();
    let needs_netem = c.loss_pct > 0.0 || c.delay_ms > 0 || c.reorder_pct > 0.0 || c.duplicate_pct > 0.0;
    let netem = needs_netem && backend == Backend::Auto && netem_available(pair)?;
    let mut tbf_parent: Vec<String> = vec!["root".into()];

    if netem {
        let (args, records) = netem_args(c, from)?;
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        pair.run_in(from, "tc", &argv)?;
        applied.extend(records);
        // tbf goes below netem (netem's single class 1:1), as the netem documentation does it.
        tbf_parent = vec!["parent".into(), "1:1".into(), "handle".into(), "10:".into()];
    } else {
        if c.loss_pct > 0.0 {
            applied.push(apply_nft_loss(pair, to, c.loss_pct)?);
        }
        user_space = UserSpace {
            delay_ms: c.delay_ms,
            jitter_ms: c.jitter_ms,
            reorder_pct: c.reorder_pct,
            duplicate_pct: c.duplicate_pct,
        };
        if transport == Transport::Tcp && (c.reorder_pct > 0.0 || c.duplicate_pct > 0.0) {
            return Err(Error::Invalid(
                "reorder/duplicate over TCP need the netem qdisc, which this kernel lacks (a TCP proxy sees a byte \
                 stream, not packets): drop them or use the UDP transport"
                    .into(),
            ));
        }
    }

    if let Some(rate) = c.rate_kbit {
        let burst = tbf_burst_bytes(rate);
        let mut args: Vec<String> = ["qdisc", "add", "dev", VETH].map(String::from).into();
        args.extend(tbf_parent);
        args.extend(
            ["tbf", "rate", &format!("{rate}kbit"), "burst", &burst.to_string(), "latency", "400ms"].map(String::from),
        );
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        pair.run_in(from, "tc", &argv)?;
        applied.push(Applied {
            condition: "rate",
            value: format!("{rate} kbit/s"),
            mechanism: Mechanism::Tbf,
            side: from,
            detail: format!("tc {}", args.join(" ")),
        });
    }
    Ok(Plan { applied, user_space })
}

/// Drops `pct` % of the packets arriving on the veth of `side` (nftables input hook: the sender sees
/// no error, as with loss on the wire). The rule counts what it dropped ([`nft_dropped`]).
fn apply_nft_loss(pair: &NetnsPair, side: Side, pct: f64) -> Result<Applied> {
    let n = loss_permille(pct);
    let chain = "{ type filter hook input priority 0; policy accept; }";
    let rule = format!("iifname \"{VETH}\" numgen random mod 1000 < {n} counter drop");
    pair.run_in(side, "nft", &["add", "table", "inet", NFT_TABLE])?;
    pair.run_in(side, "nft", &["add", "chain", "inet", NFT_TABLE, NFT_CHAIN, chain])?;
    pair.run_in(side, "nft", &["add", "rule", "inet", NFT_TABLE, NFT_CHAIN, &rule])?;
    Ok(Applied {
        condition: "loss",
        value: format!("{pct} %"),
        mechanism: Mechanism::Nftables,
        side,
        detail: format!("nft add rule inet {NFT_TABLE} {NFT_CHAIN} {rule}"),
    })
}

/// Packets the nftables loss rule in `side` has dropped so far (0 if no loss rule was applied there).
pub fn nft_dropped(pair: &NetnsPair, side: Side) -> Result<u64> {
    let out = match pair.run_in(side, "nft", &["-j", "list", "chain", "inet", NFT_TABLE, NFT_CHAIN]) {
        Ok(o) => o,
        Err(Error::Failed(m)) if m.contains("No such file or directory") => return Ok(0),
        Err(e) => return Err(e),
    };
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| Error::Failed(format!("cannot parse `nft -j list chain` output: {e}")))?;
    let mut total = 0u64;
    for item in v["nftables"].as_array().into_iter().flatten() {
        for expr in item["rule"]["expr"].as_array().into_iter().flatten() {
            if let Some(p) = expr["counter"]["packets"].as_u64() {
                total += p;
            }
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_bad_value() {
        let bad = Conditions { loss_pct: 101.0, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().to_string(), "loss 101 % is outside 0..=100");
        let bad = Conditions { delay_ms: 10, jitter_ms: 11, ..Default::default() };
        assert!(bad.validate().unwrap_err().to_string().starts_with("jitter 11 ms exceeds the delay 10 ms"));
        assert!(Conditions { rate_kbit: Some(0), ..Default::default() }.validate().is_err());
        assert!(Conditions { loss_pct: f64::NAN, ..Default::default() }.validate().is_err());
        assert!(Conditions { loss_pct: 5.0, delay_ms: 20, jitter_ms: 20, ..Default::default() }.validate().is_ok());
    }

    #[test]
    fn netem_command_by_hand() {
        let c = Conditions {
            delay_ms: 20,
            jitter_ms: 5,
            loss_pct: 1.0,
            duplicate_pct: 2.0,
            reorder_pct: 3.0,
            ..Default::default()
        };
        let (args, recs) = netem_args(&c, Side::A).unwrap();
        // Written by hand from tc-netem(8).
        assert_eq!(
            args.join(" "),
            "qdisc add dev lwcb0 root handle 1: netem delay 20ms 5ms loss 1% duplicate 2% reorder 3%"
        );
        let conds: Vec<_> = recs.iter().map(|r| r.condition).collect();
        assert_eq!(conds, ["delay", "jitter", "loss", "duplicate", "reorder"]);
        assert!(recs.iter().all(|r| r.mechanism == Mechanism::Netem && r.detail == format!("tc {}", args.join(" "))));
        let no_delay = Conditions { reorder_pct: 3.0, ..Default::default() };
        assert!(matches!(netem_args(&no_delay, Side::A), Err(Error::Invalid(_))));
    }

    #[test]
    fn thresholds_and_burst_by_hand() {
        assert_eq!(loss_permille(50.0), 500);
        assert_eq!(loss_permille(0.1), 1);
        assert_eq!(loss_permille(12.34), 123);
        // 10 Mbit/s: 10 ms = 12 500 bytes; 1 Mbit/s: 1250 bytes, raised to the 3000-byte floor.
        assert_eq!(tbf_burst_bytes(10_000), 12_500);
        assert_eq!(tbf_burst_bytes(1_000), 3_000);
    }

    #[test]
    fn applied_record_serialises_for_run_json() {
        let a = Applied {
            condition: "loss",
            value: "5 %".into(),
            mechanism: Mechanism::Nftables,
            side: Side::B,
            detail: "rule".into(),
        };
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"condition":"loss","value":"5 %","mechanism":"nftables","side":"b","detail":"rule"}"#
        );
    }
}
