//! The lwcbench verbs behind both front ends: the `lwcbench` command line and the Python
//! package (`lwcbench._native`) call these functions, so the two cannot drift. A verb's option
//! schema is its clap `Args` struct here (the Python wrappers pass the same options as an
//! argument vector, see [`parse`]), except `run`, whose options are the engine's shared
//! [`RunOptions`](lwcbench_engine::request::RunOptions).
//!
//! Verbs print their progress and summary lines to stdout and warnings to stderr, as the
//! command line shows them; errors are returned as one message naming the option.

/// `println!`/`print!` in this crate write through [`out`]: a closed pipe (`lwcbench list |
/// head`) ends the process quietly instead of panicking with a backtrace.
macro_rules! println {
    () => { $crate::out(format_args!("\n")) };
    ($($t:tt)*) => { $crate::out(format_args!("{}\n", format_args!($($t)*))) };
}
macro_rules! print {
    ($($t:tt)*) => { $crate::out(format_args!($($t)*)) };
}

pub mod check_board;
pub mod choose;
pub mod collect;
pub mod compare;
pub mod link;
pub mod mcu;
pub mod run;
pub mod verify;

/// Write to stdout. A reader that went away (EPIPE) is not an error of ours: exit 0 without a
/// word, as `head` expects; any other write error is one `error:` line and exit 1.
pub fn out(args: std::fmt::Arguments) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(1);
    }
}

/// A `--board` help text: `before`, the boards of data/board-power.csv (generated from
/// data/boards.toml), then `after`; a new board record shows up here without an edit.
pub fn board_help(before: &str, after: &str) -> String {
    format!("{before}{}{after}", lwcbench_engine::board::ids())
}

/// The `lwcbench` binary that runs the gateway and device processes of `link chaos`: this
/// process when it is that binary; from another program (the Python package), the one in
/// `LWCBENCH_BIN`, else `lwcbench` on PATH.
pub fn lwcbench_exe() -> Result<std::path::PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find the lwcbench binary: {e}"))?;
    if me.file_stem().is_some_and(|n| n == "lwcbench") {
        return Ok(me);
    }
    if let Some(p) = std::env::var_os("LWCBENCH_BIN") {
        return Ok(p.into());
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("lwcbench"))
        .find(|p| p.is_file())
        .ok_or_else(|| "cannot find the lwcbench binary for the gateway and device processes: set LWCBENCH_BIN or put lwcbench on PATH".into())
}

/// What kind of failure an error message reports (the Python package raises a distinct
/// exception for each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad input: an option, a file, a directory.
    Input,
    /// A tag that does not verify: forged or corrupted data, or the wrong key.
    Authentication,
    /// A broker or store that cannot be reached or fails while in use.
    Service,
}

/// The kind of an error message of these verbs: a message about `--broker` or `--store` is a
/// service failure unless it is about the option's form (the URL or path as written); the
/// cipher's tag-mismatch text is an authentication failure; anything else is input.
pub fn classify(msg: &str) -> ErrorKind {
    if msg.contains(&lwcbench_core::CipherError::AuthenticationFailed.to_string()) {
        return ErrorKind::Authentication;
    }
    let about_form = msg.contains("(expected mqtt://") || msg.contains("is neither a postgres:// URL");
    if (msg.starts_with("--broker: ") || msg.starts_with("--store: ")) && !about_form {
        return ErrorKind::Service;
    }
    ErrorKind::Input
}

/// The command line run.json records: `given` (the Python binding's call), else this
/// process's argv.
pub(crate) fn invocation(given: &Option<Vec<String>>) -> Vec<String> {
    given.clone().unwrap_or_else(|| std::env::args().collect())
}

/// Parse an argument vector (without the program and verb names) into a verb's options, as
/// the command line does; an error is clap's first line, without its `error: ` prefix.
pub fn parse<T: clap::FromArgMatches + clap::Args>(verb: &'static str, argv: &[String]) -> Result<T, String> {
    let cmd = T::augment_args(clap::Command::new(verb).no_binary_name(true));
    let m = cmd.try_get_matches_from(argv).map_err(|e| {
        let text = e.render().to_string();
        let line = text.lines().next().unwrap_or("invalid arguments").trim();
        format!("{verb}: {}", line.strip_prefix("error: ").unwrap_or(line))
    })?;
    T::from_arg_matches(&m).map_err(|e| format!("{verb}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_names_the_failure() {
        assert_eq!(classify("Ascon-AEAD128/ref: authentication failed (tag mismatch)"), ErrorKind::Authentication);
        assert_eq!(classify("--broker: cannot reach 127.0.0.1:9 (MQTT v5): connection refused"), ErrorKind::Service);
        assert_eq!(classify("--store: cannot connect to postgres://x@127.0.0.1:9/db: refused"), ErrorKind::Service);
        assert_eq!(
            classify("--broker: 'http://x': not mqtt (expected mqtt://HOST:PORT, e.g. mqtt://127.0.0.1:1883)"),
            ErrorKind::Input
        );
        assert_eq!(classify("--store: 'x:y' is neither a postgres:// URL nor a file path"), ErrorKind::Input);
        assert_eq!(classify("--devices: 0 is not in 1..=100000"), ErrorKind::Input);
    }
}
