//! `lwc-mcu-hostref IMAGE KEY_HEX IV_HEX NBITS` prints the host implementation's keystream
//! (hex, `ceil(NBITS/8)` bytes) after `init(key, iv)`, for the cipher of MCU image `IMAGE`.
//! Used by `mcu/tests/test_counts.py` to check the bytes written in emulation.
//!
//! Block-cipher images: `NBITS/8` zero bytes encrypted block by block (ECB) under KEY (IV
//! ignored). AEAD images: `NBITS/8` zero bytes encrypted with nonce IV and empty associated
//! data, followed by the tag — what the images' `lwc_keystream` writes (mcu/README.md).
//!
//! The image names, types and sizes come from the catalogue: `images.rs` is generated from the
//! entries (crates/catalog/src/mcu_glue.rs), as are the images' sources.

/// Each image's implementation and sizes, generated from the catalogue.
#[rustfmt::skip] // generated: the layout is the generator's
mod images;
/// The MCU images' RustCrypto adapters, the same source compiled natively.
#[path = "../../images/src/rc.rs"]
mod rc;

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
    // the block and tag sizes are the image's harness parameters (the RustCrypto adapters'
    // info is a placeholder)
    if let Some((mut c, bs)) = images::block(&a[1]) {
        c.set_key(&key).expect("set_key");
        let mut buf = vec![0u8; nbits / 8];
        for b in buf.chunks_exact_mut(bs) {
            c.encrypt_block(b);
        }
        println!("{}", hex(&buf));
        return;
    }
    if let Some((mut c, tl)) = images::aead(&a[1]) {
        c.set_key(&key).expect("set_key");
        let mut buf = vec![0u8; nbits / 8];
        let mut tag = vec![0u8; tl];
        c.encrypt(&iv, &[], &mut buf, &mut tag).expect("encrypt");
        println!("{}{}", hex(&buf), hex(&tag));
        return;
    }
    let Some(mut c) = images::stream(&a[1]) else {
        eprintln!("unknown image {}", a[1]);
        std::process::exit(2);
    };
    c.init(&key, &iv).expect("init");
    let mut out = vec![0u8; nbits.div_ceil(8)];
    c.keystream_bits(&mut out, nbits).expect("keystream");
    println!("{}", hex(&out));
}
