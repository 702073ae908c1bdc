use lwcbench_core::{Aead, BlockCipher, CipherInfo, CipherMode, Family, StreamCipher};

use crate::verify::{Check, VerifyCtx};

/// How to make a fresh instance of an implementation.
#[derive(Clone, Copy)]
pub enum Make {
    Stream(fn() -> Box<dyn StreamCipher + Send>),
    Block(fn() -> Box<dyn BlockCipher + Send>),
    Aead(fn() -> Box<dyn Aead + Send>),
    /// A confidentiality-only block-cipher mode (AES-ECB/CBC/CFB/OFB/CTR; see `crate::aes`).
    Mode(fn() -> Box<dyn CipherMode + Send>),
}

/// One implementation of one algorithm.
#[derive(Clone)]
pub struct Entry {
    pub info: CipherInfo,
    pub make: Make,
    /// Runs this implementation's known-answer and cross-check tests.
    pub verify: fn(&VerifyCtx) -> Vec<Check>,
    /// Applied by the benchmark engine to every IV it draws at random, so that a drawn IV
    /// selects the mode the entry is measured in (Grain-128a: IV bit 0 would otherwise pick
    /// the half-rate authentication mode for half the draws). `None`: any IV is as good.
    pub iv_rule: Option<fn(&mut [u8])>,
}

impl Entry {
    pub fn stream(make: fn() -> Box<dyn StreamCipher + Send>, verify: fn(&VerifyCtx) -> Vec<Check>) -> Self {
        let info = make().info();
        assert_eq!(info.family, Family::Stream, "{} registered as stream", info.name);
        Entry { info, make: Make::Stream(make), verify, iv_rule: None }
    }
    pub fn block(make: fn() -> Box<dyn BlockCipher + Send>, verify: fn(&VerifyCtx) -> Vec<Check>) -> Self {
        let info = make().info();
        assert_eq!(info.family, Family::Block, "{} registered as block", info.name);
        Entry { info, make: Make::Block(make), verify, iv_rule: None }
    }
    pub fn aead(make: fn() -> Box<dyn Aead + Send>, verify: fn(&VerifyCtx) -> Vec<Check>) -> Self {
        let info = make().info();
        assert_eq!(info.family, Family::Aead, "{} registered as aead", info.name);
        Entry { info, make: Make::Aead(make), verify, iv_rule: None }
    }
    pub fn mode(make: fn() -> Box<dyn CipherMode + Send>, verify: fn(&VerifyCtx) -> Vec<Check>) -> Self {
        let info = make().info();
        assert_eq!(info.family, Family::Mode, "{} registered as mode", info.name);
        Entry { info, make: Make::Mode(make), verify, iv_rule: None }
    }
    /// This entry with a rule for drawn IVs (see `iv_rule`).
    pub fn with_iv_rule(mut self, rule: fn(&mut [u8])) -> Self {
        self.iv_rule = Some(rule);
        self
    }
    /// Does a user's selector name this entry? A bare algorithm name selects every
    /// implementation of it; "name/impl" selects one (both case-insensitive).
    pub fn matches(&self, selector: &str) -> bool {
        self.info.name.eq_ignore_ascii_case(selector) || self.id().eq_ignore_ascii_case(selector)
    }
    /// "cipher/implementation", the id used on the command line.
    pub fn id(&self) -> String {
        format!("{}/{}", self.info.name, self.info.implementation)
    }
}

/// The one entry a selector names: an exact "name/impl" id first, else the first
/// implementation of a bare algorithm name (case-insensitive).
pub fn find(selector: &str) -> Option<Entry> {
    let all = registry();
    let s = selector.trim();
    let hit = all
        .iter()
        .position(|e| e.id().eq_ignore_ascii_case(s))
        .or_else(|| all.iter().position(|e| e.info.name.eq_ignore_ascii_case(s)));
    hit.map(|i| all[i].clone())
}

/// Every implementation, in listing order. Each family module appends its own entries.
pub fn registry() -> Vec<Entry> {
    let mut r = Vec::new();
    crate::adapters::draco::register(&mut r);
    crate::adapters::draco_cpp::register(&mut r);
    crate::adapters::estream::register(&mut r);
    crate::adapters::rustcrypto::register(&mut r);
    crate::adapters::lightweight::register(&mut r);
    crate::aes::register(&mut r);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_sizes_sane() {
        let r = registry();
        assert!(!r.is_empty());
        let mut ids: Vec<_> = r.iter().map(|e| e.id().to_lowercase()).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate cipher/implementation ids");
        for e in &r {
            assert!(e.info.key_bits % 8 == 0 && e.info.key_bits > 0, "{}", e.id());
            assert!(e.info.iv_bits % 8 == 0, "{}", e.id());
            assert!(!e.info.implementation.contains('/'), "{}", e.id());
        }
    }

    /// Grain-128a is measured in keystream mode: a drawn IV loses only its mode bit IV_0
    /// (MSB of byte 0, paper §2.1), and the cipher then gives the keystream-mode output
    /// (first pre-output bits of the paper's first vector, Appendix A).
    #[test]
    fn grain128a_draws_keystream_mode_ivs() {
        let e = find("Grain-128a/rust").unwrap();
        let mut iv = [0xffu8; 12];
        (e.iv_rule.expect("Grain-128a has an IV rule"))(&mut iv);
        assert_eq!(iv[0], 0x7f);
        assert!(iv[1..].iter().all(|&b| b == 0xff));
        let mut iv = [0x80u8; 12];
        (e.iv_rule.unwrap())(&mut iv);
        let Make::Stream(mk) = e.make else { panic!("stream") };
        let mut c = mk();
        c.init(&[0; 16], &[iv[0], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        let mut z = [0u8; 4];
        c.keystream(&mut z).unwrap();
        assert_eq!(z, [0xc0, 0x20, 0x7f, 0x22]);
        assert!(registry().iter().filter(|e| e.iv_rule.is_some()).all(|e| e.info.name == "Grain-128a"));
    }
}
