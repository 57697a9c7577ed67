//! `scan`: one look at the cluster, abnormal pods by category, as a table or JSON.

mod clusters;
mod namespaces;
mod parked;

use std::fmt::Write;

use chrono::{DateTime, Utc};
use serde::Serialize;

pub use clusters::{Gathered, over_clusters};
pub use parked::{parked_summary, parked_table};

use crate::cluster::{Cluster, Scope, list_pods};
use crate::pod::PodRecord;
use crate::rules::{ActionKind, RuleKind, RuleSpec, classify, format_age};
use crate::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Owner {
    pub kind: String,
    pub name: String,
}

/// One abnormal pod, as `scan --output json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanRow {
    pub cluster: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub category: RuleKind,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    pub since: DateTime<Utc>,
    pub for_seconds: i64,
    pub restarts: u32,
    pub node: Option<String>,
    pub owner: Option<Owner>,
    pub action: ActionKind,
}

/// The pods every scope of one cluster holds now. A namespace that lists no pods may be a
/// typo in `-n`: it is checked to exist, so the answer is an error, not "nothing abnormal".
pub async fn list_cluster(
    cluster: &Cluster,
    scopes: &[Scope],
    page_size: u32,
) -> Result<Vec<PodRecord>> {
    let listed = list_scopes(cluster, scopes, page_size).await?;
    match listed.missing.into_iter().next() {
        Some(missing) => Err(Error::Api(missing.why)),
        None => Ok(listed.pods),
    }
}

/// One cluster's pods, and the `-n` namespaces that do not exist there.
pub struct Listed {
    pub pods: Vec<PodRecord>,
    pub missing: Vec<MissingNamespace>,
}

/// A namespace given with `-n` that a cluster does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingNamespace {
    pub namespace: String,
    /// Says so, naming the context and the namespaces there are.
    pub why: String,
}

/// As [`list_cluster`], with the namespaces that do not exist returned, not an error.
pub async fn list_scopes(cluster: &Cluster, scopes: &[Scope], page_size: u32) -> Result<Listed> {
    let (mut pods, mut missing) = (Vec::new(), Vec::new());
    for scope in scopes {
        let listed = list_pods(&cluster.client, scope, page_size).await?.pods;
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
    Ok(Listed { pods, missing })
}

/// Classify `pods` and order the abnormal ones by chain position, namespace and name.
pub fn rows(
    cluster: &str,
    pods: &[PodRecord],
    chain: &[RuleSpec],
    now: DateTime<Utc>,
) -> Vec<ScanRow> {
    let mut rows: Vec<ScanRow> = pods
        .iter()
        .filter_map(|pod| {
            let f = classify(pod, chain, now)?;
            Some(ScanRow {
                cluster: cluster.to_string(),
                namespace: pod.namespace.to_string(),
                name: pod.name.to_string(),
                uid: pod.uid.to_string(),
                category: f.rule,
                for_seconds: f.time_in_state(now).num_seconds().max(0),
                reason: f.reason,
                message: f.message,
                container: f.container,
                since: f.since,
                restarts: pod.total_restarts(),
                node: pod.node.as_deref().map(String::from),
                owner: pod.owner.as_ref().map(|o| Owner {
                    kind: o.kind.to_string(),
                    name: o.name.to_string(),
                }),
                action: f.action,
            })
        })
        .collect();
    sort_rows(&mut rows, chain);
    rows
}

/// By chain position, cluster, namespace and name: rows of several clusters merge into one
/// list by category.
pub fn sort_rows(rows: &mut [ScanRow], chain: &[RuleSpec]) {
    let position = |kind: RuleKind| {
        chain
            .iter()
            .position(|r| r.kind == kind)
            .unwrap_or(usize::MAX)
    };
    rows.sort_by(|a, b| {
        (position(a.category), &a.cluster, &a.namespace, &a.name).cmp(&(
            position(b.category),
            &b.cluster,
            &b.namespace,
            &b.name,
        ))
    });
}

pub fn to_json(rows: &[ScanRow]) -> String {
    serde_json::to_string_pretty(rows).unwrap_or_else(|_| "[]".to_string())
}

/// An aligned table, kubectl style; the cluster column only when there are several.
pub fn to_table(rows: &[ScanRow], several_clusters: bool) -> String {
    let mut header = vec![
        "CATEGORY",
        "NAMESPACE",
        "NAME",
        "REASON",
        "FOR",
        "RESTARTS",
        "NODE",
        "OWNER",
        "ACTION",
    ];
    if several_clusters {
        header.insert(0, "CLUSTER");
    }
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for row in rows {
        let mut cells = vec![
            row.category.to_string(),
            row.namespace.clone(),
            row.name.clone(),
            row.reason.clone(),
            format_age(chrono::Duration::seconds(row.for_seconds)),
            row.restarts.to_string(),
            row.node.clone().unwrap_or_else(|| "-".into()),
            row.owner
                .as_ref()
                .map_or("-".into(), |o| format!("{}/{}", o.kind, o.name)),
            row.action.to_string(),
        ];
        if several_clusters {
            cells.insert(0, row.cluster.clone());
        }
        table.push(cells);
    }
    aligned(&table)
}

/// Rows of cells as columns padded to their widest cell, two spaces apart, kubectl style.
fn aligned(table: &[Vec<String>]) -> String {
    let columns = table.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            table
                .iter()
                .map(|r| r.get(c).map_or(0, |cell| cell.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in table {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    out
}

/// "3 abnormal of 120 pods: evicted 1, imagePull 2".
pub fn summary(rows: &[ScanRow], total: usize, chain: &[RuleSpec]) -> String {
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
