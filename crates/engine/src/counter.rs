//! The deterministic counter (`lwcbench run --counter instructions`): instructions per
//! operation on the host, counted by valgrind's callgrind, so two runs of the same build give
//! identical figures on any machine, loaded or not.
//!
//! The run re-executes its own command line under
//! `valgrind --tool=callgrind --collect-atstart=no` with [`CHILD_ENV`] set. The child builds
//! the same groups and, for each, runs [`WARM_OPS`] untimed operations and then [`OPS`]
//! operations with collection switched on by callgrind client requests (the documented
//! magic instruction sequence, see valgrind.h), dumping the counts after each group. The
//! parent reads the dumps and writes `instructions.csv`. Random key/IV variants draw their
//! key/IV from the fixed seed [`COUNT_SEED`] (not the run's seed), so counts repeat exactly.
use std::path::Path;
use std::process::Command;

use crate::plan::Group;
use crate::runner::{count_ops, Config};

/// Set (to the dump directory) in the child process that runs under callgrind.
pub const CHILD_ENV: &str = "LWCBENCH_COUNT_CHILD";
/// Untimed operations before counting (one-time costs: feature detection, first touches).
pub const WARM_OPS: u64 = 4;
/// Counted operations per group of small operations.
pub const OPS: u64 = 16;
/// Counted bytes per group beyond which fewer operations are counted (at least 2 after 1
/// untimed one): the count of one operation is exact, so more operations add only time — a
/// 1.4 MB video frame through the bit-serial DRACO reference is ~10^9 instructions, minutes
/// under callgrind.
pub const BYTES_BUDGET: u64 = 256 * 1024;

/// (untimed, counted) operations for a group whose operation handles `size_bits` bits. Both
/// sides (the callgrind child and the parent that divides) use this, so the figures stay exact
/// and identical between runs.
pub fn ops_for(size_bits: usize) -> (u64, u64) {
    let bytes = (size_bits as u64).div_ceil(8);
    if bytes == 0 || bytes * OPS <= BYTES_BUDGET {
        return (WARM_OPS, OPS);
    }
    (1, (BYTES_BUDGET / bytes).clamp(2, OPS))
}
/// Seed of the random key/IV draws while counting.
pub const COUNT_SEED: u64 = 1;

/// Valgrind client requests (x86-64 only; elsewhere the counter is refused up front).
#[cfg(target_arch = "x86_64")]
mod vg {
    /// Callgrind's request codes: VG_USERREQ_TOOL_BASE('C','T') + 0…5 (callgrind.h).
    const CT_BASE: u64 = ((b'C' as u64) << 24) | ((b'T' as u64) << 16);
    pub const TOGGLE_COLLECT: u64 = CT_BASE + 2;
    pub const DUMP_STATS_AT: u64 = CT_BASE + 3;
    pub const RUNNING_ON_VALGRIND: u64 = 0x1001;

    /// The client-request sequence: rdi rotated by 3+13+61+51 = 128 bits (a no-op on real
    /// hardware), then `xchg rbx, rbx`; valgrind reads the request block at rax and returns
    /// its answer in rdx. Natively, rdx keeps `default`.
    pub fn request(default: u64, code: u64, arg1: u64) -> u64 {
        let block: [u64; 6] = [code, arg1, 0, 0, 0, 0];
        let mut result = default;
        // SAFETY: the sequence only rotates rdi (restored by the full rotation, declared
        // clobbered anyway) and exchanges rbx with itself; valgrind reads `block`, which
        // lives across the asm block.
        unsafe {
            std::arch::asm!(
                "rol rdi, 3", "rol rdi, 13", "rol rdi, 61", "rol rdi, 51", "xchg rbx, rbx",
                inout("rdx") result,
                in("rax") block.as_ptr(),
                inout("rdi") 0u64 => _,
                options(nostack, preserves_flags),
            );
        }
        result
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod vg {
    pub const TOGGLE_COLLECT: u64 = 0;
    pub const DUMP_STATS_AT: u64 = 0;
    pub const RUNNING_ON_VALGRIND: u64 = 0;
    pub fn request(default: u64, _code: u64, _arg1: u64) -> u64 {
        default
    }
}

/// True when this process runs under valgrind.
pub fn on_valgrind() -> bool {
    vg::request(0, vg::RUNNING_ON_VALGRIND, 0) > 0
}

/// The dump label of group `i`.
fn label(i: usize, g: &Group) -> String {
    format!("lwcbench-count {i} {}", g.label())
}

/// Child side: count every group (see the module doc). Nothing is written but callgrind's dumps.
pub fn child(groups: &[Group], cfg: &Config) -> Result<(), String> {
    if !on_valgrind() {
        return Err(format!("{CHILD_ENV} is set but the process is not running under valgrind"));
    }
    let cfg = Config { seed: COUNT_SEED, ..cfg.clone() };
    for (i, g) in groups.iter().enumerate() {
        let name = std::ffi::CString::new(label(i, g)).map_err(|e| e.to_string())?;
        let (warm, ops) = ops_for(g.size_bits);
        count_ops(
            g,
            &cfg,
            warm,
            ops,
            || {
                vg::request(0, vg::TOGGLE_COLLECT, 0);
            },
            || {
                vg::request(0, vg::TOGGLE_COLLECT, 0);
            },
        )
        .map_err(|e| e.to_string())?;
        vg::request(0, vg::DUMP_STATS_AT, name.as_ptr() as u64);
    }
    Ok(())
}

/// One row of `instructions.csv`.
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq)]
pub struct InstrRow {
    /// Cipher name.
    pub cipher: String,
    /// Implementation name.
    pub implementation: String,
    /// Scenario.
    pub scenario: String,
    /// Key/IV variant.
    pub kiv: String,
    /// Message size in bits.
    pub size_bits: u64,
    /// Payload kind.
    pub payload: String,
    /// Operations counted.
    pub ops: u64,
    /// Instructions executed by those operations (callgrind Ir).
    pub instructions: u64,
    /// instructions / ops.
    pub instructions_per_op: f64,
    /// instructions_per_op / payload bytes (empty for init/keysetup).
    pub instructions_per_byte: Option<f64>,
}

