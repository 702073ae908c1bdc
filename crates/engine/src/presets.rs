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
        name: "video-study",
        about: "The stream-cipher study's video workload: every stream cipher and AEAD encrypts whole frames of a real clip (default data/video/bigbuckbunny.y4m from ./scripts/setup.sh, or --video FILE.y4m), one frame per operation with a fresh counter IV, init included; every frame round-trips bit-exactly before timing; frames/s and MB/s with 95 % CIs over 30 repetitions per <k,iv>",
        selection: || Selection { all_stream_and_aead: true, scenarios: vec![Scenario::Frame], ..Default::default() },
        reps: 30,
        warmup: 3,
        study: None,
    },
    Preset {
        name: "lightweight-study",
        about: "The ESP32 lightweight-cipher study: AES-128, LEA-128, SPECK-64/128, XTEA, HIGHT, SCHWAEMM256-128, TinyJAMBU-128, Xoodyak × {keysetup, encrypt, decrypt} × {16, 64, 256, 1024} B, static and random key; per-block/per-byte time, throughput, modelled energy (ESP32 profile unless --power-profile/--watts), RR% against AES-128, memory per operation, WSM rankings (battery/speed, --weights) and a radar chart",
        selection: lightweight_selection,
        reps: 100,
        warmup: 10,
        study: Some(crate::studies::lightweight_rank::study),
    },
    Preset {
        name: "ics-latency",
        about: "ICS latency budget: every AEAD (AES modes at 128-bit keys, every library) seals and opens Modbus/TCP ADUs (12, 29, 260 B) and IEC 61850 GOOSE frames (160, 1522 B), 10,000 messages each, each message timed on its own; max, p99.9, p99, median, jitter and the worst case as % of the GOOSE 3 ms and IEC 60834-1 10 ms budgets (and --budget NAME=MS); warns when the CPU governor is not `performance`",
        selection: ics_selection,
        reps: 10_000,
        warmup: 100,
        study: Some(crate::studies::ics::study),
    },
    Preset {
        name: "stream-study",
        about: "The stream-cipher study's table for this machine: every stream cipher × {full, keystream, init} on 64 KiB with a fresh random key/IV per repetition, plus whole frames of the default video clip when ./scripts/setup.sh has made it, 30 repetitions; writes stream_study.csv with throughput, cycles/byte, init time, frames/s, code size, state + peak stack, RSS growth per byte, MODELLED energy (--power-profile, default Raspberry Pi Zero W; --watts), Rank and E-Rank, each with its 95 % CI (docs/metrics.md)",
        selection: crate::studies::stream_study::selection,
        reps: 30,
        warmup: 3,
        study: Some(crate::studies::stream_study::study),
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

fn lightweight_selection() -> Selection {
    use crate::plan::Kiv;
    Selection {
        ciphers: crate::studies::lightweight_rank::CIPHERS.iter().map(|s| s.to_string()).collect(),
        scenarios: vec![Scenario::Keysetup, Scenario::Encrypt, Scenario::Decrypt],
        sizes_bits: crate::studies::lightweight_rank::SIZES_BYTES.iter().map(|b| b * 8).collect(),
        kivs: vec![Kiv { random_key: false, random_iv: false }, Kiv { random_key: true, random_iv: false }],
        ..Default::default()
    }
}

fn ics_selection() -> Selection {
    use crate::plan::Kiv;
    // Every AEAD; AES modes at 128-bit keys only (the 192/256-bit variants add rows, not insight
    // into the budget), each in every library that offers it.
    let mut ciphers: Vec<String> = Vec::new();
    for e in lwcbench_catalog::registry().iter().filter(|e| e.info.family == lwcbench_core::Family::Aead) {
        let n = e.info.name;
        if !n.starts_with("AES-192-") && !n.starts_with("AES-256-") && !ciphers.iter().any(|c| c == n) {
            ciphers.push(n.to_string());
        }
    }
    Selection {
        ciphers,
        scenarios: vec![Scenario::Roundtrip],
        sizes_bits: crate::studies::ics::message_sizes_bits(),
        kivs: vec![Kiv { random_key: false, random_iv: false }],
        ..Default::default()
    }
}

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
