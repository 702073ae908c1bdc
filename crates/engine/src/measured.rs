//! Measured energy brought into the modelled tables: a collected run's `energy.csv`
//! (`lwcbench collect --power-port`, docs/power.md) read as untrusted input, and looked up by
//! cipher, implementation, scenario and message size. A study run on the host cannot know a
//! board's measured figure unless told: `--energy-from FILE` tells it.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest energy.csv read (a collected run has one row per group: kilobytes).
const MAX_BYTES: u64 = 16 << 20;
/// The columns read, as `collect` writes them (crates/engine/src/collect/logger.rs, EnergyRow).
const COLUMNS: [&str; 8] = [
    "cipher",
    "implementation",
    "scenario",
    "size_bits",
    "operations",
    "energy_per_op_j_measured",
    "energy_per_op_u_j",
    "energy_source",
];

/// One row of energy.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredRow {
    /// Line number in energy.csv.
    pub line: u64,
    /// Cipher name.
    pub cipher: String,
    /// Implementation name.
    pub implementation: String,
    /// Scenario.
    pub scenario: String,
    /// Message size in bits.
    pub size_bits: u64,
    /// Operations measured.
    pub operations: u64,
    /// Joules per operation.
    pub e_op_j: f64,
    /// Expanded uncertainty (k = 2) of e_op_j.
    pub u_op_j: f64,
    /// The row's energy_source.
    pub label: String,
}

/// The measured energy of one (cipher, implementation, scenario, size): the file's rows for
/// it (key/IV and payload variants) pooled.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Joules per operation, the operation-weighted mean of the rows.
    pub e_op_j: f64,
    /// Expanded uncertainty (k = 2), the operation-weighted mean of the rows' — not reduced by
    /// pooling: its shunt-tolerance and gain parts are common to every row.
    pub u_op_j: f64,
    /// Operations over the pooled rows.
    pub operations: u64,
    /// `measured:<sensor> (shunt …) from FILE line N[, M …]`
    pub source: String,
}

/// A collected run's energy.csv.
#[derive(Clone, Debug)]
pub struct MeasuredEnergy {
    /// The file read.
    pub path: PathBuf,
    /// Its rows.
    pub rows: Vec<MeasuredRow>,
}

impl MeasuredEnergy {
    /// Read and check `path`; an error names the file, the line and the column.
    pub fn load(path: &Path) -> Result<MeasuredEnergy, String> {
        let p = path.display();
        let meta = std::fs::metadata(path).map_err(|e| format!("{p}: {e}"))?;
        if meta.len() > MAX_BYTES {
            return Err(format!("{p}: {} bytes, more than an energy.csv holds ({MAX_BYTES} at most)", meta.len()));
        }
        let text = std::fs::read(path).map_err(|e| format!("{p}: {e}"))?;
        let text = String::from_utf8(text).map_err(|e| format!("{p}: not UTF-8 text ({e})"))?;
        Self::parse(&text, path)
    }

