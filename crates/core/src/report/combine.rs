//! One report over several clusters: each cluster's groups, tagged with it, one after the
//! other, so one message per sink carries them all.

use super::{RestartReport, Terms, WorkloadGroup};

impl RestartReport {
    /// The reports of several clusters as one, in their order. One report stays as it is:
    /// a one-cluster report looks as it always did.
    pub fn combine(mut reports: Vec<RestartReport>) -> Option<RestartReport> {
        if reports.len() <= 1 {
            return reports.pop();
        }
        let clusters: Vec<String> = reports.iter().map(|r| r.cluster.clone()).collect();
        let first = reports.first()?;
        let (title, generated) = (first.title.clone(), first.generated);
        // One config made them all; "first" only when no cluster had a report before.
        let terms = first.terms.clone().map(|terms| Terms {
            first: reports
                .iter()
                .all(|r| r.terms.as_ref().is_some_and(|t| t.first)),
            ..terms
        });
        let groups = reports
            .into_iter()
            .flat_map(|report| {
                let cluster = report.cluster;
                report.groups.into_iter().map(move |group| WorkloadGroup {
                    cluster: Some(cluster.clone()),
                    ..group
                })
            })
            .collect();
        Some(RestartReport {
            title,
            cluster: clusters.join(", "),
            generated,
            groups,
            clusters,
            terms,
        })
    }

    /// The groups by cluster, in order: one section without a name for a one-cluster
    /// report, one per cluster (maybe empty) for a combined one.
    pub(crate) fn sections(&self) -> Vec<Section<'_>> {
        if self.clusters.is_empty() {
            return vec![Section {
                cluster: None,
                groups: self.groups.iter().collect(),
            }];
        }
        self.clusters
            .iter()
            .map(|name| Section {
                cluster: Some(name),
                groups: self
                    .groups
                    .iter()
                    .filter(|g| g.cluster.as_ref() == Some(name))
                    .collect(),
            })
            .collect()
    }
}

/// One cluster's part of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section<'a> {
    /// `None` in a one-cluster report.
    pub(crate) cluster: Option<&'a String>,
    pub(crate) groups: Vec<&'a WorkloadGroup>,
}
