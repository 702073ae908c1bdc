//! Sensor datasets: time series from CSV turned into the byte payload a sensor would send.
//!
//! CSV layout: a header row; an optional timestamp column (named time, timestamp, date or
//! datetime, case-insensitive); one or more numeric channels. A unit may follow a channel name
//! in brackets or parentheses: `temperature [°C]`, `flow (l/s)`.
//!
//! Encoding of each reading as 32 bits (default: IEEE-754 float32, big-endian = network byte
//! order, channels interleaved row by row: r0c0 r0c1 … r1c0 …). `int32:SCALE` stores
//! round(value × SCALE) as a two's-complement int32. Errors name the file, line and column.
use std::path::Path;

/// The built-in default (see data/sensors/README.md for source and licence).
pub const DEFAULT_NAME: &str = "office-occupancy";
/// The built-in default's text.
pub const DEFAULT_CSV: &str = include_str!("../../../data/sensors/office-occupancy.csv");
/// The DRACO study's 702 readings × 32 bits = 22,464 bits.
pub const DEFAULT_READINGS: usize = 702;

/// One numeric column of a dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    /// The header's name, without the unit.
    pub name: String,
    /// The unit in brackets or parentheses after the name, if any.
    pub unit: Option<String>,
    /// 1-based CSV column.
    pub column: usize,
}

/// A parsed sensor dataset: the picked channels and their readings.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// The dataset's name (the file stem).
    pub name: String,
    /// The picked channels, in column order.
    pub channels: Vec<Channel>,
    /// `rows[r][c]` = reading of channel c in data row r.
    pub rows: Vec<Vec<f64>>,
    /// The file as named in errors.
    pub file: String,
    /// `lines[r]` = the CSV line of data row r (for errors found when encoding).
    pub lines: Vec<usize>,
}

/// Largest dataset file read (256 MiB).
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// Character encoding of a dataset file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TextEncoding {
    /// UTF-8 (ASCII included); any other byte is an error naming its line and column.
    Utf8,
    /// ISO-8859-1 (Latin-1), as many spreadsheet and logger exports are written: every byte
    /// is the character of the same number.
    Latin1,
}

impl TextEncoding {
    /// `utf8` or `latin1` (also `utf-8`, `latin-1`, `iso-8859-1`), as `--dataset-encoding` takes.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "utf8" | "utf-8" => Ok(TextEncoding::Utf8),
            "latin1" | "latin-1" | "iso-8859-1" => Ok(TextEncoding::Latin1),
            _ => Err(format!("--dataset-encoding: '{}' is not utf8 or latin1", shown(s))),
        }
    }

    /// Decode a file's bytes; `file` names it in errors.
    pub fn decode(self, bytes: &[u8], file: &str) -> Result<String, String> {
        match self {
            TextEncoding::Latin1 => Ok(bytes.iter().map(|&b| b as char).collect()),
            TextEncoding::Utf8 => match std::str::from_utf8(bytes) {
                Ok(t) => Ok(t.to_string()),
                Err(e) => {
                    let at = e.valid_up_to();
                    let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
                    let line_start = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                    // Column in characters, as an editor counts them.
                    let col = String::from_utf8_lossy(&bytes[line_start..at]).chars().count() + 1;
                    Err(format!(
                        "{file}:{line}:{col}: byte 0x{:02X} is not UTF-8 (a Latin-1 export? give --dataset-encoding latin1)",
                        bytes[at]
                    ))
                }
            },
        }
    }
}

/// A cell or name as shown in an error: at most 40 characters, control characters and
/// newlines escaped, so a huge or multi-line cell cannot flood the terminal.
pub fn shown(s: &str) -> String {
    let mut out: String = s.chars().take(40).flat_map(char::escape_debug).collect();
    let n = s.chars().count();
    if n > 40 {
        out.push_str(&format!("… ({n} characters)"));
    }
    out
}

/// How one reading becomes 32 bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Encoding {
    /// IEEE-754 single precision.
    Float32,
    /// round(value × `scale`) as a two's-complement int32.
    Int32 {
        /// The factor applied before rounding.
        scale: f64,
    },
}

