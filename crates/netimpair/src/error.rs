use std::fmt;

/// One-line, user-facing error of this crate (printed by the CLI as `error: {e}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Not root / no CAP_NET_ADMIN: tests skip on this kind only.
    Unprivileged(String),
    /// A required program (`ip`, `tc`, `nft`, `toxiproxy-server`) is not installed.
    MissingTool(String),
    /// A command or syscall failed; the message names it and its first error line.
    Failed(String),
    /// A condition value is out of range or cannot be applied.
    Invalid(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unprivileged(m) | Error::MissingTool(m) | Error::Failed(m) | Error::Invalid(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// A result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
