//! Presets: named selections that reproduce a study's experiment. Each one fills a
//! [`Selection`] and measurement settings; command-line options given explicitly override it.
use crate::dataset::{Dataset, Encode};
use crate::plan::{Payload, Scenario, Selection, DEFAULT_SIZES};
use crate::studies::StudyFn;

pub struct Preset {
    pub name: &'static str,
    pub about: &'static str,
    pub selection: fn() -> Selection,
    pub reps: usize,
    pub warmup: usize,
    /// Extra tables derived after measurement (see [`crate::studies`]).
    pub study: Option<StudyFn>,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "quick",
        about: "ChaCha20 and ChaCha20-Poly1305, every scenario, 20 repetitions: a smoke test of the whole tool in about a second",
        selection: || Selection { ciphers: vec!["ChaCha20".into(), "ChaCha20-Poly1305".into()], ..Default::default() },
        reps: 20,
        warmup: 3,
        study: None,
    },
    Preset {
        name: "draco-study",
        about: "The DRACO study's suite: C++ and Rust × {full, keystream, init} × four <k,iv> variants × {1, 8, 128, 1024} bits × 100 repetitions after 10 excluded warm-ups",
        selection: || Selection {
            ciphers: vec!["DRACO".into()],
            scenarios: vec![Scenario::Full, Scenario::Keystream, Scenario::Init],
            sizes_bits: DEFAULT_SIZES.to_vec(),
            ..Default::default()
        },
        reps: 100,
        warmup: 10,
        study: None,
    },
    Preset {
        name: "sensor-study",
        about: "The DRACO study's headline experiment: `full` over 702 real 32-bit sensor readings (22,464 bits; built-in office-building data or --dataset FILE) against a random payload of the same length, 100 runs per <k,iv> after warm-up; Table 1, Table 2 and a Mann-Whitney test; plus per-reading encryption with a counter IV. DRACO by default, --all for every stream cipher and AEAD",
        selection: sensor_selection,
        reps: 100,
        warmup: 10,
        study: None,
    },
    Preset {
        name: "aes-libs",
        about: "The four-library AES study: every AES mode (ECB, CBC, CFB, CFB8, OFB, CTR, GCM, CCM, EAX, OCB, SIV) × key size 128/192/256 × library (RustCrypto, OpenSSL, libgcrypt, wolfSSL — those built) × {16 B, 1 KiB, 16 KiB, 64 KiB}, keysetup/encrypt/decrypt; writes support_matrix.csv/.md, ciphertext_lengths.csv and aes_libs.csv (median + CI, geometric mean over each library's modes)",
        selection: aes_libs_selection,
        reps: 30,
        warmup: 3,
        study: Some(crate::studies::aes_libs::run),
    },
];

fn aes_libs_selection() -> Selection {
    let mut ciphers = Vec::new();
    for k in lwcbench_catalog::aes::Kind::ALL {
        for b in lwcbench_catalog::aes::KEY_BITS {
            ciphers.push(lwcbench_catalog::aes::name(k, b).to_string());
        }
    }
    Selection {
        ciphers,
        scenarios: vec![Scenario::Keysetup, Scenario::Encrypt, Scenario::Decrypt],
        sizes_bits: vec![16 * 8, 1024 * 8, 16384 * 8, 65536 * 8],
        ..Default::default()
    }
}

fn sensor_selection() -> Selection {
    let d = Dataset::builtin();
    let bytes = d.payload(&Encode::default()).expect("built-in dataset has 702 readings");
    Selection {
        ciphers: vec!["DRACO".into()],
        // full for stream ciphers, encrypt for AEADs (with --all), reading for both
        scenarios: vec![Scenario::Full, Scenario::Encrypt, Scenario::Reading],
        sizes_bits: vec![bytes.len() * 8],
        payloads: vec![Payload::dataset(&d.name, bytes), Payload::random()],
        ..Default::default()
    }
}

/// The preset `lwcbench run` uses without arguments.
pub fn default_preset() -> &'static Preset {
    let has_draco = lwcbench_catalog::registry().iter().any(|e| e.info.name == "DRACO");
    find(if has_draco { "draco-study" } else { "quick" }).expect("built-in preset")
}

pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}
