//! Report sections of the lightweight-study (WSM radar charts and the ranking table) and the
//! ics-latency preset (latency table with % of budget). Both read the study files of the run
//! directory, so a run without them gets no section. Charts and escaping: lwcbench_engine::html.
use std::fmt::Write;
use std::path::Path;

use lwcbench_engine::html::{col, esc, num, radar, read_table};
use lwcbench_engine::studies::{ics, lightweight_rank};
use lwcbench_engine::text::fmt_ns;

/// The lightweight-study section: WSM radar, criterion radar and the ranking table.
pub fn lightweight_section(dir: &Path, fig: &mut usize) -> String {
    let Some((hd, rows)) = read_table(&dir.join(lightweight_rank::SCORES_FILE)) else { return String::new() };
    let (Some(ci), Some(ii)) = (col(&hd, "cipher"), col(&hd, "implementation")) else { return String::new() };
    let weightings: Vec<String> = hd.iter().filter_map(|h| h.strip_prefix("wsm_").map(str::to_string)).collect();
    let names: Vec<String> = rows.iter().map(|r| r[ci].clone()).collect();
    let mut h = String::from("<h2 id=\"lightweight\">Lightweight ciphers: WSM ranking</h2><p>Weighted scoring model over four criteria normalised by their best value (benefit x / max, cost min / x): modelled energy per byte at 16 B, encrypt throughput at the largest size, key-schedule time, memory per operation. Energy is <b>modelled</b> (time × device power), not measured. Details: docs/rankings.md; numbers: lightweight-scores.csv, lightweight-metrics.csv.</p>");
    let series: Vec<(String, Vec<f64>)> = weightings
        .iter()
        .filter_map(|w| col(&hd, &format!("wsm_{w}")).map(|c| (w.clone(), rows.iter().map(|r| num(&r[c])).collect())))
        .collect();
    *fig += 1;
    let _ = write!(
        h,
        "<figure class=\"fig\">{}<figcaption>Figure {fig}. WSM score per cipher (1 = best on every criterion), one polygon per weighting.</figcaption></figure>",
        radar(&names, &series, "WSM score per cipher")
    );
    let crit = ["energy_per_byte", "throughput", "key_schedule", "memory"];
    let cs: Vec<Option<usize>> = crit.iter().map(|c| col(&hd, &format!("score_{c}"))).collect();
    if cs.iter().all(Option::is_some) {
        let per: Vec<(String, Vec<f64>)> =
            rows.iter().map(|r| (r[ci].clone(), cs.iter().map(|c| num(&r[c.unwrap()])).collect())).collect();
        *fig += 1;
        let axes: Vec<String> =
            ["energy/byte", "throughput", "key schedule", "memory"].iter().map(|s| s.to_string()).collect();
        let _ = write!(
            h,
            "<figure class=\"fig\">{}<figcaption>Figure {fig}. Normalised criterion scores per cipher (outer ring = best of the eight).</figcaption></figure>",
            radar(&axes, &per, "criterion scores")
        );
    }
    h += "<table><tr><th class=\"l\">cipher</th><th class=\"l\">implementation</th><th>energy/byte (modelled)</th><th>throughput MB/s</th><th>key schedule</th><th>memory B</th>";
    for w in &weightings {
        let _ = write!(h, "<th>WSM {0}</th><th>rank {0}</th>", esc(w));
    }
    h += "</tr>";
    for r in &rows {
        let g = |n: &str| col(&hd, n).map(|c| r[c].clone()).unwrap_or_default();
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.3e} J</td><td>{:.1}</td><td>{}</td><td>{}</td>",
            esc(&r[ci]),
            esc(&r[ii]),
            num(&g("energy_per_byte_j_modelled")),
            num(&g("throughput_mb_s")),
            fmt_ns(num(&g("key_schedule_ns"))),
            esc(&g("memory_bytes"))
        );
        for w in &weightings {
            let _ = write!(h, "<td>{:.3}</td><td>{}</td>", num(&g(&format!("wsm_{w}"))), esc(&g(&format!("rank_{w}"))));
        }
        h += "</tr>";
    }
    h + "</table>"
}

