//! The live cache's reads: they neither promote nor wake anyone.

use std::time::Duration;

use chrono::Utc;
use opc_core::clock::Clock;
use opc_core::cluster::{Cache, ClusterName};
use opc_core::pod::WirePod;

/// A pod stuck terminating matures after the rule's 5 minutes with no event about it: the
/// promotion task brings it in. A read before that neither promotes it nor wakes anyone.
#[tokio::test(start_paused = true)]
async fn a_read_neither_promotes_nor_wakes() {
    let start = Utc::now();
    let clock = Clock::starting_at(start);
    let chain = opc_core::rules::default_chain();
    let cache = Cache::for_cluster(ClusterName::new("c"), chain, clock);
    let pod: WirePod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web-1", "namespace": "shop", "uid": "u1",
                     "deletionTimestamp": start.to_rfc3339(),
                     "deletionGracePeriodSeconds": 30},
        "status": {"phase": "Running"}}))
    .unwrap();
    cache.upsert(pod, start);
    assert!(cache.findings().is_empty(), "not stuck yet");
    let mut readers = cache.subscribe();
    readers.mark_unchanged();
    tokio::time::advance(Duration::from_secs(6 * 60)).await;
    let read = (cache.findings(), cache.listed());
    assert!(read.0.is_empty() && read.1.is_empty(), "{read:?}");
    assert!(!readers.has_changed().unwrap(), "a read woke the readers");
    assert!(cache.promote(), "the promotion finds it");
    assert!(readers.has_changed().unwrap());
    assert_eq!(cache.findings().len(), 1);
}

/// A watch that opens again and says what it said before changes nothing, and wakes nobody:
/// three watches answered in protobuf, protobuf again, then JSON, each closed at once.
#[tokio::test(start_paused = true)]
async fn a_change_of_health_that_changes_nothing_wakes_no_reader() {
    use crate::cluster_watch::{Answer, paged_at, usual, watching};
    let stream = "application/vnd.kubernetes.protobuf;stream=watch";
    let answered = |named| Answer::body(200, "").content_type(Some(named));
    let script = paged_at(
        "5",
        [
            answered(stream),
            answered(stream),
            answered("application/json"),
        ],
    );
    let (cache, mut server) = watching(script, &usual());
    for _ in 0..3 {
        server.next().await;
    }
    let mut readers = cache.subscribe();
    readers.mark_unchanged();
    server.next().await;
    assert!(readers.has_changed().unwrap(), "the first word is news");
    readers.mark_unchanged();
    server.next().await;
    assert!(!readers.has_changed().unwrap(), "the same again is not");
    server.next().await;
    assert!(readers.has_changed().unwrap(), "a new format is");
}
