//! Parser for Crypto++ `TestVectors/*.txt` files (format described in the shared
//! `cryptopp-testvectors/Readme.txt`): sections separated by blank lines, `Name: value`
//! fields, `\` continuation, `#` comments, values as hex / `0x` hex / `"quoted"` / `rN token`.
//! A `Test:` field closes one test, which uses the latest value of every field before it.
use std::collections::BTreeMap;
use std::path::Path;

/// One test: the field values in force at its `Test:` line (raw text), plus its line number.
#[derive(Clone, Debug)]
pub struct Test {
    /// Line of the `Test:` field.
    pub line: usize,
    /// Field name to raw value.
    pub fields: BTreeMap<String, String>,
}

impl Test {
    /// A field's raw value.
    pub fn get(&self, k: &str) -> Option<&str> {
        self.fields.get(k).map(|s| s.as_str())
    }
    /// Decode a field as an encoded string (hex, quoted or repeated).
    pub fn bytes(&self, k: &str) -> Result<Vec<u8>, String> {
        let v = self.get(k).ok_or_else(|| format!("line {}: field {k} missing", self.line))?;
        decode_value(v).map_err(|e| format!("line {}: field {k}: {e}", self.line))
    }
}

/// Decode a Crypto++ "encoded string".
pub fn decode_value(v: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut rest = v.trim();
    while !rest.is_empty() {
        let (bytes, r) = decode_token(rest)?;
        out.extend_from_slice(&bytes);
        rest = r.trim_start();
    }
    Ok(out)
}

fn decode_token(s: &str) -> Result<(Vec<u8>, &str), String> {
    if let Some(q) = s.strip_prefix('"') {
        let end = q.find('"').ok_or("unterminated quoted string")?;
        return Ok((q.as_bytes()[..end].to_vec(), &q[end + 1..]));
    }
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    let (tok, rest) = (&s[..end], &s[end..]);
    if let Some(n) = tok.strip_prefix('r').and_then(|n| n.parse::<usize>().ok()) {
        let (unit, rest) = decode_token(rest.trim_start())?;
        return Ok((unit.repeat(n), rest));
    }
    let hex = tok.strip_prefix("0x").unwrap_or(tok);
    Ok((super::text::unhex(hex)?, rest))
}

/// Parse a file; the error names the file and line.
pub fn parse_file(path: &Path) -> Result<Vec<Test>, String> {
    let text = crate::kat::files::read_text(path)?;
    parse_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parse the text of a test-vector file; errors name the line.
pub fn parse_str(text: &str) -> Result<Vec<Test>, String> {
    let mut tests = Vec::new();
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    let mut pending: Option<(String, String, usize)> = None; // field being continued
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.split('#').next().unwrap_or("");
        if let Some((name, mut body, start)) = pending.take() {
            let cont = line.trim_end().ends_with('\\');
            body.push(' ');
            body.push_str(line.trim().trim_end_matches('\\'));
            if cont {
                pending = Some((name, body, start));
            } else {
                finish(&mut fields, &mut tests, name, body, start);
            }
            continue;
        }
        if line.trim().is_empty() {
            if raw.trim().is_empty() {
                fields.clear(); // blank line ends a section
            }
            continue;
        }
        let Some((name, body)) = line.split_once(':') else {
            return Err(format!("line {lineno}: expected 'Name: value', found {:?}", raw.trim()));
        };
        let name = name.trim().to_string();
        let body = body.trim();
        if body.ends_with('\\') {
            pending = Some((name, body.trim_end_matches('\\').to_string(), lineno));
        } else {
            finish(&mut fields, &mut tests, name, body.to_string(), lineno);
        }
    }
    if let Some((name, _, l)) = pending {
        return Err(format!("line {l}: field {name} continued past end of file"));
    }
    Ok(tests)
}

/// Fields that apply to the next `Test:` only.
pub const PER_TEST_FIELDS: &[&str] = &["InitialBlock", "Seek"];

/// Parse an unsigned number written in decimal or `0x` hex.
pub fn parse_uint(s: &str) -> Result<u64, String> {
    let t = s.trim();
    match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse::<u64>(),
    }
    .map_err(|e| format!("{t:?}: {e}"))
}

fn finish(fields: &mut BTreeMap<String, String>, tests: &mut Vec<Test>, name: String, body: String, line: usize) {
    if name == "Test" {
        let mut f = fields.clone();
        f.insert("Test".into(), body.trim().to_string());
        tests.push(Test { line, fields: f });
        // Stream positions describe one test only: the ChaChaTLS file sets InitialBlock for
        // a test and expects the next one to start at block 0 again.
        for k in PER_TEST_FIELDS {
            fields.remove(*k);
        }
    } else {
        fields.insert(name, body.trim().to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_decode_by_hand() {
        assert_eq!(decode_value("00 01 0x0203").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(decode_value("\"ab\"").unwrap(), b"ab".to_vec());
        assert_eq!(decode_value("r3 00").unwrap(), vec![0, 0, 0]);
        assert_eq!(decode_value("r2 0x0102 ff").unwrap(), vec![1, 2, 1, 2, 0xff]);
        assert!(decode_value("0g").is_err());
    }

    #[test]
    fn sections_and_continuations() {
        let t = "Name: X\nKey: 00 \\\n     01 # comment\nIV: 02\nTest: Encrypt\nIV: 03\nTest: Encrypt\n\nName: Y\nTest: Encrypt\n";
        let tests = parse_str(t).unwrap();
        assert_eq!(tests.len(), 3);
        assert_eq!(tests[0].bytes("Key").unwrap(), vec![0, 1]);
        assert_eq!(tests[0].bytes("IV").unwrap(), vec![2]);
        assert_eq!(tests[1].bytes("IV").unwrap(), vec![3]);
        assert_eq!(tests[1].get("Name"), Some("X"));
        assert!(tests[2].get("Key").is_none(), "fields must not leak across sections");
        let t = parse_str("Name: X\nInitialBlock: 2\nTest: Encrypt\nTest: Encrypt\n").unwrap();
        assert_eq!(t[0].get("InitialBlock"), Some("2"));
        assert_eq!(t[1].get("InitialBlock"), None, "InitialBlock applies to one test");
        assert_eq!(parse_uint("0xfffffffe"), Ok(0xfffffffe));
        assert_eq!(parse_uint("42"), Ok(42));
        assert!(parse_str("garbage line\n").unwrap_err().contains("line 1"));
    }
}
