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
}

impl Entry {
    pub fn stream(make: fn() -> Box<dyn StreamCipher + Send>, verify: fn(&VerifyCtx) -> Vec<Check>) -> Self {
        let info = make().info();
        assert_eq!(info.family, Family::Stream, "{} registered as stream", info.name);
        Entry { info, make: Make::Stream(make), verify }
    }
    pub fn block(make: fn() -> Box<dyn BlockCipher + Send>, verify: fn(&VerifyCtx) -> Vec<Check>) -> Self {
        let info = make().info();
        assert_eq!(info.family, Family::Block, "{} registered as block", info.name);
        Entry { info, make: Make::Block(make), verify }
    }
    pub fn aead(make: fn() -> Box<dyn Aead + Send>, verify: fn(&VerifyCtx) -> Vec<Check>) -> Self {
        let info = make().info();
        assert_eq!(info.family, Family::Aead, "{} registered as aead", info.name);
        Entry { info, make: Make::Aead(make), verify }
    }
    pub fn mode(make: fn() -> Box<dyn CipherMode + Send>, verify: fn(&VerifyCtx) -> Vec<Check>) -> Self {
        let info = make().info();
        assert_eq!(info.family, Family::Mode, "{} registered as mode", info.name);
        Entry { info, make: Make::Mode(make), verify }
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
    let hit = all.iter().position(|e| e.id().eq_ignore_ascii_case(s)).or_else(|| all.iter().position(|e| e.info.name.eq_ignore_ascii_case(s)));
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
}
