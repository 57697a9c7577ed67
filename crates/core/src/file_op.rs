//! What a file operation was, and what was found where a regular file was expected: words
//! the config, the audit log and the report's files all fail with.

use std::fmt;

/// What was found where a regular file was expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Symlink,
    /// A directory, pipe, socket or device.
    Special,
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Symlink => "a symbolic link",
            FileKind::Special => "a directory, pipe, socket or device",
        })
    }
}

/// What was being done to a file when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    Read,
    Write,
}

impl fmt::Display for IoOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IoOp::Read => "read",
            IoOp::Write => "write",
        })
    }
}
