//! Generated from the catalogue entries' microcontroller images by crates/catalog/src/mcu_glue.rs
//! (`LWCBENCH_BLESS=1 cargo test --profile citest -p lwcbench-catalog mcu_glue`): edit the entries, not this file.
//! Each image's host implementation, with the block or tag size its harness uses.
use lwcbench_core::{Aead, BlockCipher, StreamCipher};

use crate::rc;

/// A stream-cipher image's implementation.
pub fn stream(image: &str) -> Option<Box<dyn StreamCipher>> {
    Some(match image {
        "draco_ref" => Box::new(lwcbench_draco::DracoRef::default()),
        "draco_fast" => Box::new(lwcbench_draco::DracoFast::default()),
        "trivium" => Box::new(lwcbench_estream::Trivium::default()),
        "grain_v1" => Box::new(lwcbench_estream::GrainV1::default()),
        "grain128a" => Box::new(lwcbench_estream::Grain128a::default()),
        "hc128" => Box::new(lwcbench_estream::Hc128::default()),
        "mickey_v2" => Box::new(lwcbench_estream::MickeyV2::default()),
        "mickey128" => Box::new(lwcbench_estream::Mickey128v2::default()),
        "sosemanuk" => Box::new(lwcbench_estream::Sosemanuk::default()),
        "rc_salsa20" => Box::new(<rc::RcStream<salsa20::Salsa20>>::default()),
        "rc_rabbit" => Box::new(<rc::RcStream<rabbit::Rabbit>>::default()),
        "rc_chacha20" => Box::new(<rc::RcStream<chacha20::ChaCha20>>::default()),
        _ => return None,
    })
}

/// A block-cipher image's implementation and its block size in bytes.
pub fn block(image: &str) -> Option<(Box<dyn BlockCipher>, usize)> {
    Some(match image {
        "rc_aes128" => (Box::new(<rc::RcBlock<aes::Aes128>>::default()), 16),
        "rc_speck64_128" => (Box::new(<rc::RcBlock<speck_cipher::Speck64_128>>::default()), 8),
        "rc_speck128_128" => (Box::new(<rc::RcBlock<speck_cipher::Speck128_128>>::default()), 16),
        "rc_xtea" => (Box::new(<rc::RcBlock<xtea::Xtea>>::default()), 8),
        "lea128" => (Box::new(lwcbench_lightweight::lea::Lea128::default()), 16),
        "hight" => (Box::new(lwcbench_lightweight::hight::Hight::default()), 8),
        "simon64_128" => (Box::new(<lwcbench_lightweight::simon::Simon<lwcbench_lightweight::simon::Simon64_128>>::default()), 8),
        "simon128_128" => (Box::new(<lwcbench_lightweight::simon::Simon<lwcbench_lightweight::simon::Simon128_128>>::default()), 16),
        _ => return None,
    })
}

/// An AEAD image's implementation and its tag size in bytes.
pub fn aead(image: &str) -> Option<(Box<dyn Aead>, usize)> {
    Some(match image {
        "rc_chacha20poly1305" => (Box::new(<rc::RcAead6<chacha20poly1305::ChaCha20Poly1305>>::default()), 16),
        "rc_ascon_aead128" => (Box::new(<rc::RcAead6<ascon_aead128::AsconAead128>>::default()), 16),
        "rc_ascon128" => (Box::new(rc::Ascon128::default()), 16),
        "tinyjambu" => (Box::new(lwcbench_lightweight::tinyjambu::TinyJambu128::default()), 8),
        "xoodyak" => (Box::new(lwcbench_lightweight::xoodyak::Xoodyak::default()), 16),
        "schwaemm" => (Box::new(lwcbench_lightweight::schwaemm::Schwaemm256_128::default()), 16),
        "grain128aead" => (Box::new(lwcbench_lightweight::grain128aead::Grain128AeadV2::default()), 8),
        "rc_aes128_gcm" => (Box::new(<rc::RcAead6<aes_gcm::Aes128Gcm>>::default()), 16),
        "rc_aes128_ccm" => (Box::new(<rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U16, ccm::consts::U12>>>::default()), 16),
        "rc_aes128_ccm_star" => (Box::new(<rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U16, ccm::consts::U13>>>::default()), 16),
        "rc_aes128_ccm_star8" => (Box::new(<rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U8, ccm::consts::U13>>>::default()), 8),
        "rc_aes128_ccm_star4" => (Box::new(<rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U4, ccm::consts::U13>>>::default()), 4),
        _ => return None,
    })
}
