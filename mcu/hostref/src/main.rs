//! `lwc-mcu-hostref IMAGE KEY_HEX IV_HEX NBITS` prints the host implementation's keystream
//! (hex, `ceil(NBITS/8)` bytes) after `init(key, iv)`, for the cipher of MCU image `IMAGE`.
//! Used by `mcu/tests/test_counts.py` to check the bytes written in emulation.
//!
//! Block-cipher images: `NBITS/8` zero bytes encrypted block by block (ECB) under KEY (IV
//! ignored). AEAD images: `NBITS/8` zero bytes encrypted with nonce IV and empty associated
//! data, followed by the tag — what the images' `lwc_keystream` writes (mcu/README.md).
use lwcbench_core::{Aead, BlockCipher, StreamCipher};

/// The MCU images' RustCrypto adapters, the same source compiled natively.
#[path = "../../images/src/rc.rs"]
mod rc;

fn block(image: &str) -> Option<Box<dyn BlockCipher>> {
    use lwcbench_lightweight as l;
    Some(match image {
        "lea128" => Box::new(l::lea::Lea128::default()),
        "hight" => Box::new(l::hight::Hight::default()),
        "simon64_128" => Box::new(l::simon::Simon::<l::simon::Simon64_128>::default()),
        "simon128_128" => Box::new(l::simon::Simon::<l::simon::Simon128_128>::default()),
        "rc_aes128" => Box::new(rc::RcBlock::<aes::Aes128>::default()),
        "rc_speck64_128" => Box::new(rc::RcBlock::<speck_cipher::Speck64_128>::default()),
        "rc_speck128_128" => Box::new(rc::RcBlock::<speck_cipher::Speck128_128>::default()),
        "rc_xtea" => Box::new(rc::RcBlock::<xtea::Xtea>::default()),
        _ => return None,
    })
}

fn aead(image: &str) -> Option<Box<dyn Aead>> {
    use lwcbench_lightweight as l;
    Some(match image {
        "tinyjambu" => Box::new(l::tinyjambu::TinyJambu128::default()),
        "xoodyak" => Box::new(l::xoodyak::Xoodyak::default()),
        "schwaemm" => Box::new(l::schwaemm::Schwaemm256_128::default()),
        "grain128aead" => Box::new(l::grain128aead::Grain128AeadV2::default()),
        "rc_ascon128" => Box::new(rc::Ascon128::default()),
        "rc_ascon_aead128" => Box::new(rc::RcAead6::<ascon_aead128::AsconAead128>::default()),
        "rc_chacha20poly1305" => Box::new(rc::RcAead6::<chacha20poly1305::ChaCha20Poly1305>::default()),
        _ => return None,
    })
}

fn cipher(image: &str) -> Option<Box<dyn StreamCipher>> {
    use lwcbench_estream as e;
    Some(match image {
        "draco_ref" => Box::new(lwcbench_draco::DracoRef::default()),
        "draco_fast" => Box::new(lwcbench_draco::DracoFast::default()),
        "trivium" => Box::new(e::Trivium::default()),
        "grain_v1" => Box::new(e::GrainV1::default()),
        "grain128a" => Box::new(e::Grain128a::default()),
        "mickey_v2" => Box::new(e::MickeyV2::default()),
        "mickey128" => Box::new(e::Mickey128v2::default()),
        "hc128" => Box::new(e::Hc128::default()),
        "sosemanuk" => Box::new(e::Sosemanuk::default()),
        "rc_chacha20" => Box::new(rc::RcStream::<chacha20::ChaCha20>::default()),
        "rc_salsa20" => Box::new(rc::RcStream::<salsa20::Salsa20>::default()),
        "rc_rabbit" => Box::new(rc::RcStream::<rabbit::Rabbit>::default()),
        _ => return None,
    })
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex")).collect()
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 5 {
        eprintln!("usage: lwc-mcu-hostref IMAGE KEY_HEX IV_HEX NBITS");
        std::process::exit(2);
    }
    let nbits: usize = a[4].parse().expect("NBITS");
    let (key, iv) = (unhex(&a[2]), unhex(&a[3]));
    let hex = |v: &[u8]| v.iter().map(|b| format!("{b:02x}")).collect::<String>();
    if let Some(mut c) = block(&a[1]) {
        c.set_key(&key).expect("set_key");
        let mut buf = vec![0u8; nbits / 8];
        // the block size from the image's harness parameters (the RustCrypto adapters' info is
        // a placeholder)
        let bs = match a[1].as_str() {
            "hight" | "simon64_128" | "rc_speck64_128" | "rc_xtea" => 8,
            _ => 16,
        };
        for b in buf.chunks_exact_mut(bs) {
            c.encrypt_block(b);
        }
        println!("{}", hex(&buf));
        return;
    }
    if let Some(mut c) = aead(&a[1]) {
        c.set_key(&key).expect("set_key");
        let mut buf = vec![0u8; nbits / 8];
        let tl = match a[1].as_str() {
            "tinyjambu" | "grain128aead" => 8,
            _ => 16,
        };
        let mut tag = vec![0u8; tl];
        c.encrypt(&iv, &[], &mut buf, &mut tag).expect("encrypt");
        println!("{}{}", hex(&buf), hex(&tag));
        return;
    }
    let Some(mut c) = cipher(&a[1]) else {
        eprintln!("unknown image {}", a[1]);
        std::process::exit(2);
    };
    c.init(&key, &iv).expect("init");
    let mut out = vec![0u8; nbits.div_ceil(8)];
    c.keystream_bits(&mut out, nbits).expect("keystream");
    println!("{}", hex(&out));
}
