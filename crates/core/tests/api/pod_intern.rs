//! The strings pods repeat are shared as they are decoded, and those no pod names any more are
//! let go: names that come and go (short-lived namespaces) do not pile up.

use std::sync::{Arc, Weak};

use opc_core::pod::{Interner, PodRecord, decode_pod};
use serde_json::json;

/// Below this many strings the interner keeps them all (`FIRST_SWEEP` in pod/intern.rs).
const FIRST_SWEEP: usize = 1024;

fn decoded(interner: &mut Interner, namespace: &str, node: &str) -> PodRecord {
    let pod = json!({"metadata": {"name": "p", "namespace": namespace, "uid": "u"},
        "spec": {"nodeName": node}});
    decode_pod(pod.to_string().as_bytes(), interner).unwrap()
}

#[test]
fn names_that_come_and_go_do_not_pile_up() {
    let mut interner = Interner::default();
    let kept: Vec<PodRecord> = (0..100)
        .map(|i| decoded(&mut interner, "kept", &format!("node-{i}")))
        .collect();
    // Each passing namespace is watched without being held: alive only while the interner
    // keeps it.
    let passing: Vec<Weak<str>> = (0..100_000)
        .map(|i| {
            let pod = decoded(&mut interner, &format!("namespace-{i}"), "node-0");
            Arc::downgrade(&pod.namespace)
        })
        .collect();
    let still_kept = passing.iter().filter(|w| w.strong_count() > 0).count();
    // The interner holds the nodes, `kept` and the namespaces it has not let go of.
    let strings = kept.len() + 1 + still_kept;
    assert!(strings <= FIRST_SWEEP, "{strings} strings kept");
    for (i, pod) in kept.iter().enumerate() {
        let again = decoded(&mut interner, "kept", &format!("node-{i}"));
        assert!(Arc::ptr_eq(
            pod.node.as_ref().unwrap(),
            again.node.as_ref().unwrap()
        ));
    }
}
