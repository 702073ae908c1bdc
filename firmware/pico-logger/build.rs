//! The Pico's memory map is firmware/pico's memory.x (BOOT2 + flash + RAM); it is put on the
//! linker's search path for cortex-m-rt's link.x, not copied into this crate.
use std::{env, fs, path::PathBuf};

fn main() {
    let map = PathBuf::from("../pico/memory.x");
    let dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(dir.join("memory.x"), fs::read(&map).expect("firmware/pico/memory.x")).expect("OUT_DIR writable");
    println!("cargo:rerun-if-changed={}", map.display());
    println!("cargo:rustc-link-search={}", dir.display());
    for arg in ["--nmagic", "-Tlink.x"] {
        println!("cargo:rustc-link-arg-bins={arg}");
    }
}
