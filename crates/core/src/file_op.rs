//! What a file operation was, and what was found where a regular file was expected: words
//! the config, the audit log and the report's files all fail with.

/// What was found where a regular file was expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FileKind {
    #[error("a symbolic link")]
    Symlink,
    #[error("a directory, pipe, socket or device")]
    Special,
}

/// What was being done to a file when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IoOp {
    #[error("read")]
    Read,
    #[error("write")]
    Write,
}
