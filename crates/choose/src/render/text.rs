//! The text answer (stdout without `--json`, `--out DIR/choose.txt`).
use super::{first_place, rank_label, same_frames, ties, weights_line};
use crate::filter::Candidate;
use crate::fmt;
use crate::fold;
use crate::report::Report;

/// The text answer.
pub fn text(rep: &Report) -> String {
    let mut s = String::new();
    header(&mut s, rep);
    table(&mut s, rep);
    candidates(&mut s, rep);
    robustness(&mut s, rep);
    choice(&mut s, rep);
    s
}

/// The request, the requirement, the weights and the error model.
fn header(s: &mut String, rep: &Report) {
    let q = &rep.request;
    s.push_str(&format!(
        "lwcbench choose: board {} ({}, {} MHz), radio {}, one {} B reading every {} s, {} messages over the lifetime\n",
        rep.board.id,
        rep.board.core,
        rep.board.clock_mhz,
        rep.radio.name,
        q.payload_bytes,
        fmt::num(q.interval_s),
        fmt::num(q.messages_over_lifetime),
    ));
    s.push_str(&format!(
        "requirement: --require {}, claimed security ≥ {} bits, tag ≥ {} bits{}{}\n",
        q.require.name(),
        q.security_bits,
        q.tag_bits,
        if q.allow_variable_time { ", variable-time allowed (labelled)" } else { ", constant-time" },
        if q.allow_provisional { ", provisional allowed (labelled)" } else { "" }
    ));
    s.push_str(&format!(
        "weights: {} (score = weighted mean of value ÷ best, flash and RAM as 1 + share of the budget; 1.00 = best on every criterion)\n",
        weights_line(rep)
    ));
    s.push_str(&format!(
        "error model: emulated cycles ±{} % ({} timing model: {}); radio, flash and RAM exact under their models; overlapping score intervals are ties (rank n=)\n\n",
        rep.error_model.error_pct, rep.error_model.timing_model, rep.error_model.source
    ));
}

/// The ranked table: one row per passed candidate with figures and a score.
fn table(s: &mut String, rep: &Report) {
    s.push_str(&format!(
        "{:<5} {:<30} {:>17} {:>12} {:>10} {:>11} {:>7} {:>6} {:>6} {:>4}  {}\n",
        "rank",
        "cipher",
        "score [lo–hi]",
        "energy µJ",
        "battery d",
        "latency ms",
        "flash",
        "RAM",
        "frame",
        "tag",
        "status"
    ));
    for c in rep.ranked().filter(|c| !fold::is_folded(c, rep)) {
        let (Some(g), Some(sc)) = (c.figures.as_ref(), c.score) else { continue };
        let mut status = status_cell(c);
        let same = same_frames(c, rep);
        if !same.is_empty() {
            status = format!("{status}; {same}");
        }
        s.push_str(&format!(
            "{:<5} {:<30} {:>17} {:>12.1} {:>10.0} {:>11.2} {:>7} {:>6} {:>6} {:>4}  {}\n",
            rank_label(c, rep),
            c.id,
            format!("{:.3} [{:.3}–{:.3}]", sc.value, sc.lo, sc.hi),
            g.energy_uj.value,
            g.battery_days.value,
            g.latency_ms.value,
            g.flash_bytes,
            g.ram_bytes,
            g.frame_bytes,
            g.tag_bytes * 8,
            status
        ));
    }
}

/// The status column: the status, then the labels it does not already state.
fn status_cell(c: &Candidate) -> String {
    // The labels that restate the status (COMPOSITION, NOT A STANDARD, PROVISIONAL) are left out.
    let extra: Vec<&str> = c
        .labels
        .iter()
        .map(String::as_str)
        .filter(|l| !matches!(*l, "COMPOSITION" | "NOT A STANDARD" | "PROVISIONAL"))
        .collect();
    let mut status = c.status.name().to_string();
    if !extra.is_empty() {
        status = format!("{status}, {}", extra.join(", "));
    }
    status
}

