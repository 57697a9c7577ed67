use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use opc_core::report::write_atomically;

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
