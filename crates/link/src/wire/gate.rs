//! Which suites the link refuses without an explicit flag, and how the allowed ones are labelled
//! (docs/security.md "Gated ciphers").
//!
//! * DRACO (ids 32–34) is this project's reconstruction of the published cipher, and the
//!   published cipher has a known attack (Banik, "Cryptanalysis of Draco", IACR ToSC 2022(4)):
//!   refused without `--allow-provisional`, labelled PROVISIONAL when allowed.
//! * Suites with keys under 112 bits (NIST SP 800-131A's floor; the 80-bit Trivium, Grain v1
//!   and MICKEY 2.0) are refused without `--unsafe-short-key`, labelled UNSAFE when allowed.
use crate::wire::suite::Suite;
pub use crate::wire::suite::MIN_KEY_BITS;

/// Why DRACO needs `--allow-provisional`, as every message and label says it.
pub const PROVISIONAL_WHY: &str =
    "a provisional reconstruction of a cipher with a known attack (Banik, 'Cryptanalysis of Draco', ToSC 2022(4))";

/// The explicit flags a link path was given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gate {
    /// `--allow-provisional`.
    pub allow_provisional: bool,
    /// `--unsafe-short-key`.
    pub unsafe_short_key: bool,
}

impl Gate {
    /// `Err` (one line naming the cipher, the flag and the reason) for a suite not allowed.
    pub fn check(&self, s: &Suite) -> Result<(), String> {
        if s.is_provisional() && !self.allow_provisional {
            return Err(format!("--cipher: {} is {PROVISIONAL_WHY}; pass --allow-provisional to use it", s.name()));
        }
        if s.is_short_key() && !self.unsafe_short_key {
            return Err(format!(
                "--cipher: {} has a key of {} bits, under the {MIN_KEY_BITS}-bit minimum; pass --unsafe-short-key to use it",
                s.name(),
                s.key_len() * 8
            ));
        }
        Ok(())
    }

    /// [`Gate::check`] for every suite.
    pub fn check_all(&self, suites: &[Suite]) -> Result<(), String> {
        suites.iter().try_for_each(|s| self.check(s))
    }
}

/// "PROVISIONAL " / "UNSAFE short key " / "" to put before a suite's name on a line of output.
pub fn prefix(s: &Suite) -> String {
    s.labels().iter().map(|l| format!("{l} ")).collect()
}

/// The flags a child process (`link gateway`, `link device`) needs for a suite its parent
/// already allowed.
pub fn flags(s: &Suite) -> Vec<&'static str> {
    let mut f = Vec::new();
    if s.is_provisional() {
        f.push("--allow-provisional");
    }
    if s.is_short_key() {
        f.push("--unsafe-short-key");
    }
    f
}

/// The run record's notes for the labelled suites among `suites`, one per suite.
pub fn notes(suites: &[Suite]) -> Vec<String> {
    suites
        .iter()
        .filter_map(|s| {
            let mut why = Vec::new();
            if s.is_provisional() {
                why.push(format!("PROVISIONAL: {PROVISIONAL_WHY}"));
            }
            if s.is_short_key() {
                why.push(format!("UNSAFE: a key of {} bits, under {MIN_KEY_BITS}", s.key_len() * 8));
            }
            (!why.is_empty()).then(|| format!("{}: {}", s.name(), why.join("; ")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::suite::find;

    /// The gated ids are those of the catalogue's table as docs/link.md publishes it: DRACO
    /// 32–34 provisional; Trivium (35), Grain v1 (38), MICKEY 2.0 (39) with 10-byte keys.
    #[test]
    fn gated_suites_are_draco_and_the_80_bit_keys() {
        let all = crate::wire::suite::offered();
        let prov: Vec<u8> = all.iter().filter(|s| s.is_provisional()).map(|s| s.id).collect();
        let short: Vec<u8> = all.iter().filter(|s| s.is_short_key()).map(|s| s.id).collect();
        assert_eq!(prov, [32, 33, 34]);
        assert_eq!(short, [35, 38, 39]);
    }

    #[test]
    fn refused_without_the_flag_allowed_with_it() {
        let none = Gate::default();
        let d = find("DRACO").unwrap();
        let e = none.check(&d).unwrap_err();
        assert!(
            e.contains("DRACO/rust-fast") && e.contains("--allow-provisional") && e.contains("ToSC 2022(4)"),
            "{e}"
        );
        let t = find("Trivium").unwrap();
        let e = none.check(&t).unwrap_err();
        assert!(e.contains("Trivium/rust has a key of 80 bits") && e.contains("--unsafe-short-key"), "{e}");
        assert!(none.check(&find("Ascon-AEAD128").unwrap()).is_ok());
        assert!(Gate { allow_provisional: true, ..Gate::default() }.check(&d).is_ok());
        assert!(Gate { allow_provisional: true, ..Gate::default() }.check(&t).is_err());
        assert!(Gate { unsafe_short_key: true, ..Gate::default() }.check(&t).is_ok());
        assert_eq!(prefix(&d), "PROVISIONAL ");
        assert_eq!(prefix(&t), "UNSAFE short key ");
        assert_eq!(prefix(&find("Ascon-AEAD128").unwrap()), "");
    }
}
