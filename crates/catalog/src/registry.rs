//! The list of every implementation: `registry()` asks each adapter module to append its
//! entries (see `entry.rs` for what an entry holds).
use crate::entry::Entry;

/// The one entry a selector names: an exact "name/impl" id first, else the first
/// implementation of a bare algorithm name (case-insensitive). `-star` may stand for the `*` of
/// CCM* (`AES-128-CCM-STAR-8`), which shells that refuse an unmatched glob (zsh) would
/// otherwise need quoted.
pub fn find(selector: &str) -> Option<Entry> {
    let all = registry();
    let starred = crate::entry::star(selector.trim());
    let s = starred.as_str();
    let hit = all
        .iter()
        .position(|e| e.id().eq_ignore_ascii_case(s))
        .or_else(|| all.iter().position(|e| e.info.name.eq_ignore_ascii_case(s)));
    hit.map(|i| all[i].clone())
}

/// The tag-length variants of an AEAD entry, in listing order: the entries of the same
/// implementation named `BASE` or `BASE-<tag bytes>` (as TLS names its 8-byte-tag CCM suites,
/// RFC 6655 AES_128_CCM_8), where `BASE` is the entry's name without such a suffix. Only the
/// entry itself for an AEAD without variants; empty for a cipher without a tag.
pub fn tag_variants(e: &Entry) -> Vec<Entry> {
    if e.info.family != lwcbench_core::Family::Aead {
        return Vec::new();
    }
    let suffix = |name: &str, tag: usize| -> Option<String> {
        let (base, n) = name.rsplit_once('-')?;
        (n.parse::<usize>().ok()? == tag).then(|| base.to_string())
    };
    let base = suffix(e.info.name, e.info.tag_bytes()).unwrap_or_else(|| e.info.name.to_string());
    registry()
        .into_iter()
        .filter(|o| o.info.family == lwcbench_core::Family::Aead && o.info.implementation == e.info.implementation)
        .filter(|o| o.info.name == base || suffix(o.info.name, o.info.tag_bytes()).as_deref() == Some(base.as_str()))
        .collect()
}

/// Every implementation, in listing order. Each family module appends its own entries.
pub fn registry() -> Vec<Entry> {
    let mut r = Vec::new();
    crate::adapters::own::draco::register(&mut r);
    crate::adapters::own::draco_cpp::register(&mut r);
    // Listing order is the order before the move by source (a bare name selects the first
    // implementation, and mcu/images.json follows it), hence the interleaving.
    crate::adapters::own::estream::register(&mut r);
    crate::adapters::rustcrypto::salsa_rabbit::register(&mut r);
    crate::adapters::rustcrypto::chacha::register(&mut r);
    crate::adapters::rustcrypto::block::register_aes(&mut r);
    crate::adapters::rustcrypto::ascon::register(&mut r);
    crate::adapters::rustcrypto::block::register(&mut r);
    crate::adapters::own::lightweight::register(&mut r);
    crate::aes::register(&mut r);
    crate::adapters::rustcrypto::misuse::register(&mut r);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Make;

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

    /// The known-answer test of the whole catalogue: every entry passes its own verification,
    /// as `lwcbench verify` runs it, with the shared vector folder (where present) and from the
    /// repository alone. Alone, every check that needs the folder reports a skip, and every
    /// entry still runs a transcribed file of `kat-data/` — except DRACO (a provisional
    /// reconstruction with no published vectors: checked against its stored checksum) and the
    /// AES library matrix of `crate::aes` (checked for agreement with the reference library
    /// where no transcribed vector covers a mode).
    #[test]
    fn every_entry_passes_its_known_answer_tests() {
        let full = crate::VerifyCtx::discover();
        let repo = crate::VerifyCtx::default();
        let mut bad = Vec::new();
        for e in registry() {
            eprintln!("verifying {}", e.id()); // names the entry if an implementation panics
            for (label, ctx, alone) in [("shared folder", &full, false), ("repository alone", &repo, true)] {
                let checks = e.checks(ctx);
                if checks.iter().all(|c| c.skipped) {
                    bad.push(format!("{} ({label}): no check ran", e.id()));
                }
                for c in checks.iter().filter(|c| !c.ok()) {
                    bad.push(format!("{} ({label}) {}: {:?}", c.id, c.what, &c.failures[..c.failures.len().min(3)]));
                }
                let aes_matrix = e.info.name.starts_with("AES-") && e.info.name.len() > "AES-128".len();
                let transcribed = checks.iter().any(|c| !c.skipped && c.what.starts_with("kat-data/"));
                if alone && !transcribed && e.info.name != "DRACO" && !aes_matrix {
                    bad.push(format!("{}: no transcribed file of kat-data/ runs", e.id()));
                }
            }
        }
        assert!(bad.is_empty(), "{} failing checks:\n{}", bad.len(), bad.join("\n"));
    }

    /// CCM*'s MIC lengths are variants of one another (and of nothing else), and `-star`
    /// names the `*`.
    #[test]
    fn ccm_star_variants_and_spelling() {
        let names = |e: &Entry| tag_variants(e).iter().map(|v| v.info.name).collect::<Vec<_>>();
        let star = find("aes-128-ccm-star-8").unwrap();
        assert_eq!(star.id(), "AES-128-CCM*-8/rustcrypto");
        assert_eq!(names(&star), ["AES-128-CCM*", "AES-128-CCM*-8", "AES-128-CCM*-4"]);
        assert_eq!(names(&find("AES-128-CCM*").unwrap()), ["AES-128-CCM*", "AES-128-CCM*-8", "AES-128-CCM*-4"]);
        assert_eq!(names(&find("AES-128-GCM/rustcrypto").unwrap()), ["AES-128-GCM"]);
        // a name ending in digits that are not its tag length is no variant (Salsa20-128: no tag)
        assert!(tag_variants(&find("Salsa20-128").unwrap()).is_empty());
        assert!(find("AES-128-CCM-STARS").is_none());
        // `lwcbench verify --cipher` and `run --cipher` select with `matches`
        assert!(find("AES-128-CCM*-4").unwrap().matches("aes-128-ccm-star-4"));
        assert!(!find("AES-128-CCM*-4").unwrap().matches("aes-128-ccm-star"));
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
        let Some(Make::Stream(mk)) = e.make else { panic!("stream") };
        let mut c = mk();
        c.init(&[0; 16], &[iv[0], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        let mut z = [0u8; 4];
        c.keystream(&mut z).unwrap();
        assert_eq!(z, [0xc0, 0x20, 0x7f, 0x22]);
        assert!(registry().iter().filter(|e| e.iv_rule.is_some()).all(|e| e.info.name == "Grain-128a"));
    }
}
