//! `scan`: one look at the cluster, abnormal pods by category, as a table or JSON.

mod clusters;
mod namespaces;
mod parked;

use std::fmt::Write;

use chrono::{DateTime, Utc};
pub(crate) use clusters::over_clusters;
use futures::future::OptionFuture;
pub(crate) use parked::{parked_summary, parked_table};

use opc_core::cluster::{
    Cluster, ClusterName, EventStore, NodeStore, Scope, WatchSettings, list_nodes, list_pod_events,
    list_pods,
};
use opc_core::fleet::FindingRow;
use opc_core::inert;
use opc_core::pod::{PodRecord, WorkloadId};
use opc_core::rules::{RuleSpec, cause, classify, format_age};

/// One cluster's pods, and the `-n` namespaces that do not exist there.
pub(crate) struct Listed {
    pub(crate) pods: Vec<PodRecord>,
    /// The pods' Warning Events a cause reads, by pod UID, when asked for.
    pub(crate) events: EventStore,
    /// The nodes' Ready conditions, for the pods stuck on a node; empty when not readable.
    pub(crate) nodes: NodeStore,
    pub(crate) missing: Vec<MissingNamespace>,
}

/// A namespace given with `-n` that a cluster does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MissingNamespace {
    pub(crate) namespace: String,
    /// Says so, naming the context and the namespaces there are.
    pub(crate) why: String,
}

/// The pods every scope of one cluster holds now, with their Warning Events as of `events_at`.
/// A namespace that lists no pods may be a typo in `-n`: it is checked to exist.
pub(crate) async fn list_scopes(
    cluster: &Cluster,
    scopes: &[Scope],
    listing: &WatchSettings,
    events_at: Option<DateTime<Utc>>,
) -> opc_core::Result<Listed> {
    let (mut pods, mut missing, mut events) = (Vec::new(), Vec::new(), EventStore::default());
    for scope in scopes {
        let read_events = events_at.map(|now| list_pod_events(&cluster.client, scope, now));
        let (listed, read) = tokio::join!(
            list_pods(&cluster.client, scope, listing.page_size, listing.wire),
            OptionFuture::from(read_events)
        );
        let listed = listed?.pods;
        match read {
            Some(Ok(found)) => events.extend(found),
            Some(Err(e)) => eprintln!(
                "note: {}: pods' Events cannot be read ({e}); causes come from the status alone",
                cluster.name
            ),
            None => {}
        }
        if let Scope::Namespace(ns) = scope
            && listed.is_empty()
            && let Some(why) = namespaces::missing_namespace(cluster, ns).await
        {
            missing.push(MissingNamespace {
                namespace: ns.clone(),
                why,
            });
        }
        pods.extend(listed);
    }
    Ok(Listed {
        pods,
        events,
        nodes: read_nodes(cluster, listing.page_size, events_at.is_some()).await,
        missing,
    })
}

/// The cluster's nodes, when `wanted`; a cluster that does not let them be read is noted.
async fn read_nodes(cluster: &Cluster, page_size: u32, wanted: bool) -> NodeStore {
    if !wanted {
        return NodeStore::default();
    }
    match list_nodes(&cluster.client, page_size).await {
        Ok(nodes) => NodeStore::listed(nodes),
        Err(e) => {
            eprintln!(
                "note: {}: nodes cannot be read ({e}); causes come from the pod alone",
                cluster.name
            );
            NodeStore::default()
        }
    }
}

/// The abnormal pods of `listed`, in no order (`sort_rows` orders every cluster's rows).
pub(crate) fn rows(
    cluster: &ClusterName,
    listed: &Listed,
    chain: &[RuleSpec],
    now: DateTime<Utc>,
) -> Vec<FindingRow> {
    listed
        .pods
        .iter()
        .filter_map(|pod| {
            let f = classify(pod, chain, now)?;
            let events = listed.events.of(pod).map_or(&[][..], |e| e);
            let cause = cause(pod, &f, events, listed.nodes.of(pod), now);
            Some(FindingRow::new(cluster, pod, &f, cause, now))
        })
        .collect()
}

