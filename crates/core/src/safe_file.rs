//! Opening a file the tool appends to (the audit log) so that a link planted where it goes is
//! refused rather than followed, and a file's mode is set only when this process creates it.

use std::fs::{File, OpenOptions};
#[cfg(unix)]
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use crate::error::{FileKind, IoOp};
use crate::{Error, Result};

/// Open `path` for appending, creating it at mode 0600. A symbolic link there is refused,
/// not followed; so is anything but a regular file. An existing file keeps its mode: one
/// readable by others is reported, not changed, since the tool may not be its owner.
pub(crate) fn open_append_private(path: &Path) -> Result<File> {
    let refuse = |found| Error::UnsafeFile {
        path: path.to_path_buf(),
        found,
    };
    let io = |op| {
        move |source| Error::Io {
            path: path.to_path_buf(),
            op,
            source,
        }
    };
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    options
        .mode(0o600)
        // Non-blocking only so that a pipe put there fails instead of hanging the open;
        // it changes nothing for a regular file.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    // Elsewhere (Windows) no flag refuses a link as it opens: it is looked for first.
    #[cfg(not(unix))]
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(refuse(FileKind::Symlink));
    }
    let file = match options.open(path) {
        Ok(file) => file,
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(refuse(FileKind::Symlink)),
        Err(e) => return Err(io(IoOp::Write)(e)),
    };
    let metadata = file.metadata().map_err(io(IoOp::Read))?;
    if !metadata.is_file() {
        return Err(refuse(FileKind::Special));
    }
    #[cfg(unix)]
    warn_if_shared(path, metadata.permissions().mode());
    Ok(file)
}

/// A log readable by others names every pod acted on to them.
#[cfg(unix)]
fn warn_if_shared(path: &Path, mode: u32) {
    let mode = mode & 0o777;
    if mode & 0o077 != 0 {
        tracing::warn!(
            "{} can be read or written by others (mode {mode:o}); it names every pod acted on: \
             chmod 600 it",
            path.display()
        );
    }
}
