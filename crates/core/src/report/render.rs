//! The report as Markdown (files, the terminal), chat text (Feishu, Slack), JSON and CSV.

use std::fmt::Write;

use chrono::SecondsFormat;

use super::{RestartReport, RestartRow, WorkloadGroup};
use crate::inert;

const NONE: &str = "-";

pub fn json(report: &RestartReport) -> String {
    serde_json::to_string_pretty(report).unwrap_or_default()
}

/// One sentence on what the report holds.
pub(crate) fn headline(report: &RestartReport) -> String {
    let at = report.generated.to_rfc3339_opts(SecondsFormat::Secs, true);
    let clusters = match report.clusters.is_empty() {
        true => format!("Cluster {}", report.cluster),
        false => format!("Clusters {}", report.clusters.join(", ")),
    };
    format!(
        "{clusters}, {at}: {}",
        holds(&report.groups.iter().collect::<Vec<_>>())
    )
}

/// The headline, and under it what "too often" means (when the report says).
pub(crate) fn headline_and_terms(report: &RestartReport) -> String {
    match &report.terms {
        Some(terms) => format!("{}\n{}", headline(report), terms.note()),
        None => headline(report),
    }
}

/// "N containers in M workloads restart too often." or "no pod restarts too often."
fn holds(groups: &[&WorkloadGroup]) -> String {
    let rows: usize = groups.iter().map(|g| g.rows.len()).sum();
    match rows {
        0 => "no pod restarts too often.".to_string(),
        _ => format!(
            "{rows} {} in {} {} too often.",
            if rows == 1 { "container" } else { "containers" },
            groups.len(),
            if groups.len() == 1 {
                "workload restarts"
            } else {
                "workloads restart"
            },
        ),
    }
}

/// Over several clusters, a `##` heading per cluster, its groups one level down.
pub fn markdown(report: &RestartReport) -> String {
    let mut out = format!("# {}\n\n{}\n", report.title, headline(report));
    if let Some(terms) = &report.terms {
        let _ = writeln!(out, "\n{}", terms.note());
    }
    let first = report.terms.as_ref().is_some_and(|t| t.first);
    for section in report.sections() {
        let level = match section.cluster {
            None => "##",
            Some(cluster) => {
                let _ = write!(
                    out,
                    "\n## {}\n\n{}\n",
                    inert::markdown(cluster),
                    capital(&holds(&section.groups))
                );
                "###"
            }
        };
        for group in section.groups {
            let _ = write!(
                out,
                "\n{level} {} / {}\n\n| pod | container | restarts | since previous | last reason | exit code | last restart | node |\n\
                 |---|---|---:|---:|---|---:|---|---|\n",
                inert::markdown(&group.namespace),
                inert::markdown(&group.workload)
            );
            for r in &group.rows {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {} | {} |",
                    inert::markdown(&r.pod),
                    inert::markdown(&r.container),
                    r.restarts,
                    r.since(first).as_deref().unwrap_or(NONE),
                    inert::markdown(r.last_reason.as_deref().unwrap_or(NONE)),
                    exit_code(r),
                    last_restart(r),
                    inert::markdown(r.node.as_deref().unwrap_or(NONE))
                );
            }
        }
    }
    out
}

fn capital(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The chat a message goes to: each has its own bold and its own markup to keep out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chat {
    /// Feishu/Lark card markdown.
    Lark,
    /// Slack mrkdwn.
    Slack,
}

impl Chat {
    fn bold(self, text: &str) -> String {
        match self {
            Chat::Lark => format!("**{text}**"),
            Chat::Slack => format!("*{text}*"),
        }
    }

    /// What a tenant wrote, as this chat shows it without acting on it.
    fn inert(self, text: &str) -> String {
        match self {
            Chat::Lark => inert::lark(text),
            Chat::Slack => inert::slack(text),
        }
    }
}

/// Compact text for a chat message, cut at about `limit` bytes with a count of what is left;
/// over several clusters, each cluster's groups under its name.
pub fn chat(report: &RestartReport, limit: usize, to: Chat) -> String {
    let mut out = String::new();
    let total: usize = report.groups.iter().map(|g| g.rows.len()).sum();
    let mut shown = 0;
    'sections: for section in report.sections() {
        if let Some(cluster) = section.cluster {
            let name = to.bold(&format!("Cluster {}", to.inert(cluster)));
            let rows: usize = section.groups.iter().map(|g| g.rows.len()).sum();
            let heading = match rows {
                0 => format!("{name}: no pod restarts too often\n"),
                _ => format!("{name}\n"),
            };
            if out.len() + heading.len() > limit {
                break;
            }
            out.push_str(&heading);
        }
        for group in section.groups {
            let heading = to.bold(&format!(
                "{} · {}",
                to.inert(&group.namespace),
                to.inert(&group.workload)
            )) + "\n";
            if out.len() + heading.len() > limit {
                break 'sections;
            }
            out.push_str(&heading);
            for r in &group.rows {
                let line = format!(
                    "- {} / {}: {} restarts{}, {}, exit {}, last {}, node {}\n",
                    to.inert(&r.pod),
                    to.inert(&r.container),
                    r.restarts,
                    r.since_previous
                        .map(|n| format!(" (+{n})"))
                        .unwrap_or_default(),
                    to.inert(r.last_reason.as_deref().unwrap_or(NONE)),
                    exit_code(r),
                    last_restart(r),
                    to.inert(r.node.as_deref().unwrap_or(NONE))
                );
                if out.len() + line.len() > limit {
                    break 'sections;
                }
                out.push_str(&line);
                shown += 1;
            }
        }
    }
    if shown < total {
        let _ = writeln!(
            out,
            "… and {} more containers (see the full report)",
            total - shown
        );
    }
    out
}

/// Over several clusters, a first `cluster` column. Every field goes through [`inert::csv`]:
/// a name a tenant wrote as `=cmd|…` is no formula in a spreadsheet.
pub fn csv(report: &RestartReport) -> String {
    let several = !report.clusters.is_empty();
    let mut out = String::from(if several { "cluster," } else { "" });
    out.push_str(
        "namespace,workload,pod,container,restarts,sincePrevious,lastReason,exitCode,lastRestart,node\n",
    );
    for group in &report.groups {
        for r in &group.rows {
            let cluster = several.then(|| group.cluster.clone().unwrap_or_default());
            // Numbers and times this process wrote go as they are: `-1` is an exit code.
            let mut fields: Vec<String> = cluster.iter().map(|c| inert::csv(c)).collect();
            fields.extend(
                [&group.namespace, &group.workload, &r.pod, &r.container].map(|f| inert::csv(f)),
            );
            fields.push(r.restarts.to_string());
            fields.push(r.since_previous.map(|n| n.to_string()).unwrap_or_default());
            fields.push(inert::csv(r.last_reason.as_deref().unwrap_or_default()));
            fields.push(r.exit_code.map(|c| c.to_string()).unwrap_or_default());
            fields.push(
                r.last_restart
                    .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
                    .unwrap_or_default(),
            );
            fields.push(inert::csv(r.node.as_deref().unwrap_or_default()));
            out.push_str(&fields.join(","));
            out.push('\n');
        }
    }
    out
}

fn exit_code(r: &RestartRow) -> String {
    r.exit_code
        .map(|c| c.to_string())
        .unwrap_or_else(|| NONE.into())
}

fn last_restart(r: &RestartRow) -> String {
    r.last_restart
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| NONE.into())
}
