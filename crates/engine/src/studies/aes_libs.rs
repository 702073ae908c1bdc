//! The aes-libs study: AES across libraries (RustCrypto, OpenSSL, libgcrypt, wolfSSL) ×
//! mode × key size × message size, as in the four-library AES study (see
//! docs/aes-libraries.md). Timing comes from the ordinary measurement loop; this module adds
//! * `support_matrix.csv`/`.md` — library × mode × key size offered/built;
//! * `ciphertext_lengths.csv` — bytes on the wire per mode for 16 bytes and the run's sizes,
//!   measured by running each library (not computed from the mode's definition), with a
//!   flag where libraries disagree;
//! * `aes_libs.csv` — median encrypt/decrypt time with the 95 % CI of the median, per
//!   library × mode × key size × size, and the geometric mean over each library's modes.
//!
//! * `memory.csv` — memory per operation: the object's own bytes, the heap a keyed context
//!   holds (glibc `mallinfo2` in-use bytes around construction + `set_key`, which sees C
//!   libraries' `malloc` as well as Rust's), and the heap still held after one encryption of
//!   16 B and 64 KiB (the message buffers excluded). Allocations made and freed inside one
//!   call are not seen (glibc keeps no peak figure); docs/aes-libraries.md says so.
use std::collections::BTreeMap;
use std::fmt::Write as _;

use lwcbench_catalog::aes::{self, check, Kind, Lib};

use super::study::{Study, StudyInput, StudyOutput};
use crate::plan::{Scenario, Selection};
use crate::resources::heap::heap_in_use;

/// The preset name.
pub const NAME: &str = "aes-libs";

/// The four-library AES study.
pub struct AesLibs;

impl Study for AesLibs {
    fn published(&self, _ours: &crate::published::Ours) -> Option<crate::published::Section> {
        Some(crate::published::aes_libs())
    }
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        "The four-library AES study: every AES mode (ECB, CBC, CFB, CFB8, OFB, CTR, GCM, CCM, EAX, OCB, SIV) × key size 128/192/256 × library (RustCrypto, OpenSSL, libgcrypt, wolfSSL — those built) × {16 B, 1 KiB, 16 KiB, 64 KiB}, keysetup/encrypt/decrypt; writes support_matrix.csv/.md, ciphertext_lengths.csv and aes_libs.csv (median + CI, geometric mean over each library's modes)"
    }
    fn selection(&self) -> Selection {
        let mut ciphers = Vec::new();
        for k in Kind::ALL {
            for b in aes::KEY_BITS {
                ciphers.push(aes::name(k, b).to_string());
            }
        }
        Selection {
            ciphers,
            scenarios: vec![Scenario::Keysetup, Scenario::Encrypt, Scenario::Decrypt],
            sizes_bits: vec![16 * 8, 1024 * 8, 16384 * 8, 65536 * 8],
            ..Default::default()
        }
    }
    fn reps(&self) -> usize {
        30
    }
    fn warmup(&self) -> usize {
        3
    }
    fn files(&self) -> &'static [&'static str] {
        &[
            "support_matrix.csv",
            "support_matrix.md",
            "ciphertext_lengths.csv",
            "memory.csv",
            "aes_libs.csv",
            "aes_libs.md",
        ]
    }
    fn derive(&self, input: &StudyInput) -> Result<StudyOutput, String> {
        run(input)
    }
}

