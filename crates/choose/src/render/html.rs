//! The HTML page (`--out DIR/choose.html`): one page, inline SVG, no script, no network.
use super::{first_place, rank_label, weights_line};
use crate::report::Report;

fn esc(s: &str) -> String {
    lwcbench_engine::html::esc(s)
}

/// Pareto chart (energy per message against flash) of the passed candidates; the front (no
/// other candidate has less energy and less flash) is drawn filled.
pub fn pareto_svg(points: &[(String, f64, f64)]) -> String {
    let (w, h, l, r, t, b) = (720.0, 420.0, 80.0, 20.0, 20.0, 50.0);
    let xmax = points.iter().map(|p| p.1).fold(1.0, f64::max) * 1.1;
    let ymin = points.iter().map(|p| p.2).fold(f64::INFINITY, f64::min);
    let ymax = points.iter().map(|p| p.2).fold(0.0, f64::max);
    let (y0, y1) = if ymax > ymin {
        (ymin - (ymax - ymin) * 0.1, ymax + (ymax - ymin) * 0.1)
    } else {
        (ymin * 0.9, ymin * 1.1 + 1e-9)
    };
    let sx = |x: f64| l + x / xmax * (w - l - r);
    let sy = |y: f64| h - b - (y - y0) / (y1 - y0) * (h - t - b);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"energy per message against flash\">\n\
<line x1=\"{l}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/><line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{}\" stroke=\"#333\"/>\n\
<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">flash (bytes)</text>\n\
<text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">energy per message (µJ)</text>\n",
        h - b,
        w - r,
        h - b,
        h - b,
        (w + l) / 2.0,
        h - 10.0,
        (h - b + t) / 2.0,
        (h - b + t) / 2.0
    );
    for i in 0..=4 {
        let xv = xmax * i as f64 / 4.0;
        let yv = y0 + (y1 - y0) * i as f64 / 4.0;
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{:.0}</text><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">{:.1}</text>\n",
            sx(xv), h - b + 16.0, xv, l - 4.0, sy(yv) + 4.0, yv
        ));
    }
    for (i, (name, x, y)) in points.iter().enumerate() {
        let front = !points.iter().any(|(_, x2, y2)| x2 <= x && y2 <= y && (x2 < x || y2 < y));
        let fill = if front { "#1f77b4" } else { "none" };
        s.push_str(&format!(
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{fill}\" stroke=\"#1f77b4\"><title>{}: {:.0} B, {:.2} µJ{}</title></circle>\
<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text>\n",
            sx(*x),
            sy(*y),
            esc(name),
            x,
            y,
            if front { " (Pareto front)" } else { "" },
            sx(*x) + 7.0,
            sy(*y) - 6.0 - (i % 3) as f64 * 9.0,
            esc(name)
        ));
    }
    s.push_str("</svg>\n");
    s
}

/// The HTML page.
pub fn html(rep: &Report) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>lwcbench choose</title>\n\
<style>body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px}td.n{text-align:right}.out{color:#777}</style></head><body>\n",
    );
    let text = super::text::text(rep);
    for line in text.lines().take(2) {
        s.push_str(&format!("<p>{}</p>\n", esc(line)));
    }
    s.insert_str(s.find("<p>").unwrap_or(s.len()), "<h1>lwcbench choose</h1>\n");
    s.push_str(&format!(
        "<p><b>Choice: {}</b>{}{}</p>\n",
        esc(&rep.chosen),
        if rep.ties_with_chosen.is_empty() {
            String::new()
        } else {
            esc(&format!(" — tied within the error model with {}", rep.ties_with_chosen.join(", ")))
        },
        if rep.flips { " — <b>the decision flips on a one-step change</b> (robustness below)" } else { "" }
    ));
    s.push_str(&format!(
        "<p>Weights: {}. Error model: emulated cycles ±{} % ({}); overlapping score intervals are ties.</p>\n",
        esc(&weights_line(rep)),
        rep.error_model.error_pct,
        esc(&rep.error_model.source)
    ));
    let pts: Vec<(String, f64, f64)> = rep
        .ranked()
        .filter_map(|c| c.figures.as_ref().map(|g| (c.id.clone(), g.flash_bytes as f64, g.energy_uj.value)))
        .collect();
    s.push_str("<h2>Energy per message against flash (passed candidates; filled = Pareto front)</h2>\n");
    s.push_str(&pareto_svg(&pts));
    s.push_str("<h2>Ranking</h2>\n<table><tr><th>rank</th><th>cipher</th><th>score</th><th>lo</th><th>hi</th><th>energy µJ</th><th>crypto µJ</th><th>radio µJ</th><th>battery days</th><th>latency ms</th><th>flash B</th><th>RAM B</th><th>frame B</th><th>tag bits</th><th>status</th><th>labels</th><th>protection</th></tr>\n");
    for c in rep.ranked() {
        let (Some(g), Some(sc)) = (c.figures.as_ref(), c.score) else { continue };
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td class=n>{:.3}</td><td class=n>{:.3}</td><td class=n>{:.3}</td><td class=n>{:.1}</td><td class=n>{:.2}</td><td class=n>{:.1}</td><td class=n>{:.0}</td><td class=n>{:.2}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&rank_label(c, &rep.candidates)), esc(&c.id), sc.value, sc.lo, sc.hi, g.energy_uj.value, g.crypto_uj.value,
            g.radio_uj, g.battery_days.value, g.latency_ms.value, g.flash_bytes, g.ram_bytes, g.frame_bytes, g.tag_bytes * 8,
            esc(&format!("{} ({})", c.status.name(), c.status_document)), esc(&c.labels.join(", ")), esc(&c.protection)
        ));
    }
    s.push_str("</table>\n<h2>Every candidate</h2>\n<table><tr><th>cipher</th><th>verdict</th></tr>\n");
    for c in &rep.candidates {
        s.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{}</td></tr>\n",
            if c.passed { "in" } else { "out" },
            esc(&c.id),
            esc(&c.reasons.join("; "))
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
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&r.change),
            esc(&r.setting),
            esc(&first_place(r)),
            if r.same { "yes" } else { "<b>no: flips</b>" }
        ));
    }
    s.push_str(&format!(
        "</table>\n<h2>Deploy</h2>\n<p>Firmware: <code>{}</code></p>\n<p>Link: <code>{}</code></p>\n</body></html>\n",
        esc(&rep.handover.firmware_build),
        esc(&rep.handover.link_command_line)
    ));
    s
}
