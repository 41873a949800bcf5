//! The crate's error type: a trace that cannot be read, an output that
//! cannot be written, or a request that makes no sense, each rendered as
//! one line a user can act on.

use std::fmt;
use std::path::PathBuf;

/// Why an analysis failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The trace could not be read (or the selection not written); the
    /// message names the file and where.
    Trace(reanimator_trace::Error),
    /// An output file could not be created or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// An output exists and overwriting was not asked for.
    Exists(PathBuf),
    /// Encoding Parquet or CSV failed.
    Encode(String),
    /// A bad option value (unknown call, bad pattern or time).
    Usage(String),
    /// A readable trace that cannot play the part it was given (a
    /// recording given where `fidelity` needs a replay's timings trace):
    /// the user passed the wrong file, and must hear which.
    Input {
        /// The file.
        path: PathBuf,
        /// What is wrong with it, and what was expected.
        what: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Trace(e) => write!(f, "{e}"),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Exists(p) => write!(
                f,
                "{}: already exists (use --force to overwrite)",
                p.display()
            ),
            Error::Encode(what) => write!(f, "export: {what}"),
            Error::Usage(what) => f.write_str(what),
            Error::Input { path, what } => write!(f, "{}: {what}", path.display()),
        }
    }
}

/// No `source`: the message already includes the cause, and a chain would
/// print it twice.
impl std::error::Error for Error {}

impl From<reanimator_trace::Error> for Error {
    fn from(e: reanimator_trace::Error) -> Self {
        Error::Trace(e)
    }
}

impl From<parquet::errors::ParquetError> for Error {
    fn from(e: parquet::errors::ParquetError) -> Self {
        Error::Encode(e.to_string())
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::Encode(e.to_string())
    }
}
