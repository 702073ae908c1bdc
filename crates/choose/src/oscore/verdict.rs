//! `--framing auto`'s verdict: which framing ranks first, and why.
use serde::Serialize;

/// Which framing ranks first under `--framing auto`, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FramingVerdict {
    /// `link`, `oscore` or `tie`.
    pub winner: String,
    /// The sentence the text answer prints.
    pub line: String,
}

/// The verdict of `--framing auto` over the ranked candidates.
pub fn auto_verdict(ranked: &[&crate::filter::Candidate]) -> FramingVerdict {
    let is_oscore = |c: &&&crate::filter::Candidate| c.id.starts_with("OSCORE ");
    let best_o = ranked.iter().find(is_oscore);
    let best_l = ranked.iter().find(|c| !is_oscore(c));
    let show = |c: &crate::filter::Candidate| match (&c.figures, c.rank, c.score) {
        (Some(g), Some(r), Some(s)) => format!(
            "{} (rank {r}, score {:.3}: {} B in {}, {:.1} µJ, {:.1} ms)",
            c.id,
            s.value,
            g.frame_bytes,
            lwcbench_data::physics::packets_label(g.packets),
            g.energy_uj.value,
            g.latency_ms.value
        ),
        _ => c.id.clone(),
    };
    match (best_o, best_l) {
        (None, None) => FramingVerdict { winner: "none".into(), line: "no candidate of either framing passes".into() },
        (Some(o), None) => FramingVerdict {
            winner: "oscore".into(),
            line: format!("OSCORE wins: {}; no link-frame candidate passes", show(o)),
        },
        (None, Some(l)) => FramingVerdict {
            winner: "link".into(),
            line: format!("the link frame wins: {}; no OSCORE candidate passes", show(l)),
        },
        (Some(o), Some(l)) if o.rank == l.rank => FramingVerdict {
            winner: "tie".into(),
            line: format!("a tie within the error model: OSCORE {} and the link frame {}", show(o), show(l)),
        },
        (Some(o), Some(l)) => {
            let (w, win, lose) = if o.rank < l.rank { ("oscore", o, l) } else { ("link", l, o) };
            let name = if w == "oscore" { "OSCORE" } else { "the link frame" };
            FramingVerdict { winner: w.into(), line: format!("{name} wins: {} against {}", show(win), show(lose)) }
        }
    }
}
