//! A fed cluster follows its feed into what the screen shows without holding a copy of the
//! feed's view: the feed changes it in place at every frame.

use std::sync::Arc;

use futures::StreamExt;
use opc_core::cluster::Cache;
use opc_core::fleet::{FedCluster, ViewHealth};

use crate::fleet_client::{feed, lines, snapshot};

#[tokio::test]
async fn the_follower_holds_no_copy_of_the_feeds_view_while_it_waits() {
    // A snapshot, and then the stream stays open.
    let answer = lines(vec![snapshot(ViewHealth::default())]).chain(futures::stream::pending());
    let feed = feed(vec![answer.boxed()]);
    let state = feed.subscribe();
    let fed = FedCluster::follow(feed, Cache::new());
    let mut seen = fed.subscribe();
    seen.changed().await.unwrap();
    // Held by the feed alone (and this test): a heartbeat then changes it in place, where
    // a reader's copy would make the feed copy every row.
    assert_eq!(Arc::strong_count(&state.borrow().shared_view()), 2);
}