/// The ics-latency section: one row per AEAD × message with % of each budget.
pub fn ics_section(dir: &Path, governor: &str) -> String {
    let Some((hd, rows)) = read_table(&dir.join(ics::LATENCY_FILE)) else { return String::new() };
    // Only the max columns (pct_of_*), not the p99.9 ones (p99_9_pct_of_*).
    let budgets: Vec<(usize, String)> =
        hd.iter().enumerate().filter_map(|(i, h)| h.strip_prefix("pct_of_").map(|b| (i, b.to_string()))).collect();
    let mut h = String::from("<h2 id=\"ics\">ICS latency budget</h2>");
    if governor != "performance" {
        let _ = write!(h, "<p class=\"note\"><b>Warning:</b> CPU frequency governor is '{}', not 'performance': frequency scaling can inflate the worst case.</p>", esc(governor));
    }
    h += "<p>Seal + open of one message per sample (batch 1, fresh counter nonce); percentiles nearest-rank; jitter = p99 − p1; % of budget = max / budget. Each time includes one clock start/stop (overhead in the Environment table). Budgets and sources: ics-budgets.csv; message sizes and sources: ics-messages.csv.</p>";
    h += "<table><tr><th class=\"l\">cipher</th><th class=\"l\">protocol</th><th class=\"l\">message</th><th>bytes</th><th>n</th><th>median</th><th>p99</th><th>p99.9</th><th>max</th><th>jitter</th>";
    for (_, b) in &budgets {
        let _ = write!(h, "<th>max % of {}</th>", esc(b));
    }
    h += "</tr>";
    for r in &rows {
        let g = |n: &str| col(&hd, n).map(|c| r[c].clone()).unwrap_or_default();
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}/{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            esc(&g("cipher")),
            esc(&g("implementation")),
            esc(&g("protocol")),
            esc(&g("message")),
            esc(&g("bytes")),
            esc(&g("n")),
            fmt_ns(num(&g("median_ns"))),
            fmt_ns(num(&g("p99_ns"))),
            fmt_ns(num(&g("p99_9_ns"))),
            fmt_ns(num(&g("max_ns"))),
            fmt_ns(num(&g("jitter_p99_p1_ns")))
        );
        for (i, _) in &budgets {
            let _ = write!(h, "<td>{:.3} %</td>", num(&r[*i]));
        }
        h += "</tr>";
    }
    h + "</table>"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_read_the_study_files() {
        let dir = std::env::temp_dir().join(format!("lwcbench-rank-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(lightweight_section(&dir, &mut 0), "", "no file, no section");
        std::fs::write(
            dir.join("lightweight-scores.csv"),
            "cipher,implementation,energy_per_byte_j_modelled,throughput_mb_s,key_schedule_ns,memory_bytes,score_energy_per_byte,score_throughput,score_key_schedule,score_memory,wsm_battery,rank_battery\nA,x,1e-9,100,10,64,1,1,1,1,1,1\nB,y,2e-9,50,20,128,0.5,0.5,0.5,0.5,0.5,2\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("ics-latency.csv"),
            "cipher,implementation,protocol,message,bytes,n,min_ns,p1_ns,median_ns,p99_ns,p99_9_ns,max_ns,jitter_p99_p1_ns,range_ns,clock_overhead_ns,governor,pct_of_G,p99_9_pct_of_G\nA,x,P,\"m, 1\",12,10,1,1,2,3,4,30000,2,29999,20,\"powersave\",1.0,0.5\n",
        )
        .unwrap();
        let mut fig = 0;
        let lw = lightweight_section(&dir, &mut fig);
        assert_eq!(fig, 2, "two radar figures");
        assert!(lw.contains("<th>WSM battery</th>") && lw.contains("<td>0.500</td><td>2</td>"), "{lw}");
        let ics = ics_section(&dir, "powersave");
        assert!(
            ics.contains("Warning")
                && ics.contains("m, 1")
                && ics.contains("<td>1.000 %</td>")
                && !ics.contains("p99_9_pct"),
            "{ics}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