    /// [`load`](Self::load) on text already read.
    pub fn parse(text: &str, path: &Path) -> Result<MeasuredEnergy, String> {
        let p = path.display();
        let mut r = csv::ReaderBuilder::new().flexible(false).from_reader(text.as_bytes());
        let header = r.headers().map_err(|e| format!("{p}: line 1: {e}"))?.clone();
        let mut idx = [0usize; COLUMNS.len()];
        for (i, c) in COLUMNS.iter().enumerate() {
            idx[i] = header.iter().position(|h| h == *c).ok_or_else(|| {
                format!("{p}: line 1: column '{c}' missing (not a collected run's energy.csv; docs/power.md)")
            })?;
        }
        let mut rows = Vec::new();
        for rec in r.records() {
            let rec = rec.map_err(|e| {
                let line = e.position().map_or(0, |q| q.line());
                format!("{p}: line {line}: {}", crate::text::one_line(&e.to_string(), 200))
            })?;
            let line = rec.position().map_or(0, |q| q.line());
            let field = |k: usize| rec.get(idx[k]).unwrap_or("");
            let bad = |k: usize, why: &str| {
                format!(
                    "{p}: line {line}, column {} ({}): '{}' {why}",
                    idx[k] + 1,
                    COLUMNS[k],
                    crate::text::one_line(field(k), 60)
                )
            };
            let text = |k: usize| -> Result<String, String> {
                let v = field(k);
                if v.is_empty() || v.chars().any(char::is_control) {
                    return Err(bad(k, "is empty or holds a control character"));
                }
                Ok(v.to_string())
            };
            let count = |k: usize| field(k).parse::<u64>().map_err(|_| bad(k, "is not a whole number"));
            let joules = |k: usize| match field(k).parse::<f64>() {
                Ok(v) if v.is_finite() && v.abs() < 1.0 => Ok(v),
                _ => Err(bad(k, "is not a number of joules below 1 J")),
            };
            let operations = count(4)?;
            if operations == 0 {
                return Err(bad(4, "operations: a measured group has at least one"));
            }
            let u = joules(6)?;
            if u < 0.0 {
                return Err(bad(6, "is negative (an uncertainty)"));
            }
            let label = text(7)?;
            if !label.starts_with("measured:") {
                return Err(bad(7, "is not a measured label ('measured:…')"));
            }
            rows.push(MeasuredRow {
                line,
                cipher: text(0)?,
                implementation: text(1)?,
                scenario: text(2)?,
                size_bits: count(3)?,
                operations,
                e_op_j: joules(5)?,
                u_op_j: u,
                label,
            });
        }
        if rows.is_empty() {
            return Err(format!("{p}: no rows (the collection measured no batch)"));
        }
        Ok(MeasuredEnergy { path: path.to_path_buf(), rows })
    }

    /// The rows for this cipher, implementation, scenario and size, pooled; None if the file
    /// has none.
    pub fn find(&self, cipher: &str, implementation: &str, scenario: &str, size_bits: u64) -> Option<Measured> {
        let rows: Vec<&MeasuredRow> = self
            .rows
            .iter()
            .filter(|r| {
                r.cipher == cipher
                    && r.implementation == implementation
                    && r.scenario == scenario
                    && r.size_bits == size_bits
            })
            .collect();
        if rows.is_empty() {
            return None;
        }
        let ops: u64 = rows.iter().fold(0u64, |a, r| a.saturating_add(r.operations));
        let n = ops as f64;
        let mean = |f: fn(&MeasuredRow) -> f64| rows.iter().map(|r| f(r) * r.operations as f64).sum::<f64>() / n;
        let mut labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        labels.dedup();
        let lines: Vec<String> = rows.iter().map(|r| r.line.to_string()).collect();
        Some(Measured {
            e_op_j: mean(|r| r.e_op_j),
            u_op_j: mean(|r| r.u_op_j),
            operations: ops,
            source: format!("{} from {} line {}", labels.join("; "), self.file_name(), lines.join(", ")),
        })
    }

    /// What the file has for a cipher and implementation: scenario → sizes (for the note on a
    /// row without a measurement).
    pub fn sizes_of(&self, cipher: &str, implementation: &str) -> BTreeMap<String, Vec<u64>> {
        let mut m: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for r in self.rows.iter().filter(|r| r.cipher == cipher && r.implementation == implementation) {
            let v = m.entry(r.scenario.clone()).or_default();
            if !v.contains(&r.size_bits) {
                v.push(r.size_bits);
            }
        }
        m
    }

    /// One note line for a table row without a measurement.
    pub fn miss_note(&self, table: &str, cipher: &str, implementation: &str, scenario: &str, size_bits: u64) -> String {
        let have = self.sizes_of(cipher, implementation);
        let what = if have.is_empty() {
            "no row for this cipher and implementation".to_string()
        } else {
            let list: Vec<String> = have
                .iter()
                .map(|(s, v)| format!("{s} at {} bits", v.iter().map(u64::to_string).collect::<Vec<_>>().join("/")))
                .collect();
            format!("it has {}", list.join(", "))
        };
        format!(
            "{table}: {cipher} ({implementation}) {scenario} {size_bits} bits: not measured ({}: {what}); modelled only",
            self.file_name()
        )
    }

