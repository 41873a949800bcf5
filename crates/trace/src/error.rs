//! The format's error type: every failure names the file, what is wrong and
//! where (byte offset and frame number), so a user can act on one line.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// A trace could not be read or written.
#[derive(Debug)]
pub struct Error {
    path: Option<PathBuf>,
    offset: Option<u64>,
    frame: Option<u64>,
    kind: ErrorKind,
}

/// What went wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The operating system refused a read or write.
    Io(io::Error),
    /// The path is a directory.
    IsDirectory,
    /// The path is a FIFO, socket or device: a trace is read with seeks
    /// (and opening a FIFO with no writer would wait forever).
    NotAFile(&'static str),
    /// The file is empty.
    Empty,
    /// The file does not start with the trace magic.
    NotATrace,
    /// The trace was written by a newer, incompatible format version.
    NewerVersion {
        /// Major version in the file.
        major: u16,
        /// Minor version in the file.
        minor: u16,
    },
    /// The file ends in the middle of a frame.
    Truncated,
    /// The file ends after a complete frame but without an end record: the
    /// writer was killed or crashed.
    MissingEnd,
    /// A frame's checksum does not match its contents.
    Checksum,
    /// A frame or record is malformed.
    Corrupt(String),
    /// Refused to overwrite an existing file.
    Exists,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Error {
            path: None,
            offset: None,
            frame: None,
            kind,
        }
    }

    pub(crate) fn corrupt(what: impl Into<String>) -> Self {
        Error::new(ErrorKind::Corrupt(what.into()))
    }

    pub(crate) fn at(mut self, offset: u64, frame: Option<u64>) -> Self {
        self.offset.get_or_insert(offset);
        if self.frame.is_none() {
            self.frame = frame;
        }
        self
    }

    pub(crate) fn in_file(mut self, path: &Path) -> Self {
        self.path.get_or_insert_with(|| path.to_path_buf());
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The byte offset in the file where the problem was found.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }

    /// The number of the frame in which the problem was found.
    pub fn frame(&self) -> Option<u64> {
        self.frame
    }

    /// True when `reanimator recover` can salvage the trace (the damage is
    /// in or after some frame, not in the file header).
    pub fn is_recoverable(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::Truncated
                | ErrorKind::MissingEnd
                | ErrorKind::Checksum
                | ErrorKind::Corrupt(_)
        ) && self.frame.is_some_and(|f| f > 0)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::new(ErrorKind::Io(e))
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Io(e) => write!(f, "{e}"),
            ErrorKind::IsDirectory => f.write_str("is a directory, not a trace file"),
            ErrorKind::NotAFile(what) => write!(
                f,
                "is {what}, not a file: traces are read with seeks (save it to a file first)"
            ),
            ErrorKind::Empty => f.write_str("empty file, not a trace"),
            ErrorKind::NotATrace => f.write_str("not a reanimator trace (bad magic)"),
            ErrorKind::NewerVersion { major, minor } => write!(
                f,
                "written in trace format {major}.{minor}, newer than this reader ({}.x); upgrade reanimator",
                crate::FORMAT_MAJOR
            ),
            ErrorKind::Truncated => f.write_str("truncated: the file ends inside a frame"),
            ErrorKind::MissingEnd => f.write_str(
                "incomplete: no end record (the recorder was killed or crashed); `reanimator recover` salvages it",
            ),
            ErrorKind::Checksum => f.write_str("corrupt: frame checksum mismatch"),
            ErrorKind::Corrupt(what) => write!(f, "corrupt: {what}"),
            ErrorKind::Exists => f.write_str("already exists (use --force to overwrite)"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{}: ", p.display())?;
        }
        write!(f, "{}", self.kind)?;
        match (self.offset, self.frame) {
            (Some(o), Some(n)) => write!(f, " (at byte {o}, frame {n})")?,
            (Some(o), None) => write!(f, " (at byte {o})")?,
            (None, Some(n)) => write!(f, " (frame {n})")?,
            (None, None) => {}
        }
        // Every command that reads a trace says what to do with a damaged
        // one (only `info` did).
        match self.kind {
            ErrorKind::Truncated | ErrorKind::Checksum | ErrorKind::Corrupt(_) => {
                f.write_str("; `reanimator recover` salvages what the trace holds")
            }
            _ => Ok(()),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// The format's result type.
pub type Result<T> = std::result::Result<T, Error>;