/// Byte order of each 32-bit reading.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ByteOrder {
    /// Big-endian (network byte order).
    Big,
    /// Little-endian.
    Little,
}

/// The order of readings in the payload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Layout {
    /// r0c0 r0c1 … r1c0 … (what a node sending all its sensors per tick produces).
    Interleaved,
    /// c0r0 c0r1 … c1r0 … (one channel's series after another).
    PerChannel,
}

/// How a dataset becomes a payload.
#[derive(Clone, Debug, PartialEq)]
pub struct Encode {
    /// Per-reading encoding.
    pub encoding: Encoding,
    /// Per-reading byte order.
    pub order: ByteOrder,
    /// Order of the readings.
    pub layout: Layout,
    /// Number of 32-bit readings in the payload.
    pub readings: usize,
}

impl Default for Encode {
    fn default() -> Self {
        Encode {
            encoding: Encoding::Float32,
            order: ByteOrder::Big,
            layout: Layout::Interleaved,
            readings: DEFAULT_READINGS,
        }
    }
}

impl Encoding {
    /// "float32" or "int32:SCALE".
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "float32" | "f32" => Ok(Encoding::Float32),
            t => match t.strip_prefix("int32:").map(|x| x.parse::<f64>()) {
                Some(Ok(scale)) if scale.is_finite() && scale != 0.0 => Ok(Encoding::Int32 { scale }),
                _ => Err(format!("--encoding: '{s}' is not float32 or int32:SCALE (e.g. int32:100)")),
            },
        }
    }
}

fn split_unit(h: &str) -> (String, Option<String>) {
    let h = h.trim();
    for (open, close) in [('[', ']'), ('(', ')')] {
        if let (Some(i), true) = (h.rfind(open), h.ends_with(close)) {
            let unit = h[i + 1..h.len() - 1].trim();
            return (h[..i].trim().to_string(), (!unit.is_empty()).then(|| unit.to_string()));
        }
    }
    (h.to_string(), None)
}

fn is_time_column(name: &str) -> bool {
    matches!(name.to_ascii_lowercase().as_str(), "time" | "timestamp" | "date" | "datetime")
}

impl Dataset {
    /// Load a UTF-8 file; `channels` as in [`Dataset::parse`].
    pub fn load(path: &Path, channels: &[String]) -> Result<Dataset, String> {
        Self::load_encoded(path, channels, TextEncoding::Utf8)
    }

