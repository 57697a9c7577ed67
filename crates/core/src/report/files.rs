//! Writing files so that a crash leaves either the old or the new content, never half.

use std::io::Write;
use std::path::Path;

use crate::error::IoOp;
use crate::{Error, Result};

/// Write to a temporary file beside `path`, fsync it, then rename it over `path`. The temporary
/// file is created exclusively, under a name nobody can guess, at mode 0600: a link planted beside
/// the target is never written through, and the content is never readable by others, not even while
/// it is written. Whatever was at `path` (a link included) is replaced, not followed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        op: IoOp::Write,
        source,
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir.unwrap_or(Path::new(".")))
        .map_err(io)?;
    temp.write_all(bytes)
        .and_then(|_| temp.as_file().sync_all())
        .map_err(io)?;
    // On failure the temporary file is removed as it is dropped.
    temp.persist(path).map_err(|e| io(e.error))?;
    // The rename itself is durable only once the directory is synced.
    if let Some(dir) = dir
        && let Ok(dir) = std::fs::File::open(dir)
    {
        let _ = dir.sync_all();
    }
    Ok(())
}
