use super::*;
use crate::plan::{expand, Selection};
#[allow(unused_imports)]
use lwcbench_catalog::Make;
#[allow(unused_imports)]
use lwcbench_core::{Aead, BlockCipher, CipherMode, StreamCipher};

/// Every scenario of an unauthenticated AES mode measures through ModeOp, and the
/// reading scenario does not apply to it.
#[test]
fn aes_modes_measure_keysetup_encrypt_decrypt() {
    let sel = Selection {
        ciphers: vec!["AES-128-CBC/rustcrypto".into(), "AES-256-CTR/rustcrypto".into()],
        scenarios: vec![Scenario::Keysetup, Scenario::Encrypt, Scenario::Decrypt],
        sizes_bits: vec![8 * 17],
        ..Default::default()
    };
    let groups = expand(&sel).unwrap();
    assert!(groups.len() >= 6, "{} groups", groups.len());
    let cfg = Config { reps: 2, warmup: 0, min_sample_ns: 1000.0, ..Default::default() };
    for g in &groups {
        let r = measure_group(g, &cfg, || {}).unwrap_or_else(|e| panic!("{e}"));
        assert!(r.samples.iter().all(|s| s.ns > 0.0), "{}", g.label());
    }
    assert!(!Scenario::Reading.applies_to(lwcbench_core::Family::Mode));
}
