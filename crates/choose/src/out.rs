//! `--out DIR`: the answer's files, written as one unit (all of them or none).
use std::path::Path;

use crate::fmt::prefix;
use crate::handover::dataset_csv;
use crate::render;
use crate::report::Report;

/// The files of an answer in `--out DIR`; an earlier answer is these and nothing else.
pub const OUT_FILES: [&str; 4] = ["choose.json", "choose.txt", "choose.html", "choose-dataset.csv"];

/// Check `dir` before anything is written: an earlier answer (choose.json) is replaced only with
/// `force`, and only when the directory holds nothing but answer files (a link run made from
/// its hand-over, DIR/link-run, is not choose's to delete); a non-empty directory without an
/// answer is refused.
pub fn check_out(dir: &Path, force: bool) -> Result<(), String> {
    let shown = dir.display().to_string();
    if let Some(c) = shown.chars().find(|c| c.is_control()) {
        return Err(format!("--out: '{}' holds the control character {c:?}", prefix(&shown)));
    }
    let meta = match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("--out: {shown}: {e}")),
        Ok(m) => m,
    };
    if !meta.is_dir() {
        return Err(format!("--out: {shown} exists and is not a directory"));
    }
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("--out: {shown}: {e}"))? {
        let e = e.map_err(|e| format!("--out: {shown}: {e}"))?;
        names.push(e.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    if names.is_empty() {
        return Ok(());
    }
    if !names.iter().any(|n| n == "choose.json") {
        return Err(format!(
            "--out: {shown} is not empty and holds no answer (no choose.json): choose a new directory"
        ));
    }
    if !force {
        return Err(format!("--out: {shown} already holds an answer (use --force to replace it)"));
    }
    if let Some(other) = names.iter().find(|n| !OUT_FILES.contains(&n.as_str())) {
        return Err(format!(
            "--out: {shown} holds '{}', which choose did not write: --force replaces an answer only in a directory of its own",
            prefix(other)
        ));
    }
    Ok(())
}

/// Write choose.json, choose.txt, choose.html (and choose-dataset.csv when the hand-over needs
/// it) into `dir` as one unit (the engine's run directory writer): a kill or a full disk at any
/// step leaves the earlier answer, the new one, or nothing; never a mix. Returns the file names.
pub fn write_out(dir: &Path, rep: &Report, force: bool) -> Result<Vec<&'static str>, String> {
    check_out(dir, force)?;
    let shown = dir.display();
    let mut files = vec![
        ("choose.json", render::json::json(rep)?.into_bytes()),
        ("choose.txt", render::text::text(rep).into_bytes()),
        ("choose.html", render::html::html(rep).into_bytes()),
    ];
    if let Some(d) = &rep.handover.dataset {
        files.push(("choose-dataset.csv", dataset_csv(d.channels).into_bytes()));
    }
    let mut w = lwcbench_engine::results::RunDirWriter::begin(dir)
        .map_err(|e| format!("--out: {shown}: cannot start the answer: {e}"))?;
    let mut names = Vec::new();
    for (name, bytes) in files {
        w.add(name, &bytes).map_err(|e| format!("--out: {shown}: cannot write {name}: {e}"))?;
        names.push(name);
    }
    w.commit().map_err(|e| format!("--out: {shown}: cannot put the answer in place: {e}"))?;
    Ok(names)
}
