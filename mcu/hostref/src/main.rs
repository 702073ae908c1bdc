//! `lwc-mcu-hostref IMAGE KEY_HEX IV_HEX NBITS` prints the host implementation's keystream
//! (hex, `ceil(NBITS/8)` bytes) after `init(key, iv)`, for the cipher of MCU image `IMAGE`.
//! Used by `mcu/tests/test_counts.py` to check the bytes written in emulation.
use lwcbench_core::StreamCipher;

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
    let Some(mut c) = cipher(&a[1]) else {
        eprintln!("unknown image {}", a[1]);
        std::process::exit(2);
    };
    let nbits: usize = a[4].parse().expect("NBITS");
    c.init(&unhex(&a[2]), &unhex(&a[3])).expect("init");
    let mut out = vec![0u8; nbits.div_ceil(8)];
    c.keystream_bits(&mut out, nbits).expect("keystream");
    println!("{}", out.iter().map(|b| format!("{b:02x}")).collect::<String>());
}
