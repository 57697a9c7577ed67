//! The UI's model: everything the screen shows, owned by the UI task alone.

use chrono::{DateTime, Utc};

use super::cluster_view::Clusters;
use super::confirm::Confirmation;
use super::details::PodDetails;
use super::event::{ClusterLine, Routed};
use super::order;
use opc_core::actions::{ParkedList, PodRef};
use opc_core::cluster::{ClusterName, Listed};
use opc_core::config::UiConfig;
use opc_core::policy::Flags;
use opc_core::report::RestartReport;
use opc_core::rules::{RuleKind, RuleSpec};
use opc_core::worker::{Blocked, HeldReason, Pause, WorkerStatus};

pub use super::event::WatchLine;
pub(crate) use super::order::SortKey;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BottomPane {
    #[default]
    Log,
    Rules,
    Report,
}

impl BottomPane {
    /// The next pane in the order log, rules, report, round; the previous one backwards.
    pub(crate) fn step(self, forward: bool) -> BottomPane {
        match (self, forward) {
            (BottomPane::Report, true) | (BottomPane::Rules, false) => BottomPane::Log,
            (BottomPane::Log, true) | (BottomPane::Report, false) => BottomPane::Rules,
            (BottomPane::Rules, true) | (BottomPane::Log, false) => BottomPane::Report,
        }
    }
}

/// The details of one pod, fetched on demand: shown in the main area in place of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DetailsView {
    pub(crate) pod: Routed<PodRef>,
    pub(crate) content: DetailsContent,
    pub(crate) scroll: u16,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DetailsContent {
    Loading,
    Loaded(PodDetails),
    Failed(super::event::Unanswered),
}

/// What floats above the screen and takes the keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    Help,
    Confirm(Confirmation),
    /// Waiting for the API before a confirmation can name its target.
    Resolving(String),
    /// A pod action's dialog, waiting for the opt-out check of the targets' owners.
    Checking(Confirmation),
    /// The kubeconfig's contexts: Enter shows one alone, space adds or drops one.
    Contexts {
        names: Vec<ClusterName>,
        selected: usize,
    },
    /// Each open cluster's watch in full, when the header only summarises them.
    Clusters,
    /// The workloads scaled to zero in the open clusters; `None` while they are read.
    Parked {
        list: Option<ParkedList>,
        selected: usize,
    },
}

/// The line at the bottom: the last outcome or hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusLine {
    pub text: String,
    pub error: bool,
}

/// The table of abnormal pods: what is listed, which rows show, and where the cursor is.
#[derive(Debug, Clone, Default)]
pub(super) struct Table {
    /// Every abnormal pod, ordered by the sort key; classified once per cache change.
    pub(super) findings: Vec<Listed>,
    /// Abnormal pods per rule, in chain order.
    pub(super) counts: Vec<usize>,
    /// Index into `chain` of the category shown.
    pub(super) category: usize,
    /// Indices into `findings` of the rows of the table (category, then filter).
    pub(super) rows: Vec<usize>,
    pub(super) selected: usize,
    /// First row drawn; kept so the selection stays in view.
    pub(super) offset: usize,
    /// Rows that fit in the table, learnt from the terminal size.
    pub(super) height: usize,
    pub(super) filter: String,
    pub(super) filtering: bool,
    pub(super) sort: SortKey,
    pub(super) sort_reversed: bool,
}

/// What the run may do, set once from the command line, the config and the audit log.
#[derive(Debug, Clone, Default)]
pub struct Switches {
    /// `--dry-run` (or the config's), `--readonly`, `--no-audit`.
    pub flags: Flags,
    /// Why the audit log cannot be written: nothing may act, and every dialog says so.
    pub audit_problem: Option<String>,
    /// Whether the config names report sinks: `r` has somewhere to send.
    pub report_sinks: bool,
}

/// The screen's whole model: `update` alone changes it, the views only read it.
#[derive(Debug, Clone)]
pub struct State {
    /// The open clusters, in the order they were opened, with all the screen holds for each.
    pub(super) clusters: Clusters,
    pub(super) scope: String,
    pub(super) switches: Switches,
    pub(super) keys: UiConfig,
    pub(super) chain: Vec<RuleSpec>,
    pub(super) now: DateTime<Utc>,
    pub(super) total_pods: usize,
    pub(super) table: Table,
    pub(super) details: Option<DetailsView>,
    pub(super) bottom: BottomPane,
    pub(super) overlay: Option<Overlay>,
    pub(super) report: Option<RestartReport>,
    pub(super) status: Option<StatusLine>,
    pub(super) quit: bool,
}

impl State {
    /// Why actions wait, for the header; with several clusters open, each blocked one named,
    /// those blocked for the same reason sharing it ("a, b: why").
    pub fn blocked(&self) -> Option<String> {
        let workers = self.clusters.workers();
        if workers.len() == 1 {
            return Some(workers.values().next()?.blocked.as_ref()?.to_string());
        }
        let mut reasons: Vec<(&Blocked, Vec<&str>)> = Vec::new();
        for (cluster, status) in &workers {
            let Some(why) = &status.blocked else { continue };
            match reasons.iter_mut().find(|(seen, _)| *seen == why) {
                Some((_, clusters)) => clusters.push(cluster.as_str()),
                None => reasons.push((why, vec![cluster.as_str()])),
            }
        }
        let said: Vec<String> = reasons
            .into_iter()
            .map(|(why, clusters)| format!("{}: {why}", clusters.join(", ")))
            .collect();
        (!said.is_empty()).then(|| said.join("; "))
    }

