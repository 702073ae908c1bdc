//! The list of every implementation: `registry()` asks each adapter module to append its
//! entries (see `entry.rs` for what an entry holds).
use crate::entry::Entry;

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

/// `mcu/images.json`: the microcontroller images of the catalogue (entries with an
/// `mcu_image`), one JSON object per line, read by `mcu/build.py`. Kept in the repository (the
/// MCU scripts run without a Rust build); the test `mcu_manifest_is_the_catalogues` fails when
/// it differs and `LWCBENCH_BLESS=1` rewrites it.
pub fn mcu_manifest() -> String {
    let q = |s: &str| serde_json::to_string(s).expect("a string serialises");
    let rows: Vec<String> = registry()
        .iter()
        .filter_map(|e| {
            let image = e.mcu_image?;
            let kind = match e.info.family {
                lwcbench_core::Family::Stream => "stream",
                lwcbench_core::Family::Block => "block",
                lwcbench_core::Family::Aead => "aead",
                lwcbench_core::Family::Mode => "mode",
            };
            Some(format!(
                "  {{\"image\": {}, \"cipher\": {}, \"implementation\": {}, \"kind\": {}}}",
                q(image),
                q(e.info.name),
                q(e.info.implementation),
                q(kind)
            ))
        })
        .collect();
    format!("[\n{}\n]\n", rows.join(",\n"))
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

    /// `mcu/images.json` is generated from the catalogue; every image it names has a source
    /// file in `mcu/images/src/bin/` and a match arm in `mcu/hostref/src/main.rs` (a separate
    /// no_std workspace that cannot read the catalogue), and every image source is listed.
    #[test]
    fn mcu_manifest_is_the_catalogues() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let path = root.join("mcu/images.json");
        let want = mcu_manifest();
        if std::env::var_os("LWCBENCH_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(have == want, "mcu/images.json differs from the catalogue; rerun with LWCBENCH_BLESS=1:\n{want}");
        let images: Vec<&str> = registry().iter().filter_map(|e| e.mcu_image).collect();
        assert!(images.len() >= 27, "{images:?}");
        let hostref = std::fs::read_to_string(root.join("mcu/hostref/src/main.rs")).unwrap();
        for im in &images {
            assert!(root.join(format!("mcu/images/src/bin/{im}.rs")).is_file(), "no mcu/images/src/bin/{im}.rs");
            assert!(hostref.contains(&format!("\"{im}\" => Box::new(")), "mcu/hostref/src/main.rs has no arm for {im}");
        }
        for f in std::fs::read_dir(root.join("mcu/images/src/bin")).unwrap() {
            let name = f.unwrap().file_name().to_string_lossy().trim_end_matches(".rs").to_string();
            assert!(name == "baseline" || images.contains(&name.as_str()), "image {name} has no catalogue entry");
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
        let Some(Make::Stream(mk)) = e.make else { panic!("stream") };
        let mut c = mk();
        c.init(&[0; 16], &[iv[0], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        let mut z = [0u8; 4];
        c.keystream(&mut z).unwrap();
        assert_eq!(z, [0xc0, 0x20, 0x7f, 0x22]);
        assert!(registry().iter().filter(|e| e.iv_rule.is_some()).all(|e| e.info.name == "Grain-128a"));
    }
}
