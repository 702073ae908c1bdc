//! Builds `cpp/draco/draco.cpp` (DRACO, shared/specs/draco.md) with the `cc` crate and tells
//! the crate which compiler and flags were used, so result files can record them.
use std::path::Path;
use std::process::Command;

const SRC: &str = "../../cpp/draco/draco.cpp";
const INC: &str = "../../cpp/draco";

fn main() {
    println!("cargo:rerun-if-changed={SRC}");
    println!("cargo:rerun-if-changed={INC}/draco.h");
    println!("cargo:rerun-if-changed=build.rs");

    let mut b = cc::Build::new();
    b.cpp(true)
        .std("c++17")
        .opt_level(3)
        // The embedded constraints, enforced by the compiler: no exceptions, no RTTI, and
        // warnings are errors so the source stays clean.
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .warnings(true)
        .extra_warnings(true)
        .flag("-pedantic")
        .warnings_into_errors(true)
        // cc forces frame pointers whenever debug info is on (the release profile keeps line
        // tables); rustc does not, so leave the register free as the Rust variants do.
        .force_frame_pointer(false)
        .include(INC)
        .file(SRC);

    let tool = b.get_compiler();
    let version = Command::new(tool.path())
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown version".to_owned());
    let flags: Vec<String> = tool.args().iter().map(|a| a.to_string_lossy().into_owned()).collect();
    println!("cargo:rustc-env=LWCBENCH_CXX={} ({})", resolve(tool.path()).display(), version);
    println!("cargo:rustc-env=LWCBENCH_CXX_FLAGS={}", flags.join(" "));

    // The source must also build for 32-bit MCUs (ESP32, Cortex-M): where the host compiler
    // can, compile it once for i386 without a C library; a 64-bit-only construct fails here.
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.starts_with("x86_64") && tool.is_like_gnu() {
        let st = Command::new(tool.path())
            .args(["-m32", "-ffreestanding", "-fsyntax-only", "-std=c++17", "-fno-exceptions", "-fno-rtti"])
            .args(["-Wall", "-Wextra", "-pedantic", "-Werror", "-I", INC, SRC])
            .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
            .status();
        match st {
            Ok(s) if s.success() => {}
            Ok(s) => panic!("draco.cpp does not compile for a 32-bit target (-m32): {s}"),
            Err(e) => panic!("could not run {}: {e}", tool.path().display()),
        }
    }

    b.compile("lwcbench_draco_cpp");
}

/// Full path of a compiler given by bare name ("c++"), looked up in PATH like the shell does.
fn resolve(p: &Path) -> std::path::PathBuf {
    if p.components().count() > 1 {
        return p.to_path_buf();
    }
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(p)).find(|c| c.is_file()))
        .unwrap_or_else(|| p.to_path_buf())
}