/// By chain position, cluster, namespace and name.
pub(crate) fn sort_rows(rows: &mut [FindingRow], chain: &[RuleSpec]) {
    rows.sort_by(|a, b| sort_key(a, chain).cmp(&sort_key(b, chain)));
}

/// Borrowed: a key per row would copy three strings of every row to sort them.
fn sort_key<'a>(
    row: &'a FindingRow,
    chain: &[RuleSpec],
) -> (usize, &'a ClusterName, &'a str, &'a str) {
    let position = chain.iter().position(|r| r.kind == row.category);
    (
        position.unwrap_or(usize::MAX),
        &row.cluster,
        &row.namespace,
        &row.name,
    )
}

pub(crate) fn to_json(rows: &[impl serde::Serialize]) -> String {
    serde_json::to_string_pretty(rows).unwrap_or_else(|_| "[]".to_string())
}

/// An aligned table, kubectl style; the cluster column only when there are several.
pub(crate) fn to_table(rows: &[FindingRow], several_clusters: bool) -> String {
    let rows = rows.iter().map(|row| {
        let cells = vec![
            row.category.to_string(),
            row.namespace.clone(),
            row.name.clone(),
            row.reason.clone(),
            row.cause.class.to_string(),
            format_age(chrono::Duration::seconds(row.for_seconds)),
            row.restarts.to_string(),
            row.node.clone().unwrap_or_else(|| "-".into()),
            // The workload the engineer thinks in, as the screen names it.
            row.owner.as_ref().map_or("-".into(), |o| {
                let owner = Some((o.kind.as_str(), o.name.as_str()));
                WorkloadId::of_owner(&row.namespace, owner, &row.name).label()
            }),
            row.action
                .shown(
                    row.category,
                    // A row knows a deletion only as `terminating`'s, whose action is next.
                    false,
                    row.owner.is_some(),
                    row.held.as_ref().map(|h| h.label()),
                )
                .to_string(),
        ];
        (row.cluster.to_string(), cells)
    });
    let header = "CATEGORY NAMESPACE NAME REASON CAUSE FOR RESTARTS NODE OWNER ACTION";
    by_cluster(header, rows, several_clusters)
}

/// [`aligned`] under `header`'s words, each row's cluster first when there are several.
fn by_cluster(
    header: &str,
    rows: impl Iterator<Item = (String, Vec<String>)>,
    several_clusters: bool,
) -> String {
    let heading = header.split(' ').map(String::from).collect();
    let table: Vec<Vec<String>> = std::iter::once(("CLUSTER".to_string(), heading))
        .chain(rows)
        .map(|(cluster, mut cells)| {
            if several_clusters {
                cells.insert(0, cluster);
            }
            cells
        })
        .collect();
    aligned(&table)
}

/// Rows of cells as columns padded to their widest cell in terminal cells, two spaces apart,
/// kubectl style. Every cell is made inert here: most hold what a tenant wrote.
fn aligned(table: &[Vec<String>]) -> String {
    let columns = table.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            table
                .iter()
                .map(|r| r.get(c).map_or(0, |cell| inert::width(cell)))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in table {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, &w)| inert::pad(cell, w))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    out
}

/// "3 abnormal of 120 pods: evicted 1, imagePull 2".
pub(crate) fn summary(rows: &[FindingRow], total: usize, chain: &[RuleSpec]) -> String {
    let counts: Vec<String> = chain
        .iter()
        .filter_map(|r| {
            let n = rows.iter().filter(|row| row.category == r.kind).count();
            (n > 0).then(|| format!("{} {n}", r.kind))
        })
        .collect();
    if counts.is_empty() {
        format!("no abnormal pods among {total}")
    } else {
        format!(
            "{} abnormal of {total} pods: {}",
            rows.len(),
            counts.join(", ")
        )
    }
}