    /// The open clusters' workers as one: a switch or a hold or pause of any cluster counts,
    /// naming the cluster when there are several.
    pub fn worker(&self) -> WorkerStatus {
        let reported = self.clusters.workers();
        let mut workers = reported.iter();
        let Some((first_name, first)) = workers.next() else {
            return WorkerStatus::default();
        };
        if reported.len() == 1 {
            return (*first).clone();
        }
        let mut all = (*first).clone();
        all.blocked = None;
        for status in all.rules.values_mut() {
            for pause in &mut status.paused {
                pause.cluster = Some((*first_name).clone());
            }
            if let Some(held) = &mut status.held_reason {
                held.cluster = Some((*first_name).clone());
            }
        }
        for (cluster, other) in workers {
            all.master_auto |= other.master_auto;
            all.dry_run |= other.dry_run;
            for (rule, theirs) in &other.rules {
                let ours = all.rules.entry(*rule).or_default();
                ours.auto |= theirs.auto;
                ours.actions_taken += theirs.actions_taken;
                ours.failures += theirs.failures;
                ours.held += theirs.held;
                ours.paused.extend(theirs.paused.iter().map(|pause| Pause {
                    cluster: Some((*cluster).clone()),
                    ..pause.clone()
                }));
                if ours.held_reason.is_none() {
                    ours.held_reason = theirs.held_reason.as_ref().map(|held| HeldReason {
                        cluster: Some((*cluster).clone()),
                        ..held.clone()
                    });
                }
            }
        }
        all
    }

    pub fn new(context: &ClusterName, scope: &str, chain: Vec<RuleSpec>, keys: UiConfig) -> State {
        let counts = vec![0; chain.len()];
        State {
            clusters: Clusters::new(context),
            scope: scope.to_string(),
            switches: Switches::default(),
            keys,
            chain,
            now: DateTime::<Utc>::UNIX_EPOCH,
            total_pods: 0,
            table: Table {
                counts,
                height: 10,
                ..Table::default()
            },
            details: None,
            bottom: BottomPane::Log,
            overlay: None,
            report: None,
            status: None,
            quit: false,
        }
    }

    pub(crate) fn current_rule(&self) -> Option<&RuleSpec> {
        self.chain.get(self.table.category)
    }

    pub fn current_kind(&self) -> Option<RuleKind> {
        self.current_rule().map(|r| r.kind)
    }

    pub fn selected_finding(&self) -> Option<&Listed> {
        self.table
            .rows
            .get(self.table.selected)
            .and_then(|&i| self.table.findings.get(i))
    }

    /// The marked pods on screen, in table order; else the selected one. A mark the view does
    /// not show (a filter hides it) is never acted on unseen.
    pub(crate) fn targets(&self) -> Vec<&Listed> {
        let marked: Vec<&Listed> = self
            .table
            .rows
            .iter()
            .filter_map(|&i| self.table.findings.get(i))
            .filter(|a| self.clusters.is_marked(a))
            .collect();
        if marked.is_empty() {
            return self.selected_finding().into_iter().collect();
        }
        marked
    }

    /// The worst of the open clusters' watches: the one-cluster header shows it.
    pub(crate) fn watch(&self) -> WatchLine {
        self.clusters
            .lines()
            .map(|c| c.watch.clone())
            .max_by_key(WatchLine::severity)
            .unwrap_or_default()
    }

    /// More than one cluster is open: rows name their cluster.
    pub(crate) fn several_clusters(&self) -> bool {
        self.clusters.len() > 1
    }

    /// Take the runtime's list of open clusters; what a closed one showed goes with it.
    pub(crate) fn sync_clusters(&mut self, lines: Vec<ClusterLine>) {
        if self.clusters.sync(lines) {
            self.forget_closed();
        }
    }

    /// Close `name` and what it showed.
    pub(crate) fn close_cluster(&mut self, name: &ClusterName) {
        self.clusters.close(name);
        self.forget_closed();
    }

    fn forget_closed(&mut self) {
        if self
            .table
            .findings
            .iter()
            .any(|a| !self.clusters.contains(a.cluster()))
        {
            let mut kept = std::mem::take(&mut self.table.findings);
            kept.retain(|a| self.clusters.contains(a.cluster()));
            self.replace_findings(kept, false);
        }
        if let Some(details) = &self.details
            && !self.clusters.contains(&details.pod.cluster)
        {
            self.details = None;
        }
    }

