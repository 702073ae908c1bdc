//! The protocol's lines and messages (docs/engine-protocol.md): fields, answer lines,
//! percent-encoding, `hello` and the `cipher` offers. Pure parsing: no process, no I/O.
use lwcbench_core::{Family, Language};

use super::limits::{MAX_QUOTE, PROTOCOL};
use crate::plan::Scenario;

/// `name=value` fields of one line, in order, values percent-decoded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields(pub Vec<(String, String)>);

impl Fields {
    /// The value of field `k`.
    pub fn get(&self, k: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }
    /// The value of field `k`, or an error naming it.
    pub fn req(&self, k: &str) -> Result<&str, String> {
        self.get(k).ok_or_else(|| format!("field '{k}' missing"))
    }
    /// Field `k` parsed as a number.
    pub fn num<T: std::str::FromStr>(&self, k: &str) -> Result<T, String> {
        let v = self.req(k)?;
        v.parse().map_err(|_| format!("field '{k}': '{}' is not a number", clip(v)))
    }
    /// Field `k` decoded from hex.
    pub fn hex(&self, k: &str) -> Result<Vec<u8>, String> {
        let v = self.req(k)?;
        hex::decode(v).map_err(|e| format!("field '{k}': not hex ({e})"))
    }
}

/// One answer line.
#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    /// `ok …`: success of a single-line answer (terminal).
    Ok(Fields),
    /// `end count=N …`: success after N data lines (terminal).
    End(Fields),
    /// `err <code> <message>` (terminal).
    Err {
        /// The error code.
        code: String,
        /// The engine's message.
        message: String,
    },
    /// A data line: `cipher …`, `sample …`.
    Data(String, Fields),
}

impl Line {
    /// Whether the line ends an answer.
    pub fn is_terminal(&self) -> bool {
        !matches!(self, Line::Data(..))
    }
}

pub(super) fn clip(s: &str) -> &str {
    match s.char_indices().nth(60) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Percent-decode a value.
pub fn unescape(v: &str) -> Result<String, String> {
    if !v.contains('%') {
        return Ok(v.to_string());
    }
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(h.ok_or_else(|| format!("bad percent escape in '{}'", clip(v)))?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("percent escape in '{}' is not UTF-8", clip(v)))
}

/// Percent-encode a value for a request (space, '%', '=' and control characters).
pub fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        if c == ' ' || c == '%' || c == '=' || c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                s.push_str(&format!("%{b:02X}"));
            }
        } else {
            s.push(c);
        }
    }
    s
}

/// Parse one answer line (without its newline). The error says what is wrong.
pub fn parse_line(s: &str) -> Result<Line, String> {
    let s = s.strip_suffix('\r').unwrap_or(s);
    if s.is_empty() {
        return Err("empty line".into());
    }
    let (kind, rest) = s.split_once(' ').unwrap_or((s, ""));
    if kind == "err" {
        let (code, message) = rest.split_once(' ').unwrap_or((rest, ""));
        if code.is_empty() {
            return Err("'err' line without a code".into());
        }
        return Ok(Line::Err { code: code.to_string(), message: message.to_string() });
    }
    if kind.is_empty() || !kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'-') {
        return Err(format!("'{}' is not a line kind", clip(kind)));
    }
    let mut fields = Vec::new();
    if !rest.is_empty() {
        for t in rest.split(' ') {
            if t.is_empty() {
                return Err("tokens must be separated by single spaces".into());
            }
            let (k, v) = t.split_once('=').ok_or_else(|| format!("'{}' is not name=value", clip(t)))?;
            if k.is_empty() {
                return Err(format!("'{}' has an empty name", clip(t)));
            }
            // A repeated name has no meaning (a reader would take one of them silently).
            if fields.iter().any(|(n, _): &(String, String)| n == k) {
                return Err(format!("field '{}' given twice", clip(k)));
            }
            fields.push((k.to_string(), unescape(v)?));
        }
    }
    let fields = Fields(fields);
    match kind {
        "ok" => Ok(Line::Ok(fields)),
        "end" => {
            fields.num::<usize>("count").map_err(|e| format!("'end' line: {e}"))?;
            Ok(Line::End(fields))
        }
        _ => Ok(Line::Data(kind.to_string(), fields)),
    }
}

