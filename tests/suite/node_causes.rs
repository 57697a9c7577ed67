//! A pod stuck Terminating takes its cause from its node's own Ready condition: a node that
//! stopped reporting (Unknown) or says it is not ready (False), and for how long.

use crate::support;

use chrono::{Duration, Utc};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use opc_core::rules::{Cause, CauseClass, RuleKind, cause};
use opc_core::session::ClusterSession;
use support::pods::pod;
use support::sim::{eventually, typed};

use crate::causes::{finding_of, session_on};

/// A Node object no kubelet runs, whose Ready condition says `status` since `minutes` ago,
/// its last heartbeat as old: what the node lifecycle controller leaves of a lost node.
pub(crate) fn node(name: &str, status: &str, minutes: i64) -> Node {
    let at = (Utc::now() - Duration::minutes(minutes)).to_rfc3339();
    let (reason, message) = match status {
        "Unknown" => ("NodeStatusUnknown", "Kubelet stopped posting node status."),
        "False" => ("KubeletNotReady", "container runtime network not ready"),
        _ => ("KubeletReady", "kubelet is posting ready status"),
    };
    typed(serde_json::json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": { "name": name },
        "status": { "conditions": [{
            "type": "Ready", "status": status, "reason": reason, "message": message,
            "lastHeartbeatTime": at, "lastTransitionTime": at,
        }]},
    }))
}

/// Creates `node`, then writes its status through the status subresource, as a real API
/// server requires (a create ignores the status). A merge patch, not a replace: on a real
/// cluster the node lifecycle controller changes a new Node at once, and a replace at the
/// created version meets a 409.
pub(crate) async fn put_node(client: &kube::Client, node: Node) {
    let nodes: Api<Node> = Api::all(client.clone());
    let name = node.metadata.name.clone().unwrap_or_default();
    nodes.create(&PostParams::default(), &node).await.unwrap();
    let status = serde_json::json!({ "status": node.status });
    nodes
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

/// A pod of `ns` bound to `node`, deleted with a grace period that no kubelet will finish.
pub(crate) async fn stuck_on(client: &kube::Client, ns: &str, name: &str, node: &str) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    // Only what a person writes: a real API server refuses a create that carries a
    // resourceVersion, as the test builders' pods do.
    let spec: Pod = typed(serde_json::json!({
        "metadata": { "name": name },
        "spec": { "nodeName": node, "containers": [
            { "name": "app", "image": "registry.k8s.io/pause:3.10" },
        ]},
    }));
    pods.create(&PostParams::default(), &spec).await.unwrap();
    pods.delete(name, &DeleteParams::default().grace_period(1))
        .await
        .unwrap();
}

/// The cause of the Terminating pod `name`, in words, as the details pane shows it.
pub(crate) fn told(session: &ClusterSession, name: &str) -> Option<Cause> {
    let found = finding_of(session, name).filter(|f| f.finding.rule == RuleKind::Terminating)?;
    let events = found.events();
    Some(cause(
        &found.pod,
        &found.finding,
        events,
        found.node(),
        Utc::now(),
    ))
}

#[tokio::test]
async fn a_pod_stuck_terminating_on_a_node_that_stopped_reporting_says_so() {
    let sim = kube_sim::SimCluster::new();
    let (server, session) = session_on(&sim).await;
    let client = server.client();
    put_node(&client, node("lost-1", "Unknown", 10)).await;
    put_node(&client, node("sick-1", "False", 3)).await;
    stuck_on(&client, "default", "web-1", "lost-1").await;
    stuck_on(&client, "default", "web-2", "sick-1").await;
    let class_of = |name| told(&session, name).map(|c| c.class);
    eventually("both pods Terminating with their node's cause", || {
        class_of("web-1") == Some(CauseClass::NodeUnreachable)
            && class_of("web-2") == Some(CauseClass::NodeNotReady)
    })
    .await;
    let lost = told(&session, "web-1").unwrap();
    assert!(lost.detail.contains("stopped reporting 10m"), "{lost:?}");
    let sick = told(&session, "web-2").unwrap();
    assert!(sick.detail.contains("not ready for 3m"), "{sick:?}");
    for (cause, status) in [(lost, "Unknown"), (sick, "False")] {
        let said = cause.evidence.iter().find(|e| e.source.contains("[Ready]"));
        assert!(
            said.is_some_and(|e| e.text.starts_with(status)),
            "{cause:?}"
        );
    }
    assert_eq!(session.cache.nodes_not_reporting(), 1);
}

