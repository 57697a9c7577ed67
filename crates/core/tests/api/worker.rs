use opc_core::cluster::ClusterName;
use opc_core::rules::RuleKind;
use opc_core::worker::{Bound, Pause, PauseCause, PauseScope, Pauses, Place};

fn pause(scope: PauseScope) -> Pause {
    let web = opc_core::pod::WorkloadId::new("shop", "Deployment", "web");
    let bound = Bound::InNamespace {
        rule: RuleKind::ImagePull,
        next: web.clone(),
        acted: vec![web],
        window: std::time::Duration::from_secs(600),
    };
    Pause::new(scope, PauseCause::Workloads(bound))
}

fn place(namespace: &str, shared: Option<PauseScope>) -> Place {
    Place {
        namespace: namespace.into(),
        shared,
    }
}

#[test]
fn a_pause_holds_only_the_pods_that_share_its_scope() {
    let shop = PauseScope::Namespace("shop".into());
    let quay = PauseScope::Registry("quay.io".into());
    let mut pauses = Pauses::default();
    pauses.add(RuleKind::ImagePull, pause(shop.clone()));
    let from_quay = place("web", Some(quay.clone()));
    assert!(
        pauses
            .holding(RuleKind::ImagePull, &place("shop", None))
            .is_some()
    );
    assert!(pauses.holding(RuleKind::ImagePull, &from_quay).is_none());
    assert!(
        pauses
            .holding(RuleKind::Evicted, &place("shop", None))
            .is_none()
    );
    pauses.add(RuleKind::ImagePull, pause(quay.clone()));
    let held = pauses.holding(RuleKind::ImagePull, &from_quay).unwrap();
    assert_eq!(held.scope, quay);
    // Another registry, another namespace: nothing in common, nothing held.
    let hub = place("db", Some(PauseScope::Registry("docker.io".into())));
    assert!(pauses.holding(RuleKind::ImagePull, &hub).is_none());
    let mut theirs = pause(shop);
    theirs.cluster = Some(ClusterName::new("demo-us"));
    assert!(theirs.to_string().starts_with("paused in shop: demo-us: "));
    assert!(
        held.to_string()
            .starts_with("paused for images from quay.io: ")
    );
}
