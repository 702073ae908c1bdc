//! The tables `lwcbench choose` ranks with: the ciphers' standardisation status
//! (data/cipher-status.csv), the microcontroller image sizes (data/mcu-sizes.csv) and the
//! emulator's measured error per timing model (data/emulator-error.csv).
use serde::Serialize;

use crate::board::records;

pub const STATUS_CSV: &str = include_str!("../../../data/cipher-status.csv");
pub const SIZES_CSV: &str = include_str!("../../../data/mcu-sizes.csv");
pub const ERROR_CSV: &str = include_str!("../../../data/emulator-error.csv");

/// A row of data/cipher-status.csv: the status and security claims of one cipher, each sourced.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Status {
    /// Catalogue cipher name.
    pub cipher: String,
    /// The primitive and mode as the document specifies them: one of [`STATUSES`].
    pub status: String,
    /// Approved for FIPS 140-3 (NIST SP 800-140C).
    pub fips: bool,
    /// The designers' claimed security level in bits (not the key length).
    pub claimed_bits: u32,
    /// The implementations here take time independent of secret data.
    pub constant_time: bool,
    /// The version that replaces this one, if any.
    pub superseded_by: Option<String>,
    /// The standard or selection that gives the status.
    pub document: String,
    /// `recalled` or `project` (how the row was checked).
    pub checked: String,
    /// Where status, fips and superseded_by come from.
    pub source: String,
    /// Where claimed_bits comes from.
    pub claim_source: String,
    /// Why constant_time says what it says.
    pub constant_time_source: String,
}

/// A row of data/mcu-sizes.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct Size {
    pub cipher: String,
    pub implementation: String,
    pub image: String,
    pub target: String,
    pub flash: u64,
    pub ram_static: u64,
    pub stack: u64,
}

/// A row of data/emulator-error.csv.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ErrorBand {
    pub timing_model: String,
    pub error_pct: f64,
    pub source: String,
}

/// The values of data/cipher-status.csv's `status` column.
pub const STATUSES: &[&str] = &["standard", "portfolio", "finalist", "provisional", "none"];

/// Columns of data/cipher-status.csv, in the order [`parse_status`] reads them.
const STATUS_COLUMNS: [&str; 11] = [
    "cipher",
    "status",
    "fips",
    "claimed_bits",
    "constant_time",
    "superseded_by",
    "document",
    "checked",
    "source",
    "claim_source",
    "constant_time_source",
];

/// Parse a status table (columns as data/cipher-status.csv); an error names the line and column.
pub fn parse_status(text: &str, origin: &str) -> Result<Vec<Status>, String> {
    let mut out: Vec<Status> = Vec::new();
    for (line, f) in records(text, origin, &STATUS_COLUMNS)? {
        if !STATUSES.contains(&f[1].as_str()) {
            return Err(format!("{origin}: line {line}: status '{}' is not one of {}", f[1], STATUSES.join(", ")));
        }
        let yes_no = |i: usize| match f[i].as_str() {
            "yes" => Ok(true),
            "no" => Ok(false),
            v => Err(format!("{origin}: line {line}: {} '{v}' is not yes or no", STATUS_COLUMNS[i])),
        };
        let claimed_bits = f[3].parse::<u32>().ok().filter(|b| (1..=512).contains(b)).ok_or_else(|| {
            format!("{origin}: line {line}: claimed_bits '{}' is not a number of bits in 1..=512", f[3])
        })?;
        for i in [8, 9, 10] {
            if f[i].is_empty() {
                return Err(format!("{origin}: line {line}: no {}", STATUS_COLUMNS[i]));
            }
        }
        if out.iter().any(|s| s.cipher == f[0]) {
            return Err(format!("{origin}: line {line}: {} appears twice", f[0]));
        }
        out.push(Status {
            cipher: f[0].clone(),
            status: f[1].clone(),
            fips: yes_no(2)?,
            claimed_bits,
            constant_time: yes_no(4)?,
            superseded_by: Some(f[5].clone()).filter(|s| !s.is_empty()),
            document: f[6].clone(),
            checked: f[7].clone(),
            source: f[8].clone(),
            claim_source: f[9].clone(),
            constant_time_source: f[10].clone(),
        });
    }
    Ok(out)
}

pub fn parse_sizes(text: &str, origin: &str) -> Result<Vec<Size>, String> {
    let cols = ["cipher", "implementation", "image", "target", "flash_bytes", "ram_static_bytes", "stack_bytes"];
    let mut out = Vec::new();
    for (line, f) in records(text, origin, &cols)? {
        let n = |i: usize| {
            f[i].parse::<u64>()
                .map_err(|_| format!("{origin}: line {line}: {} '{}' is not a byte count", cols[i], f[i]))
        };
        out.push(Size {
            cipher: f[0].clone(),
            implementation: f[1].clone(),
            image: f[2].clone(),
            target: f[3].clone(),
            flash: n(4)?,
            ram_static: n(5)?,
            stack: n(6)?,
        });
    }
    Ok(out)
}

pub fn parse_errors(text: &str, origin: &str) -> Result<Vec<ErrorBand>, String> {
    let mut out = Vec::new();
    for (line, f) in records(text, origin, &["timing_model", "error_pct", "source"])? {
        let e = f[1]
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && (0.0..100.0).contains(v))
            .ok_or_else(|| format!("{origin}: line {line}: error_pct '{}' is not a percentage", f[1]))?;
        out.push(ErrorBand { timing_model: f[0].clone(), error_pct: e, source: f[2].clone() });
    }
    Ok(out)
}

/// The built-in status table (data/cipher-status.csv).
pub fn status() -> Vec<Status> {
    parse_status(STATUS_CSV, "data/cipher-status.csv").expect("built-in status table parses")
}

/// The built-in image sizes (data/mcu-sizes.csv).
pub fn sizes() -> Vec<Size> {
    parse_sizes(SIZES_CSV, "data/mcu-sizes.csv").expect("built-in sizes table parses")
}

/// The built-in emulator error bands (data/emulator-error.csv).
pub fn errors() -> Vec<ErrorBand> {
    parse_errors(ERROR_CSV, "data/emulator-error.csv").expect("built-in error table parses")
}
