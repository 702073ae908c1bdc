//! `lwcbench link keygen`: a new master key together with its counter state.
use std::path::PathBuf;

use clap::Args;
use lwcbench_link::device::counter;

#[derive(Args)]
pub(super) struct KeygenArgs {
    /// Where to write the new key (mode 0600; refused if it exists). Its counter state,
    /// KEY_FILE.counters, is written first, so the key never exists without it.
    #[arg(long)]
    key_file: PathBuf,
}

/// Writes a random master key and its empty counter state; an existing path is refused.
pub(super) fn keygen(a: &KeygenArgs) -> Result<(), String> {
    let state = counter::beside_key(&a.key_file);
    // symlink_metadata: a dangling symlink is a name in use too.
    if std::fs::symlink_metadata(&a.key_file).is_ok() {
        return Err(format!("--key-file: {} exists; keygen never replaces a key", a.key_file.display()));
    }
    if std::fs::symlink_metadata(&state).is_ok() {
        return Err(format!(
            "--key-file: {} exists without its key; remove it or choose another key file name",
            state.display()
        ));
    }
    let (master, _) = counter::open_session(&a.key_file, &state, counter::DEFAULT_BLOCK)?;
    println!(
        "wrote {} (key id {}) and its counter state {}",
        a.key_file.display(),
        master.fingerprint(),
        state.display()
    );
    Ok(())
}
