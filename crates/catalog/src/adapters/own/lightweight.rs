//! Registration of the own `lwcbench-lightweight` code (see its module docs) with its
//! known-answer tests: LEA-128, HIGHT, SIMON (ten sizes), TinyJAMBU-128 (v2), Xoodyak,
//! SCHWAEMM256-128, Grain-128AEADv2. The RustCrypto lightweight ciphers (AES-128, Ascon,
//! SPECK, XTEA) are in `adapters/rustcrypto/`.
//!
//! Ids: names avoid '/' (it separates cipher and implementation), so SIMON64/128 is
//! `SIMON-64-128/rust-ref`. For AEADs `block_bits` is the rate (bytes absorbed per
//! permutation call).
use lwcbench_core::BlockCipher;
use lwcbench_lightweight as lw;

use crate::adapters::rustcrypto::block::SpeckEntry;
use crate::conformance::check_block;
use crate::entry::{Entry, McuImage};
use crate::kat::block::{block_cryptopp, block_kv, KvFormat};
use crate::kat::lwc::verify_lwc_aead;
use crate::kat::{repo_file, shared};
use crate::verify::{Check, VerifyCtx};

/// Add this module's entries to the registry.
pub fn register(r: &mut Vec<Entry>) {
    r.push(Entry::block(mk_lea128, verify_lea128).mcu("lea128", "lwcbench_lightweight::lea::Lea128"));
    r.push(Entry::block(mk_hight, verify_hight).mcu("hight", "lwcbench_lightweight::hight::Hight"));
    for s in SIMONS {
        r.push(s.entry());
    }
    // Own AEADs (NIST LWC finalists): the transcribed file, then the shared ones.
    r.push(
        Entry::aead(|| Box::new(lw::tinyjambu::TinyJambu128::default()), verify_lwc_aead)
            .kat("lw-tinyjambu128.txt", &["lwc-finalists-rweather/TinyJAMBU-128.txt"])
            .mcu("tinyjambu", "lwcbench_lightweight::tinyjambu::TinyJambu128"),
    );
    r.push(
        Entry::aead(|| Box::new(lw::xoodyak::Xoodyak::default()), verify_lwc_aead)
            .kat("lw-xoodyak.txt", &["lwc-finalists-rweather/Xoodyak.txt"])
            .mcu("xoodyak", "lwcbench_lightweight::xoodyak::Xoodyak"),
    );
    r.push(
        Entry::aead(|| Box::new(lw::schwaemm::Schwaemm256_128::default()), verify_lwc_aead)
            .kat("lw-schwaemm256-128.txt", &["lwc-finalists-rweather/Schwaemm256-128.txt"])
            .mcu("schwaemm", "lwcbench_lightweight::schwaemm::Schwaemm256_128"),
    );
    r.push(
        Entry::aead(|| Box::new(lw::grain128aead::Grain128AeadV2::default()), verify_lwc_aead)
            .kat(
                "lw-grain128aeadv2.txt",
                &[
                    "grain128aead-designers/v2_final_Noxet-Grain-128AEAD/LWC_AEAD_KAT_128_96.txt",
                    "lwc-finalists-rweather/Grain-128AEAD.txt",
                ],
            )
            .mcu("grain128aead", "lwcbench_lightweight::grain128aead::Grain128AeadV2"),
    );
}

// ---------------------------------------------------------------------------------------
// Own block ciphers

macro_rules! simon {
    ($($ty:ident, $name:literal, $paper:literal, $cpp:expr, $mcu:expr;)*) => {
        const SIMONS: &[SpeckEntry] = &[$(
            SpeckEntry {
                mk: || -> Box<dyn BlockCipher + Send> { Box::new(lw::simon::Simon::<lw::simon::$ty>::default()) },
                verify: |e: &Entry, ctx: &VerifyCtx| -> Vec<Check> {
                    let mk = match e.block_make() {
                        Ok(mk) => mk,
                        Err(c) => return vec![c],
                    };
                    let id = &e.id();
                    let mut v = vec![
                        check_block(mk),
                        block_kv(mk, &repo_file("lw-simon-speck.txt"), KvFormat::Paper($paper)),
                        shared(ctx, id, "simon-speck-paper/simon_speck_eprint2013-404_appendixB_C.txt", |p| block_kv(mk, p, KvFormat::Paper($paper))),
                    ];
                    let cpp: Option<&str> = $cpp;
                    if let Some(n) = cpp {
                        let names = [format!("{n}/ECB"), format!("{n}/CBC"), format!("{n}/CTR")];
                        let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
                        v.push(shared(ctx, id, "cryptopp-testvectors/simon.txt", |p| block_cryptopp(mk, p, &names, None)));
                    }
                    v
                },
                mcu: match $mcu {
                    Some(name) => Some(McuImage::new(name, concat!("lwcbench_lightweight::simon::Simon<lwcbench_lightweight::simon::", stringify!($ty), ">"))),
                    None => None,
                },
            },
        )*];
    };
}

