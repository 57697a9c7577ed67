//! Writing files so that a crash leaves either the old or the new content, never half.

use std::io::Write;
use std::path::Path;

use crate::error::IoOp;
use crate::{Error, Result};

/// Write to a temporary file beside `path`, fsync it, then rename it over `path`. The
/// temporary file is created exclusively, under a name nobody can guess, at mode 0600: a
/// link planted beside the target is never written through, and the content is never
/// readable by others, not even while it is written. Whatever was at `path` (a link
/// included) is replaced, not followed.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    /// A temporary name anyone can guess is a place to plant a link: the write would go to
    /// the link's target, and the rename would put the link where the file belongs.
    #[test]
    fn a_link_planted_where_the_temporary_file_goes_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.conf");
        std::fs::write(&victim, "keep = me\n").unwrap();
        let target = dir.path().join("state.json");
        let guessed = dir
            .path()
            .join(format!(".state.json.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &guessed).unwrap();
        write_atomically(&target, b"{}\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep = me\n");
        let written = std::fs::symlink_metadata(&target).unwrap();
        assert!(written.is_file(), "the target is a file of its own");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "{}\n");
    }

    #[test]
    fn the_file_is_private_from_its_creation_and_no_temporary_stays() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("spool").join("report.json");
        write_atomically(&target, b"one").unwrap();
        write_atomically(&target, b"two").unwrap();
        assert_eq!(mode(&target), 0o600);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(target.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["report.json"]);
    }
}
