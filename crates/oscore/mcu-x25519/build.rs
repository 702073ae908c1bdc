//! Links with mcu/images/lwc.ld, the memory map mcu/emulate.py maps.
fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../mcu/images");
    println!("cargo:rustc-link-search={dir}");
    println!("cargo:rustc-link-arg-bins=-Tlwc.ld");
    println!("cargo:rerun-if-changed={dir}/lwc.ld");
}