    /// Take a new classification, keeping the cursor on the same pod.
    pub(crate) fn replace_findings(&mut self, findings: Vec<Listed>, in_default_order: bool) {
        let keep = self.selected_finding().map(|a| a.uid().to_string());
        self.table.findings = findings;
        let sorted =
            in_default_order && self.table.sort == SortKey::Age && !self.table.sort_reversed;
        self.sort_and_filter(keep.as_deref(), sorted);
    }

    /// Re-sort after a new sort key; keeps the cursor on the same pod.
    pub(crate) fn resort(&mut self) {
        let keep = self.selected_finding().map(|a| a.uid().to_string());
        self.sort_and_filter(keep.as_deref(), false);
    }

    fn sort_and_filter(&mut self, keep: Option<&str>, sorted: bool) {
        if !sorted {
            order::sort(
                &mut self.table.findings,
                &self.chain,
                self.table.sort,
                self.table.sort_reversed,
            );
        }
        let position = |kind: RuleKind| self.chain.iter().position(|r| r.kind == kind);
        let mut counts = vec![0; self.chain.len()];
        for found in &self.table.findings {
            if let Some(at) = position(found.rule())
                && let Some(count) = counts.get_mut(at)
            {
                *count += 1;
            }
        }
        self.table.counts = counts;
        self.clusters.keep_marks_of(&self.table.findings);
        self.refilter(keep);
    }

    /// Recompute the table's rows for the category, or for the filter across every category.
    pub(crate) fn refilter(&mut self, keep: Option<&str>) {
        let kind = self.current_kind();
        let needle = self.table.filter.to_lowercase();
        self.table.rows = self
            .table
            .findings
            .iter()
            .enumerate()
            .filter(|(_, a)| match needle.is_empty() {
                true => Some(a.rule()) == kind,
                false => matches_filter(a, self.shown_action(a), &needle),
            })
            .map(|(i, _)| i)
            .collect();
        if let Some(uid) = keep
            && let Some(at) = self
                .table
                .rows
                .iter()
                .position(|&i| self.table.findings.get(i).is_some_and(|a| a.uid() == uid))
        {
            self.table.selected = at;
        }
        self.clamp();
    }

    /// Keep the cursor on a row and in the visible window.
    pub(crate) fn clamp(&mut self) {
        let table = &mut self.table;
        table.selected = table.selected.min(table.rows.len().saturating_sub(1));
        let height = table.height.max(1);
        if table.selected < table.offset {
            table.offset = table.selected;
        } else if table.selected >= table.offset + height {
            table.offset = table.selected + 1 - height;
        }
        table.offset = table.offset.min(table.rows.len().saturating_sub(height));
    }

    pub fn with_switches(mut self, switches: Switches) -> State {
        self.switches = switches;
        self
    }

    /// Each open cluster and its watch, in the order they were opened.
    pub fn cluster_lines(&self) -> Vec<&ClusterLine> {
        self.clusters.lines().collect()
    }

    /// Whether the row's workload is one its cluster's worker refused to scale as unproven.
    fn unproven(&self, a: &Listed) -> bool {
        let refused = self
            .clusters
            .worker_of(a.cluster())
            .and_then(|worker| worker.rules.get(&a.rule()))
            .map_or(&[][..], |r| &r.unproven[..]);
        // Drawn for every row of every frame: no workload is named unless one was refused.
        !refused.is_empty() && refused.contains(&a.workload())
    }

    /// What a row shows as the pod's next action: the same in the table and to the filter.
    pub(crate) fn shown_action<'a>(&self, a: &'a Listed) -> &'a str {
        let held = match a.held_label() {
            Some(held) => Some(held),
            None => self.unproven(a).then_some("unproven"),
        };
        a.action()
            .shown(a.rule(), a.deleting(), a.owner().is_some(), held)
    }

    /// The first cluster whose pods this identity may not see, and why: never "nothing abnormal".
    pub(crate) fn forbidden(&self) -> Option<(&str, &str)> {
        self.clusters.lines().find_map(|c| match &c.watch {
            WatchLine::Forbidden { what, check } => Some((what.as_str(), check.as_str())),
            _ => None,
        })
    }

    /// Whether no open cluster's pods can be seen at all.
    pub(crate) fn blind(&self) -> bool {
        let mut lines = self.clusters.lines().peekable();
        lines.peek().is_some() && lines.all(|c| matches!(c.watch, WatchLine::Forbidden { .. }))
    }

    pub fn marked_count(&self) -> usize {
        self.clusters.marked_count()
    }
}

/// Whether every word of `needle` is in some column the row shows (or its category).
fn matches_filter(a: &Listed, action: &str, needle: &str) -> bool {
    let owner = a.owner().map(|_| a.workload().label());
    let fields = [
        a.cluster().as_str(),
        a.namespace(),
        a.name(),
        a.rule().name(),
        a.reason(),
        a.cause().name(),
        a.node().unwrap_or(""),
        owner.as_deref().unwrap_or(""),
        a.owner().map_or("", |(_, name)| name),
        action,
    ];
    let fields: Vec<String> = fields.iter().map(|f| f.to_lowercase()).collect();
    needle
        .split_whitespace()
        .all(|word| fields.iter().any(|f| f.contains(word)))
}
