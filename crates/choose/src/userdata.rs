//! `--boards FILE` and `--radios FILE`: the user's boards and radios in the schema of
//! data/board-power.csv and data/radio-profiles.csv, read by the parsers of the built-in tables
//! (lwcbench-data), so a bad row is the same one-line error naming the file and its line.
//!
//! A board's crypto cycles are emulated under a built-in board's memory profile: a user's row
//! whose id is a built-in board keeps that board's cycles (new currents, same chip), and any
//! other row names the built-in board it runs like in an optional `cycles_of` column (same
//! target), since nothing here can emulate a profile the tables do not hold.
use std::io::Read;

use lwcbench_data::board::{boards as builtin_boards, ids_of, parse_boards, records, Board};
use lwcbench_data::radio::{builtin as builtin_radios, parse as parse_radios, Radio};

use crate::fmt::prefix;

/// Largest user file read (1 MiB: thousands of rows; a larger file is refused, not truncated).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// A user's board and the built-in board whose emulated cycles it runs.
#[derive(Clone, Debug)]
pub struct UserBoard {
    /// The row.
    pub board: Board,
    /// A built-in board id with the same target.
    pub cycles_of: String,
}

/// The text of `path` for `opt`: at most [`MAX_FILE_BYTES`], UTF-8.
fn read(path: &str, opt: &str) -> Result<String, String> {
    let shown = prefix(path);
    let f = std::fs::File::open(path).map_err(|e| format!("{opt}: {shown}: {e}"))?;
    let mut bytes = Vec::new();
    f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("{opt}: {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("{opt}: {shown}: larger than {MAX_FILE_BYTES} bytes"));
    }
    String::from_utf8(bytes)
        .map_err(|e| format!("{opt}: {shown}: not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// The boards of `path` (data/board-power.csv's columns, and `cycles_of` where a row's id is not
/// a built-in board).
pub fn boards(path: &str) -> Result<Vec<UserBoard>, String> {
    let text = read(path, "--boards")?;
    let origin = prefix(path);
    let rows = parse_boards(&text, &origin).map_err(|e| format!("--boards: {e}"))?;
    if rows.is_empty() {
        return Err(format!("--boards: {origin}: no board rows"));
    }
    // `cycles_of` is optional: without the column every row names a built-in board.
    let lines = records(&text, &origin, &["board"]).map_err(|e| format!("--boards: {e}"))?;
    let cycles_of = records(&text, &origin, &["board", "cycles_of"]).ok();
    let builtin = builtin_boards();
    let mut out = Vec::new();
    for (i, board) in rows.into_iter().enumerate() {
        let line = lines.get(i).map(|l| l.0).unwrap_or(0);
        let named = cycles_of.as_ref().and_then(|c| c.get(i)).map(|c| c.1[1].clone()).filter(|s| !s.is_empty());
        let of = named.unwrap_or_else(|| board.id.clone());
        let same_target: Vec<&Board> = builtin.iter().filter(|b| b.target == board.target).collect();
        match builtin.iter().find(|b| b.id.eq_ignore_ascii_case(&of)) {
            Some(b) if b.target == board.target => out.push(UserBoard { cycles_of: b.id.clone(), board }),
            Some(b) => {
                return Err(format!(
                    "--boards: {origin}: line {line}: cycles_of {} runs {}, not the board's target {}",
                    b.id, b.target, board.target
                ))
            }
            None if same_target.is_empty() => {
                return Err(format!(
                    "--boards: {origin}: line {line}: target '{}' has no emulated cycles (built-in targets: {})",
                    board.target.escape_debug(),
                    targets(builtin)
                ))
            }
            None => {
                let ids: Vec<&str> = same_target.iter().map(|b| b.id.as_str()).collect();
                return Err(format!(
                    "--boards: {origin}: line {line}: board '{}' has no emulated cycles of its own: name the built-in board whose memory profile it shares in a cycles_of column ({} for {})",
                    board.id,
                    ids.join(" or "),
                    board.target
                ));
            }
        }
    }
    Ok(out)
}

/// The built-in targets, once each.
fn targets(all: &[Board]) -> String {
    let mut t: Vec<&str> = all.iter().map(|b| b.target.as_str()).collect();
    t.dedup();
    t.join(", ")
}

/// The radios of `path` (data/radio-profiles.csv's columns).
pub fn radios(path: &str) -> Result<Vec<Radio>, String> {
    let text = read(path, "--radios")?;
    let origin = prefix(path);
    let rows = parse_radios(&text, &origin).map_err(|e| format!("--radios: {e}"))?;
    if rows.is_empty() {
        return Err(format!("--radios: {origin}: no radio rows"));
    }
    Ok(rows)
}

/// `--board NAME` (case-insensitive) among the user's boards first, then the built-in ones: the
/// board and the built-in board whose cycles it runs.
pub fn find_board(name: &str, user: &[UserBoard]) -> Result<(Board, String), String> {
    let name = name.trim();
    if let Some(u) = user.iter().find(|u| u.board.id.eq_ignore_ascii_case(name)) {
        return Ok((u.board.clone(), u.cycles_of.clone()));
    }
    match lwcbench_data::board::find(name) {
        Ok(b) => Ok((b.clone(), b.id)),
        Err(_) if !user.is_empty() => {
            let theirs: Vec<Board> = user.iter().map(|u| u.board.clone()).collect();
            Err(format!(
                "--board: '{name}' is not a board ({}; --boards: {})",
                ids_of(builtin_boards()),
                ids_of(&theirs)
            ))
        }
        Err(e) => Err(e),
    }
}

/// The built-in radios with the user's: a user's radio of a built-in name replaces it.
pub fn all_radios(user: Vec<Radio>) -> Vec<Radio> {
    let mut all: Vec<Radio> =
        builtin_radios().into_iter().filter(|b| !user.iter().any(|u| u.name.eq_ignore_ascii_case(&b.name))).collect();
    all.extend(user);
    all
}

/// `--radio NAME` (case-insensitive) among `all`; the error lists the names.
pub fn find_radio(name: &str, all: &[Radio]) -> Result<Radio, String> {
    all.iter().find(|r| r.name.eq_ignore_ascii_case(name)).cloned().ok_or_else(|| {
        format!(
            "--radio: '{name}' is not one of {}",
            all.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(", ")
        )
    })
}
