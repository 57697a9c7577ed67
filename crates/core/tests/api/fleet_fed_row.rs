//! A row a worker served, as a screen keeps it: its own texts read back whole, and what rows
//! alike have in common held once.

use opc_core::cluster::{ClusterName, Listed};
use opc_core::fleet::{Epoch, FedRow, FindingRow, FleetView, Frame, Owner, Publisher};
use opc_core::rules::{ActionKind, CauseClass, RuleKind};

/// A stuck deletion's row, as a worker in its pod names its cluster.
fn row(name: &str, owner: Option<(&str, &str)>, message: Option<&str>) -> FindingRow {
    FindingRow {
        cluster: ClusterName::new(ClusterName::IN_CLUSTER),
        name: name.into(),
        uid: format!("uid-of-{name}"),
        reason: "Terminating".into(),
        message: message.map(String::from),
        container: None,
        restarts: 3,
        node: Some("node-1".into()),
        owner: owner.map(|(kind, name)| Owner {
            kind: kind.into(),
            name: name.into(),
        }),
        namespace: "shop".into(),
        category: RuleKind::Terminating,
        since: "2026-11-20T09:00:00Z".parse().unwrap_or_default(),
        for_seconds: 0,
        action: ActionKind::ForceDelete,
        held: None,
        cause: opc_core::rules::Cause {
            class: CauseClass::ImageNotFound,
            detail: "no such image".into(),
            evidence: Vec::new(),
            next: "fix the image".into(),
        },
    }
}

/// The rows of `east` as its screen keeps them, by name, after one snapshot of `rows`.
fn kept(rows: Vec<FindingRow>) -> Vec<std::sync::Arc<FedRow>> {
    let mut publisher = Publisher::new(Epoch(1), chrono::Utc::now());
    publisher.findings(rows.clone());
    let mut view = FleetView::new(ClusterName::new("east"), 10);
    view.apply(Frame::Snapshot(publisher.snapshot())).unwrap();
    rows.iter()
        .map(|row| {
            let found = view.findings().find_map(|listed| match listed {
                Listed::Fed(fed) if fed.uid() == row.uid => Some(fed),
                _ => None,
            });
            found.unwrap()
        })
        .collect()
}

/// Whether two rows hold one shape: the cluster's name is held in it.
fn one_shape(a: &FedRow, b: &FedRow) -> bool {
    std::ptr::eq(a.cluster(), b.cluster())
}

#[test]
fn a_rows_own_texts_are_read_back_whole_and_its_shape_is_shared() {
    let rows = kept(vec![
        row(
            "web-1",
            Some(("StatefulSet", "web")),
            Some("finalizers: a, b/c"),
        ),
        row("bare", None, None),
        row("web-2", Some(("StatefulSet", "web")), None),
    ]);
    let (web, bare, twin) = (&rows[0], &rows[1], &rows[2]);
    assert_eq!(
        web.cluster().as_str(),
        "east",
        "the screen's name, not the worker's"
    );
    assert_eq!((web.uid(), web.name()), ("uid-of-web-1", "web-1"));
    assert_eq!(web.owner(), Some(("StatefulSet", "web")));
    assert_eq!(web.finalizers(), ["a", "b/c"]);
    assert!(web.must_run_once() && web.deleting());
    assert_eq!(
        (bare.uid(), bare.name(), bare.owner()),
        ("uid-of-bare", "bare", None)
    );
    assert_eq!(bare.workload().label(), "Pod/bare");
    assert!(bare.finalizers().is_empty());
    assert!(one_shape(web, bare) == (web.owner() == bare.owner()));
    assert!(one_shape(web, twin), "one shape for rows alike");
}