/// Why a request failed.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// The engine answered `err <code> <message>`; it is still usable.
    Refused {
        /// The error code.
        code: String,
        /// The engine's message.
        message: String,
    },
    /// The session is broken (dead process, timeout, malformed or truncated answer); the
    /// engine is not used again.
    Broken(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Both quote the engine: escaped and cut, so run.json notes stay one bounded line.
        match self {
            Failure::Refused { code, message } => write!(
                f,
                "engine refused ({}): {}",
                crate::text::one_line(code, 60),
                crate::text::one_line(message, MAX_QUOTE)
            ),
            Failure::Broken(m) => f.write_str(&crate::text::one_line(m, MAX_QUOTE)),
        }
    }
}

/// The `hello` answer.
#[derive(Clone, Debug, Default)]
pub struct Hello {
    /// The engine's name.
    pub engine: String,
    /// Its implementation name in result files.
    pub implementation: String,
    /// Its language.
    pub language: String,
    /// The clock it times with.
    pub timer: String,
    /// That clock's resolution, ns.
    pub resolution_ns: f64,
    /// Every field of the line.
    pub fields: Fields,
}

impl Hello {
    pub(super) fn parse(f: &Fields) -> Result<Hello, String> {
        let p: u32 = f.num("protocol")?;
        if p != PROTOCOL {
            return Err(format!("engine answered protocol {p}, this lwcbench speaks {PROTOCOL}"));
        }
        let implementation = f.req("implementation")?.to_string();
        if implementation.is_empty() || implementation.contains('/') {
            return Err(format!("implementation '{implementation}' must be non-empty and without '/'"));
        }
        let language = f.req("language")?.to_string();
        language_of(&language)?;
        Ok(Hello {
            engine: f.req("engine")?.to_string(),
            implementation,
            language,
            timer: f.req("timer")?.to_string(),
            resolution_ns: f.num("resolution-ns")?,
            fields: f.clone(),
        })
    }
    /// One line for run.json notes and `list`.
    pub fn describe(&self) -> String {
        let f = &self.fields;
        let lib = match (f.get("library"), f.get("library-version")) {
            (Some(l), Some(v)) => format!(", {l} {v}"),
            (Some(l), None) => format!(", {l}"),
            _ => String::new(),
        };
        let rt = f.get("runtime").map(|r| format!(", {r}")).unwrap_or_default();
        format!(
            "engine {} {}{lib}{rt}; timer {} (resolution {} ns)",
            self.engine,
            f.get("engine-version").unwrap_or(""),
            self.timer,
            self.resolution_ns
        )
    }
}

pub(super) fn language_of(s: &str) -> Result<Language, String> {
    match s {
        "Rust" => Ok(Language::Rust),
        "C" => Ok(Language::C),
        "C++" => Ok(Language::Cpp),
        "Python" => Ok(Language::Python),
        _ => Err(format!("language '{}' is not one of Rust, C, C++, Python", clip(s))),
    }
}

/// One cipher an engine offers (a `cipher` line of `list`).
#[derive(Clone, Debug, PartialEq)]
pub struct Offer {
    /// Cipher name.
    pub name: String,
    /// stream, block or aead.
    pub family: Family,
    /// Key length, bits.
    pub key_bits: u16,
    /// IV/nonce length, bits.
    pub iv_bits: u16,
    /// Block length, bits.
    pub block_bits: u16,
    /// Tag length, bits.
    pub tag_bits: u16,
    /// Scenarios it can time.
    pub scenarios: Vec<Scenario>,
}

impl Offer {
    pub(super) fn parse(f: &Fields) -> Result<Offer, String> {
        let name = f.req("name")?.to_string();
        if name.is_empty() || name.contains('/') {
            return Err(format!("cipher name '{name}' must be non-empty and without '/'"));
        }
        let family = match f.req("family")? {
            "block" => Family::Block,
            "aead" => Family::Aead,
            "stream" => Family::Stream,
            "mode" => Family::Mode,
            x => return Err(format!("family '{}' is not block, aead, stream or mode", clip(x))),
        };
        let bits = |k: &str| -> Result<u16, String> {
            let v: u16 = f.num(k)?;
            if !v.is_multiple_of(8) {
                return Err(format!("field '{k}': {v} is not a whole number of bytes"));
            }
            Ok(v)
        };
        let key_bits = bits("key-bits")?;
        if key_bits == 0 {
            return Err("field 'key-bits': 0".into());
        }
        let scenarios = f
            .req("scenarios")?
            .split(',')
            .map(|s| {
                Scenario::parse(s)
                    .filter(|sc| sc.applies_to(family))
                    .ok_or_else(|| format!("scenario '{}' is not one for family {}", clip(s), family.as_str()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Offer {
            name,
            family,
            key_bits,
            iv_bits: bits("iv-bits")?,
            block_bits: bits("block-bits")?,
            tag_bits: bits("tag-bits")?,
            scenarios,
        })
    }
}
