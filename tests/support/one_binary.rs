//! For a test crate built as one binary (`autotests = false` and one `[[test]]` whose root
//! declares every other `tests/*.rs` as a module): a file added beside them and not declared
//! would silently never run, so the root checks that none is missing. Included with `#[path]`.

/// Panics naming every `tests/*.rs` file of the crate at `manifest_dir` that its root
/// `tests/main.rs` (source `root_src`) does not declare as `mod <stem>;`.
pub fn assert_all_declared(manifest_dir: &str, root_src: &str) {
    let missing = undeclared(&std::path::Path::new(manifest_dir).join("tests"), "main.rs", root_src);
    assert!(missing.is_empty(), "tests/{missing:?} not declared in tests/main.rs: they would never run");
}

/// The `tests/*.rs` files (other than `root`) that `root_src` does not declare as `mod <stem>;`.
fn undeclared(tests_dir: &std::path::Path, root: &str, root_src: &str) -> Vec<String> {
    let mut missing: Vec<String> = std::fs::read_dir(tests_dir)
        .unwrap_or_else(|e| panic!("{}: {e}", tests_dir.display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".rs") && n != root)
        .filter(|n| !root_src.lines().any(|l| l.trim() == format!("mod {};", &n[..n.len() - 3])))
        .collect();
    missing.sort();
    missing
}
