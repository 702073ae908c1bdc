//! Puts `lwc.ld` (flash + RAM regions) on the link line of every image.
fn main() {
    // Cargo sets it when compiling the build script too.
    let dir = env!("CARGO_MANIFEST_DIR");
    println!("cargo:rustc-link-search={dir}");
    println!("cargo:rustc-link-arg-bins=-Tlwc.ld");
    println!("cargo:rerun-if-changed=lwc.ld");
}