    /// Load a file in the given character encoding (at most [`MAX_FILE_BYTES`]).
    pub fn load_encoded(path: &Path, channels: &[String], enc: TextEncoding) -> Result<Dataset, String> {
        use std::io::Read;
        let file = path.display().to_string();
        let f = std::fs::File::open(path).map_err(|e| format!("{file}: {e}"))?;
        let mut bytes = Vec::new();
        f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("{file}: {e}"))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(format!("{file}: larger than the {} MiB limit for a dataset", MAX_FILE_BYTES >> 20));
        }
        let text = enc.decode(&bytes, &file)?;
        let name = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "dataset".into());
        Self::parse(&text, &file, &name, channels)
    }

    /// The built-in default dataset; panics only if the shipped table does not parse.
    pub fn builtin() -> Dataset {
        Self::parse(DEFAULT_CSV, "data/sensors/office-occupancy.csv", DEFAULT_NAME, &[])
            .expect("built-in dataset parses")
    }

    /// Parse CSV text; `file` names it in errors. `channels` selects columns by name
    /// (without unit); empty = every non-timestamp column.
    pub fn parse(text: &str, file: &str, name: &str, channels: &[String]) -> Result<Dataset, String> {
        if text.trim().is_empty() {
            return Err(format!("{file}: empty file (expected a header row and readings)"));
        }
        let mut rdr = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(text.as_bytes());
        let headers = rdr.headers().map_err(|e| format!("{file}:1: {}", shown(&e.to_string())))?.clone();
        let cols: Vec<(String, Option<String>)> = headers.iter().map(split_unit).collect();
        // Channels are picked by name (case-insensitive): an empty or repeated name would pick
        // no column, or either of two.
        // (a map, not a scan of the earlier names: a file may have 100,000 columns)
        let mut seen = std::collections::HashMap::with_capacity(cols.len());
        for (i, (n, _)) in cols.iter().enumerate() {
            if n.is_empty() {
                return Err(format!("{file}:1:{}: column {} has no name", i + 1, i + 1));
            }
            if let Some(j) = seen.insert(n.to_ascii_lowercase(), i) {
                return Err(format!("{file}:1:{}: column name '{}' repeats column {}", i + 1, shown(n), j + 1));
            }
        }
        let picked: Vec<Channel> = if channels.is_empty() {
            cols.iter()
                .enumerate()
                .filter(|(_, (n, _))| !is_time_column(n))
                .map(|(i, (n, u))| Channel { name: n.clone(), unit: u.clone(), column: i + 1 })
                .collect()
        } else {
            channels
                .iter()
                .map(|want| {
                    cols.iter()
                        .position(|(n, _)| n.eq_ignore_ascii_case(want.trim()))
                        .map(|i| Channel { name: cols[i].0.clone(), unit: cols[i].1.clone(), column: i + 1 })
                        .ok_or_else(|| {
                            format!(
                                "{file}:1: column '{}' not found (columns: {}{})",
                                shown(want),
                                cols.iter().take(30).map(|c| shown(&c.0)).collect::<Vec<_>>().join(", "),
                                if cols.len() > 30 { ", …" } else { "" }
                            )
                        })
                })
                .collect::<Result<_, _>>()?
        };
        if picked.is_empty() {
            return Err(format!("{file}:1: no numeric channel columns (only a timestamp column)"));
        }
        let mut rows = Vec::new();
        let mut lines = Vec::new();
        for rec in rdr.records() {
            let rec = rec.map_err(|e| format!("{file}: {}", shown(&e.to_string())))?;
            let line = rec.position().map(|p| p.line()).unwrap_or(0);
            if rec.iter().all(|c| c.is_empty()) {
                continue;
            }
            // A cell past the header has no column name: a shifted row or a stray separator.
            if rec.len() > headers.len() {
                return Err(format!(
                    "{file}:{line}:{}: cell '{}' is beyond the header's {} columns",
                    headers.len() + 1,
                    shown(&rec[headers.len()]),
                    headers.len()
                ));
            }
            let mut row = Vec::with_capacity(picked.len());
            for ch in &picked {
                let cell = rec.get(ch.column - 1).ok_or_else(|| {
                    format!(
                        "{file}:{line}:{}: missing cell for '{}' (row has {} cells, header {})",
                        ch.column,
                        shown(&ch.name),
                        rec.len(),
                        headers.len()
                    )
                })?;
                let v: f64 = cell.parse().ok().filter(|v: &f64| v.is_finite()).ok_or_else(|| {
                    if cell.contains('\n') {
                        // A quote opened and never closed swallows the lines after it.
                        format!(
                            "{file}:{line}:{}: a quoted cell in column '{}' runs over {} lines (unbalanced '\"'?)",
                            ch.column,
                            shown(&ch.name),
                            cell.lines().count()
                        )
                    } else {
                        format!(
                            "{file}:{line}:{}: '{}' in column '{}' is not a number",
                            ch.column,
                            shown(cell),
                            shown(&ch.name)
                        )
                    }
                })?;
                row.push(v);
            }
            rows.push(row);
            lines.push(line as usize);
        }
        if rows.is_empty() {
            return Err(format!("{file}: header only, no readings"));
        }
        Ok(Dataset { name: name.to_string(), channels: picked, rows, file: file.to_string(), lines })
    }

    /// Readings in the dataset: rows × channels.
    pub fn readings_available(&self) -> usize {
        self.rows.len() * self.channels.len()
    }

    /// The readings in payload order.
    pub fn ordered(&self, layout: Layout) -> Vec<f64> {
        match layout {
            Layout::Interleaved => self.rows.iter().flatten().copied().collect(),
            Layout::PerChannel => (0..self.channels.len()).flat_map(|c| self.rows.iter().map(move |r| r[c])).collect(),
        }
    }

    /// Every reading as float32 (what `lwcbench link` devices send): one beyond ±3.4e38 would
    /// be sent as ±inf, so it is refused with its line and column.
    pub fn check_float32(&self) -> Result<(), String> {
        for (i, v) in self.ordered(Layout::Interleaved).iter().enumerate() {
            if !(*v as f32).is_finite() {
                let (line, col, name) = self.position(i, Layout::Interleaved);
                return Err(format!(
                    "{}:{line}:{col}: {v:e} in column '{}' does not fit in float32 (largest ±3.4028235e38)",
                    self.file,
                    shown(name)
                ));
            }
        }
        Ok(())
    }

    /// Line, column and channel name of reading `i` in payload order.
    fn position(&self, i: usize, layout: Layout) -> (usize, usize, &str) {
        let n = self.channels.len();
        let (r, c) = match layout {
            Layout::Interleaved => (i / n, i % n),
            Layout::PerChannel => (i % self.rows.len(), i / self.rows.len()),
        };
        (self.lines.get(r).copied().unwrap_or(0), self.channels[c].column, &self.channels[c].name)
    }

    /// Encode the first `enc.readings` readings as 4 bytes each.
    pub fn payload(&self, enc: &Encode) -> Result<Vec<u8>, String> {
        if enc.readings == 0 {
            return Err("--readings: at least one reading is needed".into());
        }
        let vals = self.ordered(enc.layout);
        if vals.len() < enc.readings {
            return Err(format!(
                "dataset '{}' has {} readings, {} requested (--readings)",
                self.name,
                vals.len(),
                enc.readings
            ));
        }
        let mut out = Vec::with_capacity(enc.readings * 4);
        for (i, v) in vals.iter().take(enc.readings).enumerate() {
            let word: [u8; 4] = match enc.encoding {
                Encoding::Float32 => {
                    let f = *v as f32;
                    // A reading beyond ±3.4e38 becomes ±inf in float32: not what the sensor read.
                    if !f.is_finite() {
                        let (line, col, name) = self.position(i, enc.layout);
                        return Err(format!(
                            "{}:{line}:{col}: {v:e} in column '{}' does not fit in float32 (largest ±3.4028235e38; use --encoding int32:SCALE)",
                            self.file,
                            shown(name)
                        ));
                    }
                    if enc.order == ByteOrder::Big {
                        f.to_be_bytes()
                    } else {
                        f.to_le_bytes()
                    }
                }
                Encoding::Int32 { scale } => {
                    let s = (v * scale).round();
                    if s < i32::MIN as f64 || s > i32::MAX as f64 {
                        let (line, col, name) = self.position(i, enc.layout);
                        return Err(format!(
                            "{}:{line}:{col}: {v} in column '{}' × {scale} = {s} does not fit in int32 (--encoding int32:{scale}; use a smaller scale or float32)",
                            self.file,
                            shown(name)
                        ));
                    }
                    let n = s as i32;
                    if enc.order == ByteOrder::Big {
                        n.to_be_bytes()
                    } else {
                        n.to_le_bytes()
                    }
                }
            };
            out.extend_from_slice(&word);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str, ch: &[&str]) -> String {
        Dataset::parse(text, "s.csv", "s", &ch.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap_err()
    }

    #[test]
    fn bad_files_name_file_line_column() {
        assert_eq!(err("", &[]), "s.csv: empty file (expected a header row and readings)");
        assert_eq!(err("time,t [C]\n", &[]), "s.csv: header only, no readings");
        assert_eq!(err("time,t [C],h\n1,2.5,3\n2,x,4\n", &[]), "s.csv:3:2: 'x' in column 't' is not a number");
        assert!(err("time,t\n1,2\n", &["flow"]).starts_with("s.csv:1: column 'flow' not found (columns: time, t)"));
        assert_eq!(err("time,a,b\n1,2\n", &[]), "s.csv:2:3: missing cell for 'b' (row has 2 cells, header 3)");
        assert_eq!(err("time\n2020\n", &[]), "s.csv:1: no numeric channel columns (only a timestamp column)");
    }

    #[test]
    fn hostile_files_give_short_errors_with_positions() {
        // Non-UTF-8: 0xB0 (Latin-1 '°') on line 2 after "1,2" and "é" counted as one column
        let bytes = b"time,t\n1,2\xB0\n";
        let e = TextEncoding::Utf8.decode(bytes, "s.csv").unwrap_err();
        assert!(e.starts_with("s.csv:2:4: byte 0xB0 is not UTF-8"), "{e}");
        assert_eq!(TextEncoding::Utf8.decode("é\n°".as_bytes(), "s.csv").unwrap(), "é\n°");
        let e = TextEncoding::Utf8.decode(b"t\n\xC3\xA9\xff", "s.csv").unwrap_err();
        assert!(e.starts_with("s.csv:2:2: byte 0xFF"), "{e}");
        assert_eq!(TextEncoding::Latin1.decode(b"\xB0C", "s.csv").unwrap(), "°C");
        // Unbalanced quote: one line naming where the quoted cell starts
        let mut text = String::from("time,t\n1,\"2\n");
        for i in 0..700 {
            text.push_str(&format!("{i},{i}\n"));
        }
        let e = err(&text, &[]);
        assert!(e.starts_with("s.csv:2:2: a quoted cell in column 't' runs over 701 lines"), "{e}");
        assert!(!e.contains('\n'));
        // A huge cell is cut in the message
        let e = err(&format!("time,t\n1,{}\n", "x".repeat(1_000_000)), &[]);
        assert!(e.len() < 200 && e.contains("… (1000000 characters)"), "{e}");
        // int32 overflow names the option and the cell (per-channel order: reading 3 is t2 of row 2)
        let d = Dataset::parse("time,a,b\n1,1,1\n2,1,30000\n", "s.csv", "s", &[]).unwrap();
        let enc = Encode { readings: 4, encoding: Encoding::Int32 { scale: 1e5 }, ..Default::default() };
        assert_eq!(
            d.payload(&enc).unwrap_err(),
            "s.csv:3:3: 30000 in column 'b' × 100000 = 3000000000 does not fit in int32 (--encoding int32:100000; use a smaller scale or float32)"
        );
        let enc = Encode { layout: Layout::PerChannel, ..enc };
        assert!(d.payload(&enc).unwrap_err().starts_with("s.csv:3:3: 30000 in column 'b'"));
    }

    #[test]
    fn extra_cells_and_empty_or_repeated_names_are_refused() {
        // A cell past the header: line 3, column 4 of a three-column header
        assert_eq!(err("time,a,b\n1,2,3\n2,4,5,6\n", &[]), "s.csv:3:4: cell '6' is beyond the header's 3 columns");
        // even an empty one (a trailing separator), and with a channel picked by name
        assert_eq!(err("time,a,b\n1,2,3,\n", &["a"]), "s.csv:2:4: cell '' is beyond the header's 3 columns");
        // Names: empty (also when only a unit is given), repeated (case and unit do not matter)
        assert_eq!(err("time,,b\n1,2,3\n", &[]), "s.csv:1:2: column 2 has no name");
        assert_eq!(err("time,a,[°C]\n1,2,3\n", &[]), "s.csv:1:3: column 3 has no name");
        assert_eq!(err("time,a,b,\n1,2,3,\n", &[]), "s.csv:1:4: column 4 has no name");
        assert_eq!(err("time,t [C],b,T [F]\n1,2,3,4\n", &[]), "s.csv:1:4: column name 'T' repeats column 2");
        assert_eq!(err("time,a,a\n1,2,3\n", &["a"]), "s.csv:1:3: column name 'a' repeats column 2");
        assert_eq!(err("time,Time\n1,2\n", &[]), "s.csv:1:2: column name 'Time' repeats column 1");
    }

    #[test]
    fn readings_beyond_float32_are_refused_not_sent_as_inf() {
        // f32::MAX = 3.4028234663852886e38; 3.5e38 rounds to +inf, -1e39 to -inf.
        let d = Dataset::parse("time,a,b\n1,1,2\n2,3.5e38,4\n3,5,-1e39\n", "s.csv", "s", &[]).unwrap();
        let e = d.check_float32().unwrap_err();
        assert_eq!(e, "s.csv:3:2: 3.5e38 in column 'a' does not fit in float32 (largest ±3.4028235e38)");
        let enc = Encode { readings: 6, ..Default::default() };
        assert!(d.payload(&enc).unwrap_err().starts_with("s.csv:3:2: 3.5e38 in column 'a' does not fit in float32"));
        // per channel (a's readings first), a's second reading is the same cell
        let enc = Encode { readings: 6, layout: Layout::PerChannel, ..Default::default() };
        assert!(d.payload(&enc).unwrap_err().starts_with("s.csv:3:2: "));
        let enc = Encode { readings: 2, ..Default::default() };
        assert_eq!(d.payload(&enc).unwrap(), [0x3F, 0x80, 0, 0, 0x40, 0, 0, 0], "1.0f32, 2.0f32 by hand");
        // the largest float32 itself is a reading; int32 is unaffected
        let d = Dataset::parse("a\n3.4028234e38\n-3.4028234e38\n", "s.csv", "s", &[]).unwrap();
        d.check_float32().unwrap();
        let d = Dataset::parse("a,b\n1,-1e39\n", "s.csv", "s", &[]).unwrap();
        assert_eq!(
            d.check_float32().unwrap_err(),
            "s.csv:2:2: -1e39 in column 'b' does not fit in float32 (largest ±3.4028235e38)"
        );
    }

    #[test]
    fn units_channels_and_encodings_by_hand() {
        let d = Dataset::parse("Time,temp [°C],flow (l/s)\nx,1.5,-2\ny,2,3\n", "f", "f", &[]).unwrap();
        assert_eq!(d.channels[0], Channel { name: "temp".into(), unit: Some("°C".into()), column: 2 });
        assert_eq!(d.channels[1].unit.as_deref(), Some("l/s"));
        assert_eq!(d.ordered(Layout::Interleaved), vec![1.5, -2.0, 2.0, 3.0]);
        assert_eq!(d.ordered(Layout::PerChannel), vec![1.5, 2.0, -2.0, 3.0]);
        // 1.5f32 = 0x3FC00000, -2.0f32 = 0xC0000000 (IEEE-754 by hand)
        let p = d.payload(&Encode { readings: 2, ..Default::default() }).unwrap();
        assert_eq!(p, vec![0x3F, 0xC0, 0, 0, 0xC0, 0, 0, 0]);
        let p = d.payload(&Encode { readings: 1, order: ByteOrder::Little, ..Default::default() }).unwrap();
        assert_eq!(p, vec![0, 0, 0xC0, 0x3F]);
        // int32 × 100: 150 = 0x00000096, -200 = 0xFFFFFF38
        let p = d
            .payload(&Encode { readings: 2, encoding: Encoding::Int32 { scale: 100.0 }, ..Default::default() })
            .unwrap();
        assert_eq!(p, vec![0, 0, 0, 0x96, 0xFF, 0xFF, 0xFF, 0x38]);
        assert!(d
            .payload(&Encode { readings: 5, ..Default::default() })
            .unwrap_err()
            .contains("has 4 readings, 5 requested"));
        assert_eq!(Encoding::parse("int32:10"), Ok(Encoding::Int32 { scale: 10.0 }));
        assert!(Encoding::parse("int16").is_err());
    }

    #[test]
    fn builtin_gives_the_studys_payload_length() {
        let d = Dataset::builtin();
        assert_eq!(d.channels.len(), 4);
        assert_eq!(d.channels[3].unit.as_deref(), Some("ppm"));
        let p = d.payload(&Encode::default()).unwrap();
        assert_eq!(p.len() * 8, 22_464);
        // First reading 23.18 °C as float32 big-endian: 23.18f32 = 0x41B970A4
        assert_eq!(&p[..4], &[0x41, 0xB9, 0x70, 0xA4]);
    }
}
