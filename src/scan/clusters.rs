//! One look at several clusters at once. A `-n` namespace that exists in some of them is
//! looked at where it exists (clusters of one product rarely share every namespace); only one
//! that exists nowhere is an error, as it is for one cluster.

use chrono::{DateTime, Utc};
use futures::future::try_join_all;

use super::{Listed, MissingNamespace, list_scopes};
use crate::{Error, Result};
use opc_core::cluster::{Cluster, Scope, WatchSettings};

/// List every cluster at once; `keep` turns a cluster's pods into what the command needs as
/// soon as they are listed, so no cluster's whole list waits for the others.
pub(crate) async fn over_clusters<T>(
    clusters: &[Cluster],
    scopes: &[Scope],
    listing: &WatchSettings,
    events_at: Option<DateTime<Utc>>,
    keep: impl Fn(&Cluster, Listed) -> T,
) -> Result<(Vec<T>, Vec<MissingNamespace>)> {
    let keep = &keep;
    let listed = try_join_all(clusters.iter().map(|cluster| async move {
        // The cluster is its kubeconfig context: a refusal names the identity to check.
        let mut listed = list_scopes(cluster, scopes, listing, events_at)
            .await
            .map_err(|e| match cluster.name.context() {
                Some(context) => e.in_context(context),
                None => e,
            })?;
        let missing = std::mem::take(&mut listed.missing);
        Ok::<_, Error>((keep(cluster, listed), missing))
    }))
    .await?;
    let (per_cluster, missing): (Vec<T>, Vec<Vec<MissingNamespace>>) = listed.into_iter().unzip();
    let missing: Vec<MissingNamespace> = missing.into_iter().flatten().collect();
    let nowhere = |ns: &str| missing.iter().filter(|m| m.namespace == ns).count() == clusters.len();
    let (errors, skipped): (Vec<_>, Vec<_>) =
        (missing.iter().cloned()).partition(|m| nowhere(&m.namespace));
    if !errors.is_empty() {
        let errors = errors.into_iter().map(|m| m.why).collect();
        return Err(opc_core::Error::NoSuchNamespace(errors).into());
    }
    Ok((per_cluster, skipped))
}
