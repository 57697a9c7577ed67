//! Pods as the watch loop keeps them: an event's pod goes into the cache under its uid as
//! kept, and a deletion finds it there.

use crate::cluster_watch::{Answer, event, paged_at, pod, usual, watching};

#[tokio::test(start_paused = true)]
async fn a_pod_is_removed_by_the_uid_it_is_kept_under_however_long_the_server_sent_it() {
    let uid = "u".repeat(100);
    let wire = pod("p", &uid, "2");
    let script = paged_at(
        "1",
        [
            Answer::events(&[event("ADDED", wire.clone())]),
            Answer::events(&[event("DELETED", wire)]),
        ],
    );
    let (cache, mut server) = watching(script, &usual());
    for _ in 0..4 {
        server.next().await;
    }
    assert_eq!(cache.reader().len(), 1);
    let kept: Vec<String> = cache.fold(Vec::new(), |mut uids, pod| {
        uids.push(pod.uid.to_string());
        uids
    });
    assert_eq!(kept[0].len(), 64, "the key is the uid as kept");
    assert!(cache.get(&kept[0]).is_some());
    server.next().await;
    assert_eq!(
        cache.reader().len(),
        0,
        "the deletion finds the pod it names"
    );
}
