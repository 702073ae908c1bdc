//! Puts `lwc.ld` (flash + RAM regions) on the link line of every image; with the `ad-entry`
//! feature, also keeps `lwc_encrypt_ad`, which the linker script's roots do not name.
fn main() {
    // Cargo sets it when compiling the build script too.
    let dir = env!("CARGO_MANIFEST_DIR");
    println!("cargo:rustc-link-search={dir}");
    println!("cargo:rustc-link-arg-bins=-Tlwc.ld");
    println!("cargo:rerun-if-changed=lwc.ld");
    // Section garbage collection keeps only what the roots reach: the vectors' entry point is
    // one more root, in that build alone (the measured images' link line is unchanged).
    if std::env::var_os("CARGO_FEATURE_AD_ENTRY").is_some() {
        println!("cargo:rustc-link-arg-bins=--undefined=lwc_encrypt_ad");
    }
}
