//! Writing the restart report to a file from the report pane.

use opc_core::report::RestartReport;
use ops_pod_cleaner::ui::export::write;

fn empty_report() -> RestartReport {
    RestartReport {
        title: "restarts".into(),
        cluster: "prod".into(),
        generated: "2026-11-20T08:00:00Z".parse().unwrap(),
        ..RestartReport::default()
    }
}

/// The export's name is known in advance (the report's time): a link planted under it in a
/// shared directory must not turn the export into a write to the link's target.
#[tokio::test]
async fn an_export_replaces_a_link_planted_under_its_name_instead_of_following_it() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.conf");
    std::fs::write(&victim, "keep = me\n").unwrap();
    let planted = dir.path().join("ops-pod-cleaner-report-20261120-080000.md");
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let written = write(dir.path(), &empty_report()).await.unwrap();
    assert_eq!(written, planted);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep = me\n");
    let file = std::fs::symlink_metadata(&written).unwrap();
    assert!(file.is_file(), "the export is a file of its own");
}