    fn file_name(&self) -> String {
        self.path.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "cipher,implementation,language,scenario,kiv,size_bits,payload,batches,operations,samples_min,energy_per_op_j_measured,energy_per_op_u_j,energy_per_byte_j_measured,energy_per_byte_u_j,energy_per_op_j_total,mean_power_w,baseline_power_w,energy_source\n";
    const L: &str = "measured:ina219 (shunt 0.1 Ω ±1 %)";

    fn parse(body: &str) -> Result<MeasuredEnergy, String> {
        MeasuredEnergy::parse(&format!("{HEAD}{body}"), Path::new("run/energy.csv"))
    }

    #[test]
    fn pools_key_iv_variants_weighted_by_operations() {
        let m = parse(&format!(
            "Trivium,rust-fast,rust,encrypt,\"s,s\",128,random,1,1000,18,5e-6,8e-8,3.125e-7,5e-9,9e-6,0.45,0.2,{L}\n\
             Trivium,rust-fast,rust,encrypt,\"r,r\",128,random,3,3000,18,6e-6,1e-7,3.75e-7,6.25e-9,9e-6,0.45,0.2,{L}\n\
             Trivium,rust-fast,rust,encrypt,\"s,s\",1024,random,1,1000,18,7e-6,1e-7,,,9e-6,0.45,0.2,{L}\n"
        ))
        .unwrap();
        let g = m.find("Trivium", "rust-fast", "encrypt", 128).unwrap();
        // by hand: (5e-6 × 1000 + 6e-6 × 3000) / 4000 = 5.75e-6; U (8e-8 × 1000 + 1e-7 × 3000) / 4000 = 9.5e-8
        assert!((g.e_op_j - 5.75e-6).abs() < 1e-18, "{g:?}");
        assert!((g.u_op_j - 9.5e-8).abs() < 1e-20, "{g:?}");
        assert_eq!(g.operations, 4000);
        assert_eq!(g.source, format!("{L} from run/energy.csv line 2, 3"));
        assert_eq!(m.find("Trivium", "rust-fast", "encrypt", 1024).unwrap().e_op_j, 7e-6);
        assert!(m.find("Trivium", "rust-fast", "decrypt", 128).is_none());
        assert!(m.find("Trivium", "rust-ref", "encrypt", 128).is_none());
        assert_eq!(
            m.miss_note("t", "Trivium", "rust-fast", "encrypt", 512),
            "t: Trivium (rust-fast) encrypt 512 bits: not measured (run/energy.csv: it has encrypt at 128/1024 bits); modelled only"
        );
    }

    #[test]
    fn bad_rows_name_file_line_and_column() {
        let row = |e: &str, u: &str, ops: &str, label: &str| {
            format!("Trivium,rust-fast,rust,encrypt,\"s,s\",128,random,1,{ops},18,{e},{u},,,9e-6,0.45,0.2,{label}\n")
        };
        let ok = row("5e-6", "8e-8", "1000", L);
        for (body, want) in [
            (
                format!("{ok}{}", row("five", "8e-8", "1000", L)),
                "run/energy.csv: line 3, column 11 (energy_per_op_j_measured): 'five' is not a number of joules below 1 J",
            ),
            (row("5e-6", "-1e-9", "1000", L), "run/energy.csv: line 2, column 12 (energy_per_op_u_j): '-1e-9' is negative"),
            (row("5e-6", "NaN", "1000", L), "column 12 (energy_per_op_u_j): 'NaN' is not a number"),
            (row("5e-6", "8e-8", "0", L), "line 2, column 9 (operations): '0' operations"),
            (row("5e-6", "8e-8", "1000", "model:esp32"), "line 2, column 18 (energy_source): 'model:esp32' is not a measured label"),
            (String::new(), "run/energy.csv: no rows"),
            ("a,b\n".to_string(), "run/energy.csv: line 2: CSV error: record 1 (line: 2, byte: 249): found record with 2 fields"),
        ] {
            let e = parse(&body).unwrap_err();
            assert!(e.contains(want), "{e}\nwant: {want}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
        let e = MeasuredEnergy::parse("cipher,implementation\nx,y\n", Path::new("e.csv")).unwrap_err();
        assert_eq!(e, "e.csv: line 1: column 'scenario' missing (not a collected run's energy.csv; docs/power.md)");
    }
}