#[tokio::test]
async fn without_leave_to_read_nodes_causes_come_from_the_pod_and_a_notice_says_why() {
    let sim = kube_sim::SimCluster::new();
    sim.faults().deny("list", "nodes", None);
    sim.faults().deny("watch", "nodes", None);
    let (server, session) = session_on(&sim).await;
    let client = server.client();
    put_node(&client, node("lost-1", "Unknown", 10)).await;
    stuck_on(&client, "default", "web-1", "lost-1").await;
    eventually("the pod's cause from the pod alone, and a notice", || {
        told(&session, "web-1").map(|c| c.class) == Some(CauseClass::PastGrace)
            && session
                .cache
                .nodes()
                .unreadable_why()
                .is_some_and(|why| why.contains("permission denied") && why.contains("nodes"))
    })
    .await;
    assert!(
        session.cache.health().synced(),
        "the pod view does not wait on nodes"
    );
    assert_eq!(session.cache.nodes_not_reporting(), 0);
}

/// `scan` reads the nodes beside the pods, and says the same as the screen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_classes_a_pod_on_a_node_that_stopped_reporting() {
    use support::contexts::{Scratch, run};
    let sim = kube_sim::SimCluster::new();
    // Deleted long ago: past its grace period when `scan` reads it.
    let deleted = pod("web-1")
        .on_node("lost-1")
        .terminating_since("2026-11-20T09:00:00Z");
    sim.create_pod(typed(deleted.json()));
    let server = kube_sim::SimServer::start(sim).await.unwrap();
    put_node(&server.client(), node("lost-1", "Unknown", 10)).await;
    let scratch = Scratch::new(
        &[("east", &server)],
        "rules:\n  - {rule: terminating, after: 0}\n",
    );
    let out = run(scratch.args(&["scan", "-o", "json"])).await;
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let web = rows
        .iter()
        .find(|r| r["name"] == "web-1")
        .expect("web-1 is listed");
    assert_eq!(web["cause"]["class"], "nodeUnreachable", "{web}");
}

/// One relist that finds several nodes gone silent finds again the cause of the stuck pods
/// on every one of them, not only on the first.
#[test]
fn a_relist_of_nodes_updates_the_pods_on_every_node_that_changed() {
    use opc_core::clock::Clock;
    use opc_core::cluster::{Cache, ClusterName};
    use opc_core::node::{NodeState, Readiness};
    let cache = Cache::for_cluster(
        ClusterName::default(),
        crate::causes::at_once().chain().to_vec(),
        Clock::real(),
    );
    let now = Utc::now();
    for (name, node) in [("web-1", "n1"), ("web-2", "n2"), ("web-3", "n3")] {
        let stuck = pod(name)
            .on_node(node)
            .terminating_since("2026-11-20T09:00:00Z");
        cache.upsert(stuck.wire(), now);
    }
    let silent = |name: &str| NodeState {
        name: name.into(),
        readiness: Readiness::NotReporting,
        since: Some(now - Duration::minutes(5)),
        heartbeat: Some(now - Duration::minutes(6)),
        out_of_service: false,
    };
    cache
        .nodes()
        .replace(vec![silent("n1"), silent("n2"), silent("n3")], now);
    let causes: Vec<CauseClass> = cache.findings().iter().map(|f| f.cause).collect();
    assert_eq!(causes, vec![CauseClass::NodeUnreachable; 3]);
    assert_eq!(cache.nodes_not_reporting(), 3);
}
