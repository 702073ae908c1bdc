//! What the chosen radio's carrier already protects and what the link's end-to-end encryption
//! adds (data/carrier-security.csv; docs/choose.md "The frame priced"). Data only: nothing here
//! ranks.
use serde::Serialize;

/// The built-in data/carrier-security.csv.
pub const CARRIER_SECURITY_CSV: &str = include_str!("../../../data/carrier-security.csv");

/// A row of data/carrier-security.csv.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CarrierSecurity {
    /// The carrier (LoRaWAN, BLE, ...).
    pub carrier: String,
    /// Radios whose name starts with this ride the carrier.
    pub radio_prefix: String,
    /// The carrier's own encryption and integrity.
    pub link_layer: String,
    /// The carrier's integrity tag in bits.
    pub mic_bits: u32,
    /// Where the carrier's protection ends.
    pub protects_to: String,
    /// Who holds the carrier's keys.
    pub keys_held_by: String,
    /// What the link's end-to-end AEAD adds.
    pub end_to_end_adds: String,
    /// "sourced" or "estimate".
    pub status: String,
    /// Where every statement comes from.
    pub source: String,
}

/// Parse a carrier-security table; the error names the file and line.
pub fn parse(text: &str, origin: &str) -> Result<Vec<CarrierSecurity>, String> {
    let cols = [
        "carrier",
        "radio_prefix",
        "link_layer",
        "mic_bits",
        "protects_to",
        "keys_held_by",
        "end_to_end_adds",
        "status",
        "source",
    ];
    let mut out: Vec<CarrierSecurity> = Vec::new();
    for (line, f) in lwcbench_data::board::records(text, origin, &cols)? {
        if let Some(i) = [0, 1, 2, 4, 5, 6, 8].into_iter().find(|&i| f[i].is_empty()) {
            return Err(format!("{origin}: line {line}: column {} is empty", cols[i]));
        }
        let mic_bits = f[3].parse::<u32>().ok().filter(|b| *b == 0 || (8..=256).contains(b)).ok_or_else(|| {
            format!("{origin}: line {line}: mic_bits '{}' is not 0 (none) or a number of bits in 8..=256", f[3])
        })?;
        if !matches!(f[7].as_str(), "sourced" | "estimate") {
            return Err(format!("{origin}: line {line}: status '{}' is not sourced or estimate", f[7]));
        }
        if out.iter().any(|r| r.radio_prefix == f[1]) {
            return Err(format!("{origin}: line {line}: radio_prefix '{}' appears twice", f[1]));
        }
        out.push(CarrierSecurity {
            carrier: f[0].clone(),
            radio_prefix: f[1].clone(),
            link_layer: f[2].clone(),
            mic_bits,
            protects_to: f[4].clone(),
            keys_held_by: f[5].clone(),
            end_to_end_adds: f[6].clone(),
            status: f[7].clone(),
            source: f[8].clone(),
        });
    }
    Ok(out)
}

/// The row of the radio named `radio` in the built-in table (None: no row covers it).
pub fn for_radio(radio: &str) -> Option<CarrierSecurity> {
    // The built-in table is checked by a test; a broken copy gives no row rather than a panic.
    parse(CARRIER_SECURITY_CSV, "data/carrier-security.csv")
        .ok()?
        .into_iter()
        .filter(|r| radio.starts_with(&r.radio_prefix))
        .max_by_key(|r| r.radio_prefix.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in radio has its carrier's row, and LoRaWAN's says what the specification
    /// says (4-byte MIC with the NwkSKey, AES-128 CTR with the AppSKey: LoRaWAN 1.0.4 4.3.3, 4.4).
    #[test]
    fn every_builtin_radio_has_its_carrier() {
        let rows = parse(CARRIER_SECURITY_CSV, "data/carrier-security.csv").unwrap();
        assert_eq!(rows.len(), 5);
        for r in lwcbench_data::radio::builtin() {
            assert!(for_radio(&r.name).is_some(), "{}", r.name);
        }
        let lw = for_radio("LoRa-SF9").unwrap();
        assert_eq!((lw.carrier.as_str(), lw.mic_bits, lw.status.as_str()), ("LoRaWAN", 32, "sourced"));
        assert!(lw.link_layer.contains("AppSKey") && lw.link_layer.contains("NwkSKey"));
        assert!(lw.end_to_end_adds.contains("16-byte tag"));
        assert_eq!(for_radio("BLE-1M").unwrap().carrier, "BLE");
        assert_eq!(for_radio("WiFi-n-MCS7").unwrap().mic_bits, 64);
        assert!(for_radio("Ethernet").is_none());
    }

    #[test]
    fn bad_rows_are_refused_with_their_line() {
        let head = "carrier,radio_prefix,link_layer,mic_bits,protects_to,keys_held_by,end_to_end_adds,status,source\n";
        let row = |mic: &str, status: &str| format!("X,X-,enc,{mic},ap,op,e2e,{status},src\n");
        assert!(parse(&format!("{head}{}", row("32", "sourced")), "f").is_ok());
        assert_eq!(
            parse(&format!("{head}{}", row("4", "sourced")), "f").unwrap_err(),
            "f: line 2: mic_bits '4' is not 0 (none) or a number of bits in 8..=256"
        );
        assert!(parse(&format!("{head}{}", row("32", "guess")), "f").unwrap_err().contains("line 2: status"));
        assert!(parse(&format!("{head}{}{}", row("32", "sourced"), row("32", "sourced")), "f")
            .unwrap_err()
            .contains("line 3: radio_prefix 'X-' appears twice"));
        assert!(parse(&format!("{head}X,X-,,32,ap,op,e2e,sourced,src\n"), "f").unwrap_err().contains("link_layer"));
    }
}
