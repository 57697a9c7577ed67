//! The files the tool writes are opened without following a link someone planted, and never
//! have their mode changed unless the tool created them.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use opc_core::Error;
use opc_core::actions::AuditLog;
use opc_core::error::FileKind;
use support::policy::audit_config;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A file someone else's, readable by all, that a planted link points the audit log at.
fn victim(dir: &Path) -> std::path::PathBuf {
    let victim = dir.join("victim.conf");
    std::fs::write(&victim, "keep = me\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    victim
}

#[test]
fn the_audit_log_is_not_opened_through_a_planted_link() {
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let link = dir.path().join("audit.jsonl");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    match AuditLog::open(&audit_config(&link)) {
        Err(Error::UnsafeFile { path, found }) => {
            assert_eq!((path, found), (link.clone(), FileKind::Symlink));
        }
        Err(other) => panic!("refused, but not as a link: {other}"),
        Ok(_) => panic!("opened through the link"),
    }
    assert_eq!(mode(&victim), 0o644, "the link's target was chmodded");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep = me\n");
}
