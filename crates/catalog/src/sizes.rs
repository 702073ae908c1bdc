//! Key and IV sizes each implementation really accepts, beyond the nominal ones in
//! [`CipherInfo`] (which benchmarks use). Listed by `lwcbench list`, accepted by
//! `lwcbench encrypt/decrypt/keystream`, checked by the stream contract
//! ([`crate::conformance::check_stream`]) and used by the eSTREAM vector sets that need
//! them (MICKEY 2.0 at IV 0/32/64 bits, Sosemanuk with 128- and 256-bit keys).
use lwcbench_core::CipherInfo;

/// Accepted sizes in bits, ascending; always whole bytes and always containing the nominal size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Accepted key sizes.
    pub key_bits: Vec<u16>,
    /// Accepted IV sizes.
    pub iv_bits: Vec<u16>,
}

fn bytes(lo: u16, hi: u16) -> Vec<u16> {
    (lo..=hi).step_by(8).collect()
}

/// The sizes `info`'s implementation accepts. Where nothing is listed here, only the nominal
/// sizes are accepted.
pub fn supported(info: &CipherInfo) -> Sizes {
    let nominal = Sizes { key_bits: vec![info.key_bits], iv_bits: vec![info.iv_bits] };
    match (info.name, info.implementation) {
        // Shorter IVs are zero-extended as in the eSTREAM reference code (Trivium spec §2.2:
        // "IV of up to 80 bits"; MICKEY 2.0 spec §2.1: IV of 0 to 80 / 0 to 128 bits).
        ("Trivium", "rust") => Sizes { iv_bits: bytes(0, 80), ..nominal },
        ("MICKEY-2.0", "rust") => Sizes { iv_bits: bytes(0, 80), ..nominal },
        ("MICKEY-128-2.0", "rust") => Sizes { iv_bits: bytes(0, 128), ..nominal },
        // Sosemanuk keys of 1 to 32 bytes go through Serpent's key schedule (Sosemanuk spec
        // §2.2; the eSTREAM sets use 128 and 256 bits); the IV is always 128 bits.
        ("Sosemanuk", "rust") => Sizes { key_bits: bytes(8, 256), ..nominal },
        _ => nominal,
    }
}

/// "80", "0-80/8" (every whole byte from 0 to 80 bits) or "128,256".
pub fn describe(v: &[u16]) -> String {
    match v {
        [one] => one.to_string(),
        [a, b, ..] if v.windows(2).all(|w| w[1] - w[0] == 8) => format!("{a}-{}/{}", v[v.len() - 1], b - a),
        _ => v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_forms() {
        assert_eq!(describe(&[80]), "80");
        assert_eq!(describe(&bytes(0, 80)), "0-80/8");
        assert_eq!(describe(&[128, 256]), "128,256");
    }

    /// Every registered implementation accepts its nominal sizes and each listed size, and the
    /// ciphers named in the estream-regenerated sets list what those sets need.
    #[test]
    fn listed_sizes_are_accepted() {
        for e in crate::registry() {
            let s = supported(&e.info);
            assert!(s.key_bits.contains(&e.info.key_bits) && s.iv_bits.contains(&e.info.iv_bits), "{}", e.id());
            if let Some(crate::Make::Stream(mk)) = e.make {
                for &k in &s.key_bits {
                    for &iv in &s.iv_bits {
                        let r = mk().init(&vec![7u8; k as usize / 8], &vec![9u8; iv as usize / 8]);
                        assert!(r.is_ok(), "{} key {k} IV {iv}: {r:?}", e.id());
                    }
                }
            }
        }
        let get = |id: &str| supported(&crate::find(id).unwrap().info);
        assert!(get("MICKEY-2.0/rust").iv_bits.contains(&32));
        assert!(get("Sosemanuk/rust").key_bits.contains(&256));
        assert_eq!(get("Trivium/rust").iv_bits.first(), Some(&0));
    }
}
