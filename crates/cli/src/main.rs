//! `lwcbench` — verify and benchmark ciphers for constrained devices.
use std::process::ExitCode;

/// `println!`/`print!` in this crate write through [`out`]: a closed pipe (`lwcbench list |
/// head`) ends the process quietly instead of panicking with a backtrace.
macro_rules! println {
    () => { $crate::out(format_args!("\n")) };
    ($($t:tt)*) => { $crate::out(format_args!("{}\n", format_args!($($t)*))) };
}
macro_rules! print {
    ($($t:tt)*) => { $crate::out(format_args!($($t)*)) };
}

/// The macros above write through the application layer's stdout writer (one EPIPE rule).
use lwcbench_app::out;

mod cmd_choose;
mod cmd_crypt;
mod cmd_list;
mod cmd_run;
mod cmd_verify;

// The verbs shared with the Python package live in the application layer.
use lwcbench_app::{collect as cmd_collect, compare as cmd_compare, link, mcu as cmd_mcu};

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "lwcbench",
    version,
    about = "Verify and benchmark ciphers for sensors, gateways and industrial controllers",
    long_about = "Verify and benchmark ciphers for sensors, gateways and industrial controllers.\n\n\
Start with `lwcbench list` to see every cipher and implementation, `lwcbench verify` to check \
them all against official test vectors, and `lwcbench run` to benchmark (without arguments it \
runs the default preset and writes samples.csv, summary.csv and run.json to a new directory \
under ./lwcbench-results).",
    after_help = "Examples:\n  lwcbench run\n  lwcbench run --preset quick\n  lwcbench run --cipher ChaCha20 --scenario keystream --sizes 8,1024,64KiB --kiv ss,rr\n  lwcbench verify --cipher DRACO\n  lwcbench encrypt --cipher ChaCha20-Poly1305 --key 00..1f --hex 48656c6c6f"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List every cipher implementation with its metadata.
    List(cmd_list::ListArgs),
    /// Run every known-answer test and cross-check; exit non-zero on any failure.
    Verify(cmd_verify::VerifyArgs),
    /// Benchmark: measure groups of cipher × implementation × scenario × key/IV variant × size.
    Run(Box<cmd_run::RunArgs>),
    /// Encrypt hex or a file with any cipher (random IV/nonce unless --iv is given).
    Encrypt(cmd_crypt::CryptArgs),
    /// Decrypt hex or a file (AEAD input = ciphertext ‖ tag; a bad tag is an error).
    Decrypt(cmd_crypt::CryptArgs),
    /// Print keystream bits of a stream cipher (--iv required unless the cipher has none).
    Keystream(cmd_crypt::KeystreamArgs),
    /// List the built-in presets.
    Presets,
    /// Write report.html (self-contained, inline SVG) and summary.md for a result directory.
    Report {
        /// A result directory written by `lwcbench run` or `lwcbench mcu`.
        dir: std::path::PathBuf,
    },
    /// Compare two result directories group by group (ratio of medians, significance).
    Compare(cmd_compare::CompareArgs),
    /// Microcontroller cost without a board: flash/RAM tables and emulated cycle counts (mcu/).
    Mcu(cmd_mcu::McuArgs),
    /// Read a board's benchmark lines (serial port or saved log; docs/board.md) into result files.
    Collect(cmd_collect::CollectArgs),
    /// A cipher on a real sensor → MQTT/UDP → gateway → SQLite/PostgreSQL path, measured and attacked.
    Link(Box<link::LinkArgs>),
    /// Rank the ciphers for a board, a radio and a requirement; print the deploy command (docs/choose.md).
    Choose(Box<cmd_choose::ChooseArgs>),
}

/// Longest error line printed (characters).
const MAX_ERROR_CHARS: usize = 2000;

pub(crate) use lwcbench_app::board_help;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::List(a) => cmd_list::run(&a),
        Cmd::Verify(a) => cmd_verify::run(&a),
        Cmd::Run(a) => cmd_run::run(&a),
        Cmd::Report { dir } => lwcbench_report::write_report(&dir).map(|p| println!("wrote {}", p.display())),
        Cmd::Compare(a) => cmd_compare::run(&a),
        Cmd::Mcu(a) => cmd_mcu::run(&a),
        Cmd::Collect(a) => cmd_collect::run(&a),
        Cmd::Link(a) => link::run(&a),
        Cmd::Choose(a) => cmd_choose::run(&a),
        Cmd::Encrypt(a) => cmd_crypt::run(&a, cmd_crypt::Mode::Encrypt),
        Cmd::Decrypt(a) => cmd_crypt::run(&a, cmd_crypt::Mode::Decrypt),
        Cmd::Keystream(a) => cmd_crypt::keystream(&a),
        Cmd::Presets => {
            let w = lwcbench_engine::studies::ALL.iter().map(|p| p.name().len()).max().unwrap_or(0);
            for p in lwcbench_engine::studies::ALL {
                println!("{:<w$}  {}", p.name(), p.about());
            }
            Ok(())
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Messages may quote logs, files or engine output: one line, bounded.
            eprintln!("error: {}", lwcbench_engine::text::one_line(&e, MAX_ERROR_CHARS));
            ExitCode::FAILURE
        }
    }
}