/// Every candidate's verdict, then the sources of the chosen one's figures.
fn candidates(s: &mut String, rep: &Report) {
    s.push_str("\ncandidates:\n");
    let mut host_line = fold::host_only_line(rep);
    let mut elsewhere_line = fold::elsewhere_only_line(rep);
    for c in &rep.candidates {
        // One line for each group, where the first of it stands.
        if fold::host_only(c) {
            if let Some(l) = host_line.take() {
                s.push_str(&format!("  OUT  {l}\n"));
            }
            continue;
        }
        if fold::elsewhere_only(c, rep).is_some() {
            if let Some(l) = elsewhere_line.take() {
                s.push_str(&format!("  OUT  {l}\n"));
            }
            continue;
        }
        if let Some((to, why)) = fold::same_as(c, rep) {
            s.push_str(&format!("  SAME {:<30} = {}: {why}\n", c.id, to.id));
            continue;
        }
        let tag = if c.passed { "PASS" } else { "OUT " };
        s.push_str(&format!("  {tag} {:<30} {}\n", c.id, c.reasons.join("; ")));
    }
    if let Some(g) = rep.candidate(&rep.chosen).and_then(|c| c.figures.as_ref()) {
        s.push_str(&format!("\nsources ({}):\n", rep.chosen));
        for (k, v) in &g.sources {
            s.push_str(&format!("  {k}: {v}\n"));
        }
    }
}

/// What first place becomes on a one-step change of each setting.
fn robustness(s: &mut String, rep: &Report) {
    s.push_str("\nrobustness (one step either way):\n");
    s.push_str(&format!("  {:<10} {:<40} {:<34} {}\n", "change", "setting", "first place", "chosen still first?"));
    for r in &rep.robustness {
        s.push_str(&format!(
            "  {:<10} {:<40} {:<34} {}\n",
            r.change,
            r.setting,
            first_place(r),
            if r.same { "yes" } else { "NO: the decision flips" }
        ));
    }
}

/// The choice, its radio and lifetime, the firmware, the dataset and the deploy command.
fn choice(s: &mut String, rep: &Report) {
    let q = &rep.request;
    s.push_str(&format!(
        "\nchoice: {}{}{}\n",
        rep.chosen,
        if ties(rep).is_empty() {
            String::new()
        } else {
            format!(" (tied within the error model with {})", ties(rep).join(", "))
        },
        if rep.flips { "; the decision flips on a one-step change (table above)" } else { "" }
    ));
    if let Some(g) = rep.candidate(&rep.chosen).and_then(|c| c.figures.as_ref()) {
        s.push_str(&format!(
            "radio:    {} per report ({} on air); {}\n",
            lwcbench_data::physics::packets_label(g.packets),
            fmt::secs(g.air_time_ms / 1e3),
            g.receive
        ));
        if let Some(short) = &g.lifetime_shortfall {
            s.push_str(&format!("lifetime: {short}\n"));
        }
    }
    if let Some(d) = &rep.drain {
        s.push_str(&format!("drain:    {}\n", d.line));
    }
    if let Some(v) = &rep.framing_verdict {
        s.push_str(&format!("framing:  --framing auto: {}\n", v.line));
    }
    if let Some(e) = &rep.edhoc {
        s.push_str(&format!("edhoc:    {}\n", e.line(&rep.board.id, q.messages_over_lifetime)));
    }
    let h = &rep.handover;
    s.push_str(&format!("firmware: {}\n", h.firmware_build));
    if let Some(d) = &h.dataset {
        s.push_str(&format!(
            "dataset: {} ({} float32 channels = {} B per reading){}\n",
            d.file,
            d.channels,
            d.reading_bytes,
            if d.reading_bytes != q.payload_bytes { " (the payload rounded up to whole float32 readings)" } else { "" }
        ));
    }
    s.push_str(&format!("deploy:   {}\n", h.link_command_line));
    if let Some(c) = &h.carrier_security {
        s.push_str(&format!(
            "carrier:  {} already gives {} ({}), up to {}; its keys: {}\nend to end the link adds {} \
             (data/carrier-security.csv, {})\n",
            c.carrier,
            c.link_layer,
            if c.mic_bits == 0 { "no MIC".to_string() } else { format!("{}-bit MIC", c.mic_bits) },
            c.protects_to,
            c.keys_held_by,
            c.end_to_end_adds,
            c.status
        ));
    }
}
