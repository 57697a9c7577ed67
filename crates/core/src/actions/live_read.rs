//! Reading a pod live before acting on it, for a cluster whose cache no watch fills (one read
//! through its in-cluster worker): the pod goes into the cache, and every check after reads it
//! there exactly as for a watched cluster.

use std::time::Duration;

use super::action::PodRef;
use super::calls::Calls;
use super::failure::Failure;
use super::outcome::Outcome;
use super::retry::Stop;
use crate::cluster::Cache;
use crate::pod::WirePod;
use k8s_openapi::api::core::v1::Pod;

/// The most a live read waits, retries included.
pub(crate) const LIVE_READ: Duration = Duration::from_secs(15);

/// Read `target` into `cache`, and return it as read. A pod that is gone, or whose name another
/// pod now has, leaves the cache without it: the recheck then finds it gone.
pub(crate) async fn read_into(
    calls: &Calls,
    cache: &Cache,
    target: &PodRef,
) -> Result<Pod, Outcome> {
    let answer = match tokio::time::timeout(LIVE_READ, calls.get_pod(target)).await {
        Ok(Ok(text)) => text,
        Ok(Err(Stop::Gone)) => {
            cache.remove(&target.uid);
            return Err(Outcome::AlreadyGone);
        }
        Ok(Err(stop)) => return Err(stop.into()),
        Err(_) => {
            return Err(Outcome::Failed(Failure::Transport(format!(
                "reading {target} took longer than {} s",
                LIVE_READ.as_secs()
            ))));
        }
    };
    // Where it failed, not serde's words: they may quote what the server sent.
    let unreadable = |e: serde_json::Error| {
        let why = format!("reading {target}: {:?}", e.classify());
        Outcome::Failed(Failure::Transport(why))
    };
    let wire: WirePod = serde_json::from_str(&answer).map_err(unreadable)?;
    let pod: Pod = serde_json::from_str(&answer).map_err(unreadable)?;
    if *wire.metadata.uid != *target.uid {
        cache.remove(&target.uid);
    }
    cache.upsert(wire, cache.clock().now());
    Ok(pod)
}