/// The study's tables from the run's samples.
pub fn run(input: &StudyInput) -> Result<StudyOutput, String> {
    let mut out = StudyOutput::default();
    out.files.push(("support_matrix.csv".into(), check::matrix_csv().into_bytes()));
    out.files.push(("support_matrix.md".into(), check::matrix_markdown().into_bytes()));

    // Ciphertext lengths, measured through each built library.
    let mut sizes: Vec<usize> = vec![16];
    for r in input.summary {
        let b = (r.size_bits as usize).div_ceil(8);
        if r.scenario != "keysetup" && !sizes.contains(&b) {
            sizes.push(b);
        }
    }
    sizes.sort_unstable();
    let mut len_csv = String::from(
        "mode,key_bits,plaintext_bytes,library,ciphertext_bytes,iv_bytes,tag_bytes,total_on_wire,agrees\n",
    );
    let mut disagreements = Vec::new();
    for kind in Kind::ALL {
        for bits in aes::KEY_BITS {
            for &n in &sizes {
                let mut got: Vec<(Lib, usize)> = Vec::new();
                for lib in Lib::ALL.into_iter().filter(|l| l.built() && l.supports(kind)) {
                    let pt = check::pattern(n, 7);
                    let key = check::pattern(aes::key_bytes(kind, bits), 1);
                    let iv = check::pattern(kind.iv_bytes(), 2);
                    let len = if kind.is_aead() {
                        let mut c = aes::make_aead(lib, kind, bits).ok_or("not built")?;
                        c.set_key(&key).map_err(|e| e.to_string())?;
                        let mut buf = pt.clone();
                        let mut tag = [0u8; 16];
                        c.encrypt(&iv, &[], &mut buf, &mut tag)
                            .map_err(|e| format!("{} {}: {e}", lib.as_str(), aes::name(kind, bits)))?;
                        buf.len() + tag.len()
                    } else {
                        let mut c = aes::make_mode(lib, kind, bits).ok_or("not built")?;
                        c.set_key(&key).map_err(|e| e.to_string())?;
                        check::mode_encrypt(c.as_mut(), &iv, &pt)
                            .map_err(|e| format!("{} {}: {e}", lib.as_str(), aes::name(kind, bits)))?
                            .len()
                    };
                    got.push((lib, len));
                }
                let agree = got.windows(2).all(|w| w[0].1 == w[1].1);
                if !agree {
                    disagreements.push(format!("{} at {n} bytes: {:?}", aes::name(kind, bits), got));
                }
                for (lib, len) in got {
                    let _ = writeln!(
                        len_csv,
                        "{},{bits},{n},{},{len},{},{},{},{}",
                        kind.as_str(),
                        lib.as_str(),
                        kind.iv_bytes(),
                        kind.tag_bytes(),
                        len + kind.iv_bytes(),
                        if agree { "yes" } else { "NO" }
                    );
                }
            }
        }
    }
    out.files.push(("ciphertext_lengths.csv".into(), len_csv.into_bytes()));
    out.files.push(("memory.csv".into(), memory_csv().into_bytes()));

    // Timing table + geometric mean over each library's modes.
    let mut csv = String::from(
        "library,mode,key_bits,scenario,kiv,plaintext_bytes,median_ns,median_ci95_lo_ns,median_ci95_hi_ns,mbit_per_s\n",
    );
    let mut geo: BTreeMap<(String, u16, String, u64), Vec<f64>> = BTreeMap::new();
    for r in input.summary.iter().filter(|r| r.cipher.starts_with("AES-") && r.cipher.len() > 7) {
        let mut parts = r.cipher.splitn(3, '-');
        let (_, bits, mode) = (parts.next(), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let bytes = r.size_bits.div_ceil(8);
        let _ = writeln!(
            csv,
            "{},{mode},{bits},{},\"{}\",{bytes},{:.1},{:.1},{:.1},{}",
            r.implementation,
            r.scenario,
            r.kiv,
            r.median_ns,
            r.median_ci95_lo_ns,
            r.median_ci95_hi_ns,
            r.mbit_per_s.map(|v| format!("{v:.1}")).unwrap_or_default()
        );
        if r.kiv != "all" {
            continue; // the geometric mean uses the pooled key/IV variants
        }
        geo.entry((r.implementation.clone(), bits.parse().unwrap_or(0), r.scenario.clone(), bytes))
            .or_default()
            .push(r.median_ns);
    }
    let mut md = String::from("## AES across libraries\n\n");
    md += &check::matrix_markdown();
    md += "\n### Geometric mean of the median time over each library's modes (ns)\n\n| library | key | scenario | bytes | modes | geomean ns |\n|---|---|---|---|---|---|\n";
    let _ = writeln!(csv);
    for ((lib, bits, sc, bytes), v) in &geo {
        let g = (v.iter().map(|x| x.max(1e-9).ln()).sum::<f64>() / v.len() as f64).exp();
        let _ = writeln!(md, "| {lib} | {bits} | {sc} | {bytes} | {} | {g:.1} |", v.len());
    }
    md += "\nModes differ per library (see the matrix): compare geometric means only between libraries with the same modes, or use aes_libs.csv per mode.\n";
    if disagreements.is_empty() {
        md += "\nCiphertext lengths: every library gives the same length for every mode, key size and message size (ciphertext_lengths.csv).\n";
    } else {
        md += &format!(
            "\n**Ciphertext lengths differ between libraries** ({}): {}\n",
            disagreements.len(),
            disagreements.join("; ")
        );
        out.notes.push(format!("ciphertext length disagreements: {}", disagreements.len()));
    }
    out.files.push(("aes_libs.csv".into(), csv.into_bytes()));
    // also as a file: `lwcbench report` rewrites summary.md without study sections
    out.files.push(("aes_libs.md".into(), md.clone().into_bytes()));
    out.markdown = md;
    Ok(out)
}

/// `memory.csv`: per library × mode × key size, object bytes, heap held by the keyed
/// context, heap still held after one encryption of 16 B and of 64 KiB.
fn memory_csv() -> String {
    let delta = |a: Option<usize>, b: Option<usize>| match (a, b) {
        (Some(a), Some(b)) => (b as i64 - a as i64).to_string(),
        _ => String::new(),
    };
    let mut csv = String::from(
        "library,mode,key_bits,object_bytes,heap_context_bytes,heap_after_op_16B_bytes,heap_after_op_64KiB_bytes\n",
    );
    for kind in Kind::ALL {
        for bits in aes::KEY_BITS {
            for lib in Lib::ALL.into_iter().filter(|l| l.built() && l.supports(kind)) {
                let key = check::pattern(aes::key_bytes(kind, bits), 1);
                let iv = check::pattern(kind.iv_bytes(), 2);
                let (small, big) = (check::pattern(16, 7), check::pattern(64 * 1024, 7));
                let mut bufs = (small.clone(), big.clone(), vec![0u8; 16]);
                let h0 = heap_in_use();
                let (obj, h1, h2, h3) = if kind.is_aead() {
                    let Some(mut c) = aes::make_aead(lib, kind, bits) else { continue };
                    if c.set_key(&key).is_err() {
                        continue;
                    }
                    let obj = std::mem::size_of_val(&*c);
                    let h1 = heap_in_use();
                    let _ = c.encrypt(&iv, &[], &mut bufs.0, &mut bufs.2);
                    let h2 = heap_in_use();
                    let _ = c.encrypt(&iv, &[], &mut bufs.1, &mut bufs.2);
                    (obj, h1, h2, heap_in_use())
                } else {
                    let Some(mut c) = aes::make_mode(lib, kind, bits) else { continue };
                    if c.set_key(&key).is_err() {
                        continue;
                    }
                    let obj = std::mem::size_of_val(&*c);
                    // buffers with room for padding, allocated before the measurement
                    let (mut a, mut b) = (small.clone(), big.clone());
                    a.resize(c.ciphertext_len(16), 0);
                    b.resize(c.ciphertext_len(64 * 1024), 0);
                    let h1 = heap_in_use();
                    let _ = c.encrypt(&iv, &mut a, 16);
                    let h2 = heap_in_use();
                    let _ = c.encrypt(&iv, &mut b, 64 * 1024);
                    (obj, h1, h2, heap_in_use())
                };
                let _ = writeln!(
                    csv,
                    "{},{},{bits},{obj},{},{},{}",
                    lib.as_str(),
                    kind.as_str(),
                    delta(h0, h1),
                    delta(h1, h2),
                    delta(h1, h3)
                );
            }
        }
    }
    csv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_csv_has_a_row_per_built_library_mode_and_key() {
        let csv = memory_csv();
        let rows: Vec<&str> = csv.lines().skip(1).collect();
        let want: usize = Kind::ALL
            .iter()
            .map(|&k| Lib::ALL.iter().filter(|l| l.built() && l.supports(k)).count() * aes::KEY_BITS.len())
            .sum();
        assert_eq!(rows.len(), want);
        for r in rows {
            let f: Vec<&str> = r.split(',').collect();
            assert_eq!(f.len(), 7, "{r}");
            assert!(f[3].parse::<usize>().unwrap() > 0, "{r}: object bytes");
        }
    }
}