/// (label, Ir total) of one callgrind dump file; None if it is not one of ours.
pub fn parse_dump(text: &str) -> Option<(String, u64)> {
    let desc = text.lines().find_map(|l| l.strip_prefix("desc: Trigger: Client Request: "))?;
    if !desc.starts_with("lwcbench-count ") {
        return None;
    }
    // "totals:" closes the file; "summary:" heads it. Ir is the first (only) event.
    let total = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:")))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0); // no instruction collected → callgrind writes no total line
    Some((desc.trim().to_string(), total))
}

/// Parent side: run `exe args` under callgrind, one dump per group, into `work` (created,
/// and removed afterwards), and turn the dumps into rows in group order.
pub fn count(exe: &Path, args: &[String], groups: &[Group], work: &Path) -> Result<Vec<InstrRow>, String> {
    if !cfg!(target_arch = "x86_64") {
        return Err("--counter instructions: valgrind client requests are implemented for x86-64 only".into());
    }
    std::fs::create_dir_all(work).map_err(|e| format!("--counter: {}: {e}", work.display()))?;
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--collect-atstart=no", "--compress-strings=no", "--compress-pos=no"])
        .arg(format!("--callgrind-out-file={}", work.join("cg.out").display()))
        .arg(exe)
        .args(args)
        .env(CHILD_ENV, work)
        .output()
        .map_err(|e| format!("--counter instructions: cannot start valgrind ({e}); install it (scripts/setup.sh)"))?;
    let result = (|| {
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let last: Vec<&str> = err.lines().filter(|l| !l.starts_with("==")).rev().take(3).collect();
            return Err(format!(
                "--counter instructions: the counting run failed ({}): {}",
                out.status,
                last.join(" | ")
            ));
        }
        let mut found = std::collections::HashMap::new();
        for e in std::fs::read_dir(work).map_err(|e| e.to_string())? {
            let p = e.map_err(|e| e.to_string())?.path();
            // bounded: a dump of one group is small; refuse anything huge
            if std::fs::metadata(&p).map(|m| m.len() > 64 << 20).unwrap_or(true) {
                continue;
            }
            if let Some((l, ir)) = std::fs::read_to_string(&p).ok().as_deref().and_then(parse_dump) {
                found.insert(l, ir);
            }
        }
        groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let l = label(i, g);
                let ir = *found.get(&l).ok_or_else(|| format!("--counter instructions: no count for {}", g.label()))?;
                let ops = ops_for(g.size_bits).1;
                let per_op = ir as f64 / ops as f64;
                let bytes = g.size_bits.div_ceil(8);
                Ok(InstrRow {
                    cipher: g.entry.info.name.into(),
                    implementation: g.entry.info.implementation.into(),
                    scenario: g.scenario.as_str().into(),
                    kiv: g.kiv.label().into(),
                    size_bits: g.size_bits as u64,
                    payload: g.payload.label.clone(),
                    ops,
                    instructions: ir,
                    instructions_per_op: per_op,
                    instructions_per_byte: (bytes > 0 && g.size_bits > 0).then(|| per_op / bytes as f64),
                })
            })
            .collect()
    })();
    let _ = std::fs::remove_dir_all(work);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_run_is_not_valgrind() {
        // the client request is a no-op on hardware: rdx keeps the default (0)
        assert!(!on_valgrind());
    }

    #[test]
    fn ops_shrink_only_for_large_operations() {
        // 16 ops of up to 16 KiB stay 16 (16 × 16 KiB = the 256 KiB budget)
        assert_eq!(ops_for(0), (4, 16));
        assert_eq!(ops_for(8 * 16 * 1024), (4, 16));
        // 64 KiB: 256 KiB / 64 KiB = 4 ops after 1 untimed one
        assert_eq!(ops_for(8 * 64 * 1024), (1, 4));
        // a 1280×720 4:2:0 frame (1,382,400 B): never fewer than 2
        assert_eq!(ops_for(8 * 1_382_400), (1, 2));
    }

    #[test]
    fn dump_parsing() {
        // the lines callgrind writes (format: docs "Callgrind Format Specification")
        let text = "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 7\ncmd: x\npart: 2\n\n\ndesc: I1 cache: \ndesc: Trigger: Client Request: lwcbench-count 3 ChaCha20/rustcrypto full <s,s | 8> random\n\npositions: line\nevents: Ir\nsummary: 12345\n\n\nfn=(1) x\n0 12345\n\n\ntotals: 12345\n";
        assert_eq!(
            parse_dump(text),
            Some(("lwcbench-count 3 ChaCha20/rustcrypto full <s,s | 8> random".into(), 12345))
        );
        assert_eq!(parse_dump(&text.replace("lwcbench-count", "other")), None);
        assert_eq!(parse_dump("events: Ir\n"), None);
    }
}
