//! Probes the native AES libraries (docs/aes-libraries.md). For each one whose Cargo feature
//! is on, `pkg-config` decides: found → link it and set `cfg(lwc_<lib>)`; not found → no cfg,
//! and a message (shown by `lwcbench list`/`verify`) instead of a build failure.
use std::ffi::OsString;
use std::process::Command;

/// pkg-config's search variables, the target's own first (`PKG_CONFIG_LIBDIR_aarch64_unknown_linux_gnu`,
/// the names the pkg-config crate reads), so one cargo call can build several targets, each
/// finding only its own libraries.
const SEARCH_VARS: [&str; 3] = ["PKG_CONFIG_LIBDIR", "PKG_CONFIG_PATH", "PKG_CONFIG_SYSROOT_DIR"];

fn targeted(var: &str) -> Option<OsString> {
    let target = std::env::var("TARGET").unwrap_or_default();
    std::env::var_os(format!("{var}_{target}"))
        .or_else(|| std::env::var_os(format!("{var}_{}", target.replace('-', "_"))))
        .or_else(|| std::env::var_os(var))
}

fn pkg_config_cmd() -> Command {
    let mut c = Command::new("pkg-config");
    for var in SEARCH_VARS {
        match targeted(var) {
            Some(v) => c.env(var, v),
            None => c.env_remove(var),
        };
    }
    c
}

fn pkg_config(name: &str) -> Option<(String, String)> {
    let out = pkg_config_cmd().args(["--libs", "--cflags", name]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let ver = pkg_config_cmd().args(["--modversion", name]).output().ok()?;
    Some((
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&ver.stdout).trim().to_string(),
    ))
}

fn link_flags(flags: &str) -> Vec<String> {
    flags.split_whitespace().filter_map(|f| f.strip_prefix("-I").map(str::to_string)).collect()
}

fn emit_libs(flags: &str) {
    for f in flags.split_whitespace() {
        if let Some(p) = f.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={p}");
        } else if let Some(l) = f.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={l}");
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=native/wolf_shim.c");
    let target = std::env::var("TARGET").unwrap_or_default();
    for var in SEARCH_VARS {
        println!("cargo:rerun-if-env-changed={var}");
        println!("cargo:rerun-if-env-changed={var}_{target}");
        println!("cargo:rerun-if-env-changed={var}_{}", target.replace('-', "_"));
    }
    println!("cargo::rustc-check-cfg=cfg(lwc_gcrypt)");
    println!("cargo::rustc-check-cfg=cfg(lwc_wolfssl)");
    let feature = |f: &str| std::env::var_os(format!("CARGO_FEATURE_{}", f.to_uppercase())).is_some();

    let gcrypt = if !feature("gcrypt") {
        "gcrypt: not built — the `gcrypt` feature of lwcbench-catalog is off".to_string()
    } else if let Some((flags, ver)) = pkg_config("libgcrypt") {
        emit_libs(&flags);
        println!("cargo:rustc-cfg=lwc_gcrypt");
        format!("gcrypt {ver}")
    } else {
        println!("cargo:warning=libgcrypt not found by pkg-config: AES rows of gcrypt are off (run scripts/setup.sh)");
        "gcrypt: not built — libgcrypt20-dev not found at build time (pkg-config libgcrypt); run scripts/setup.sh and rebuild".to_string()
    };
    println!("cargo:rustc-env=LWC_GCRYPT_STATUS={gcrypt}");

    let wolf = if !feature("wolfssl") {
        "wolfssl: not built — the `wolfssl` feature of lwcbench-catalog is off".to_string()
    } else if let Some((flags, ver)) = pkg_config("wolfssl") {
        let mut b = cc::Build::new();
        b.file("native/wolf_shim.c").warnings(true);
        for inc in link_flags(&flags) {
            b.include(inc);
        }
        b.compile("lwc_wolf_shim");
        emit_libs(&flags);
        println!("cargo:rustc-cfg=lwc_wolfssl");
        format!("wolfssl {ver}")
    } else {
        println!("cargo:warning=wolfssl not found by pkg-config: AES rows of wolfssl are off (run scripts/setup.sh)");
        "wolfssl: not built — libwolfssl-dev not found at build time (pkg-config wolfssl); run scripts/setup.sh and rebuild".to_string()
    };
    println!("cargo:rustc-env=LWC_WOLFSSL_STATUS={wolf}");
}
