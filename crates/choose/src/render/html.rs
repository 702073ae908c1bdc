//! The HTML page (`--out DIR/choose.html`): the page kit's skeleton, escaping and Pareto chart
//! (lwcbench-page); one page, inline SVG, no script, no network.
use lwcbench_page::{esc, page, pareto};

use super::{first_place, rank_label, same_frames, ties, weights_line};
use crate::fold;
use crate::report::Report;

/// The HTML page.
pub fn html(rep: &Report) -> String {
    let mut s = String::from("<h1>lwcbench choose</h1>\n");
    let text = super::text::text(rep);
    for line in text.lines().take(2) {
        s.push_str(&format!("<p class=\"l\">{}</p>\n", esc(line)));
    }
    s.push_str(&format!(
        "<p><b>Choice: {}</b>{}{}</p>\n",
        esc(&rep.chosen),
        if ties(rep).is_empty() {
            String::new()
        } else {
            esc(&format!(" — tied within the error model with {}", ties(rep).join(", ")))
        },
        if rep.flips { " — <b>the decision flips on a one-step change</b> (robustness below)" } else { "" }
    ));
    s.push_str(&format!(
        "<p>Weights: {}. Error model: emulated cycles ±{} % ({}); overlapping score intervals are ties.</p>\n",
        esc(&weights_line(rep)),
        rep.error_model.error_pct,
        esc(&rep.error_model.source)
    ));
    if let Some(d) = &rep.drain {
        s.push_str(&format!("<p>Drain: {}</p>\n", esc(&d.line)));
    }
    if let Some(v) = &rep.framing_verdict {
        s.push_str(&format!("<p>Framing (--framing auto): {}</p>\n", esc(&v.line)));
    }
    if let Some(e) = &rep.edhoc {
        s.push_str(&format!("<p>EDHOC: {}</p>\n", esc(&e.line(&rep.board.id, rep.request.messages_over_lifetime))));
    }
    // One point per construction: a folded candidate sits on its twin's point.
    let pts: Vec<(String, f64, f64)> = rep
        .ranked()
        .filter(|c| !fold::is_folded(c, rep))
        .filter_map(|c| c.figures.as_ref().map(|g| (c.id.clone(), g.flash_bytes as f64, g.energy_uj.value)))
        .collect();
    s.push_str("<h2>Energy per message against flash (passed candidates; filled = Pareto front)</h2>\n");
    s.push_str(&format!("<div class=\"fig\">{}</div>\n", pareto(&pts, "flash (bytes)", "energy per message (µJ)")));
    s.push_str("<h2>Ranking</h2>\n<table><tr><th>rank</th><th>cipher</th><th>score</th><th>lo</th><th>hi</th><th>energy µJ</th><th>crypto µJ</th><th>radio µJ</th><th>battery days</th><th>latency ms</th><th>flash B</th><th>RAM B</th><th>frame B</th><th>tag bits</th><th>status</th><th>labels</th><th>protection</th></tr>\n");
    for c in rep.ranked().filter(|c| !fold::is_folded(c, rep)) {
        let (Some(g), Some(sc)) = (c.figures.as_ref(), c.score) else { continue };
        let labels = [c.labels.join(", "), same_frames(c, rep)]
            .into_iter()
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        s.push_str(&format!(
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{:.1}</td><td>{:.2}</td><td>{:.1}</td><td>{:.0}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n",
            esc(&rank_label(c, rep)), esc(&c.id), sc.value, sc.lo, sc.hi, g.energy_uj.value, g.crypto_uj.value,
            g.radio_uj, g.battery_days.value, g.latency_ms.value, g.flash_bytes, g.ram_bytes, g.frame_bytes, g.tag_bytes * 8,
            esc(&format!("{} ({})", c.status.name(), c.status_document)), esc(&labels), esc(&c.protection)
        ));
    }
    s.push_str("</table>\n<h2>Every candidate</h2>\n<table><tr><th>cipher</th><th>verdict</th></tr>\n");
    let mut host_line = fold::host_only_line(rep);
    let mut elsewhere_line = fold::elsewhere_only_line(rep);
    for c in &rep.candidates {
        // One row for each group, where the first of it stands.
        let (class, id, verdict) = if fold::host_only(c) {
            match host_line.take() {
                Some(l) => ("out", "host-only builds".to_string(), l),
                None => continue,
            }
        } else if fold::elsewhere_only(c, rep).is_some() {
            match elsewhere_line.take() {
                Some(l) => ("out", "other boards' builds".to_string(), l),
                None => continue,
            }
        } else if let Some((to, why)) = fold::same_as(c, rep) {
            ("in", c.id.clone(), format!("same as {}: {why}", to.id))
        } else {
            (if c.passed { "in" } else { "out" }, c.id.clone(), c.reasons.join("; "))
        };
        s.push_str(&format!(
            "<tr class=\"{class}\"><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n",
            esc(&id),
            esc(&verdict)
        ));
    }
    s.push_str("</table>\n<h2>Sources of the chosen cipher's figures</h2>\n<ul>\n");
    if let Some(g) = rep.candidate(&rep.chosen).and_then(|c| c.figures.as_ref()) {
        for (k, v) in &g.sources {
            s.push_str(&format!("<li><b>{}</b>: {}</li>\n", esc(k), esc(v)));
        }
    }
    s.push_str("</ul>\n<h2>Robustness: one step either way</h2>\n<table><tr><th>change</th><th>setting</th><th>first place</th><th>chosen still first?</th></tr>\n");
    for r in &rep.robustness {
        s.push_str(&format!(
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n",
            esc(&r.change),
            esc(&r.setting),
            esc(&first_place(r)),
            if r.same { "yes" } else { "<b>no: flips</b>" }
        ));
    }
    s.push_str(&format!(
        "</table>\n<h2>Deploy</h2>\n<p>Firmware: <code>{}</code></p>\n<p>Link: <code>{}</code></p>\n",
        esc(&rep.handover.firmware_build),
        esc(&rep.handover.link_command_line)
    ));
    page(&format!("lwcbench choose: {}", rep.chosen), "", &s)
}
