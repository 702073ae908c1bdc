//! Puts `lwc.ld` (flash + RAM regions) on the link line of every image.
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    println!("cargo:rustc-link-search={dir}");
    println!("cargo:rustc-link-arg-bins=-Tlwc.ld");
    println!("cargo:rerun-if-changed=lwc.ld");
}