simon! {
    Simon32_64, "SIMON-32-64", "SIMON32/64", None, None;
    Simon48_72, "SIMON-48-72", "SIMON48/72", None, None;
    Simon48_96, "SIMON-48-96", "SIMON48/96", None, None;
    Simon64_96, "SIMON-64-96", "SIMON64/96", Some("SIMON-64"), None;
    Simon64_128, "SIMON-64-128", "SIMON64/128", Some("SIMON-64"), Some("simon64_128");
    Simon96_96, "SIMON-96-96", "SIMON96/96", None, None;
    Simon96_144, "SIMON-96-144", "SIMON96/144", None, None;
    Simon128_128, "SIMON-128-128", "SIMON128/128", Some("SIMON-128"), Some("simon128_128");
    Simon128_192, "SIMON-128-192", "SIMON128/192", Some("SIMON-128"), None;
    Simon128_256, "SIMON-128-256", "SIMON128/256", Some("SIMON-128"), None;
}

fn mk_lea128() -> Box<dyn BlockCipher + Send> {
    Box::new(lw::lea::Lea128::default())
}

fn verify_lea128(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = mk_lea128;
    vec![
        check_block(mk),
        block_cryptopp(mk, &repo_file("lw-lea.txt"), &["LEA-128/ECB"], None),
        shared(ctx, "LEA-128/rust-ref", "cryptopp-testvectors/lea.txt", |p| {
            block_cryptopp(mk, p, &["LEA-128/ECB", "LEA-128/CBC", "LEA-128/CTR"], None)
        }),
    ]
}

fn mk_hight() -> Box<dyn BlockCipher + Send> {
    Box::new(lw::hight::Hight::default())
}

fn verify_hight(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = mk_hight;
    vec![
        check_block(mk),
        block_cryptopp(mk, &repo_file("lw-hight.txt"), &["HIGHT/ECB"], None),
        shared(ctx, "HIGHT/rust-ref", "cryptopp-testvectors/hight.txt", |p| {
            block_cryptopp(mk, p, &["HIGHT/ECB", "HIGHT/CBC", "HIGHT/CTR"], None)
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kat::lwc;

    fn aead(id: &str) -> fn() -> Box<dyn lwcbench_core::Aead + Send> {
        crate::find(id).and_then(|e| e.aead_make().ok()).unwrap_or_else(|| panic!("{id} is a registered AEAD"))
    }

    #[test]
    fn runners_can_fail() {
        // A cipher that is not AES must fail the AES vectors; a damaged file must fail loudly.
        let chk = block_cryptopp(mk_hight, &repo_file("lw-lea.txt"), &["LEA-128/ECB"], None);
        assert!(!chk.ok(), "HIGHT cannot pass LEA vectors (sizes differ → no usable test)");
        let chk = block_cryptopp(mk_lea128, &repo_file("lw-aes.txt"), &["AES/ECB"], None);
        assert!(!chk.ok() && !chk.failures.is_empty());
        let ctx = VerifyCtx::discover();
        if let Some(p) = ctx.file("grain128aead-designers/v1_round2_Grain-128AEAD-sw-ref/LWC_AEAD_KAT_128_96.txt") {
            // the obsolete v1 KAT must fail for every vector (encryption differs)
            let chk = lwc::aead_lwc(aead("Grain-128AEADv2/rust-ref"), &p);
            assert!(chk.failures.iter().filter(|f| f.contains("encrypt")).count() == 1089, "{}", chk.failures.len());
        }
        let dir = std::env::temp_dir().join(format!("lwcbench-lw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.txt");
        std::fs::write(&bad, "Count = 1\nKey = 00\nNonce = zz\n").unwrap();
        assert!(!lwc::aead_lwc(aead("TinyJAMBU-128/rust-ref"), &bad).ok());
        std::fs::write(&bad, "[HIGHT]\nKey 00\n").unwrap();
        assert!(!block_kv(mk_hight, &bad, KvFormat::Botan).ok());
        std::fs::remove_dir_all(&dir).ok();
    }
}
