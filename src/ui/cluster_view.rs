//! What the screen holds for each open cluster, in one place: a cluster closed loses all of
//! it at once, so nothing of it lingers to speak for it.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::event::{ClusterLine, Routed};
use opc_core::actions::ScalableWorkload;
use opc_core::cluster::{ClusterName, Listed};
use opc_core::rules::Verb;
use opc_core::worker::WorkerStatus;

/// One open cluster as the screen knows it.
#[derive(Debug, Clone)]
struct ClusterView {
    /// Its watch and pod count, as the runtime last said.
    line: ClusterLine,
    /// Its worker as it last reported; `None` until it does.
    worker: Option<WorkerStatus>,
    /// UIDs of its marked pods.
    marks: BTreeSet<String>,
    /// Verbs its API refused with 403, and what it said: those actions show as unavailable.
    forbidden: BTreeMap<Verb, String>,
    /// Workloads scaled to zero from this screen, each with its place in the screen's count of
    /// scalings, so undo finds the newest whichever cluster it is on.
    scaled: Vec<(u64, ScalableWorkload)>,
}

impl ClusterView {
    fn of(line: ClusterLine) -> ClusterView {
        ClusterView {
            line,
            worker: None,
            marks: BTreeSet::new(),
            forbidden: BTreeMap::new(),
            scaled: Vec::new(),
        }
    }
}

/// The open clusters, in the order they were opened (a handful: a list serves as the map).
#[derive(Debug, Clone)]
pub(crate) struct Clusters {
    views: Vec<ClusterView>,
    /// Scalings so far: orders the scaled workloads across clusters.
    scalings: u64,
}

impl Clusters {
    /// `first` alone, listing.
    pub(crate) fn new(first: &ClusterName) -> Clusters {
        Clusters {
            views: vec![ClusterView::of(ClusterLine::listing(first))],
            scalings: 0,
        }
    }

    fn get(&self, name: &ClusterName) -> Option<&ClusterView> {
        self.views.iter().find(|v| v.line.name == *name)
    }

    fn get_mut(&mut self, name: &ClusterName) -> Option<&mut ClusterView> {
        self.views.iter_mut().find(|v| v.line.name == *name)
    }

    /// Take the runtime's list as the truth: listed clusters keep their view, others go with
    /// all they held. Whether any went.
    pub(crate) fn sync(&mut self, lines: Vec<ClusterLine>) -> bool {
        let mut views = Vec::with_capacity(lines.len());
        for line in lines {
            let view = match self.views.iter().position(|v| v.line.name == line.name) {
                Some(at) => ClusterView {
                    line,
                    ..self.views.swap_remove(at)
                },
                None => ClusterView::of(line),
            };
            views.push(view);
        }
        // What is left was not listed.
        let gone = !self.views.is_empty();
        self.views = views;
        gone
    }

    /// Open `name` next to the others, listing; one already open stays as it is.
    pub(crate) fn open(&mut self, name: &ClusterName) {
        if !self.contains(name) {
            self.views.push(ClusterView::of(ClusterLine::listing(name)));
        }
    }

    /// `name` alone, afresh: what a switch of context leaves.
    pub(crate) fn only(&mut self, name: &ClusterName) {
        self.views = vec![ClusterView::of(ClusterLine::listing(name))];
    }

    /// Close `name` with all it held.
    pub(crate) fn close(&mut self, name: &ClusterName) {
        self.views.retain(|v| v.line.name != *name);
    }

    pub(crate) fn contains(&self, name: &ClusterName) -> bool {
        self.get(name).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        self.views.len()
    }

    /// Each open cluster's line, in opening order.
    pub(crate) fn lines(&self) -> impl ExactSizeIterator<Item = &ClusterLine> {
        self.views.iter().map(|v| &v.line)
    }

    /// A worker's report; one of a cluster that is not open is dropped.
    pub(crate) fn set_worker(&mut self, name: &ClusterName, status: WorkerStatus) {
        if let Some(view) = self.get_mut(name) {
            view.worker = Some(status);
        }
    }

    pub(crate) fn worker_of(&self, name: &ClusterName) -> Option<&WorkerStatus> {
        self.get(name)?.worker.as_ref()
    }

    /// The workers that reported, by cluster name.
    pub(crate) fn workers(&self) -> BTreeMap<ClusterName, &WorkerStatus> {
        self.views
            .iter()
            .filter_map(|v| Some((v.line.name.clone(), v.worker.as_ref()?)))
            .collect()
    }

    pub(crate) fn is_marked(&self, found: &Listed) -> bool {
        self.get(found.cluster())
            .is_some_and(|v| v.marks.contains(found.uid()))
    }

    pub(crate) fn toggle_mark(&mut self, found: &Listed) {
        if let Some(view) = self.get_mut(found.cluster())
            && !view.marks.remove(found.uid())
        {
            view.marks.insert(found.uid().to_string());
        }
    }

    pub(crate) fn unmark(&mut self, cluster: &ClusterName, uid: &str) {
        if let Some(view) = self.get_mut(cluster) {
            view.marks.remove(uid);
        }
    }

    pub(crate) fn marked_count(&self) -> usize {
        self.views.iter().map(|v| v.marks.len()).sum()
    }

    /// Clear every mark; how many there were.
    pub(crate) fn clear_marks(&mut self) -> usize {
        let count = self.marked_count();
        self.views.iter_mut().for_each(|v| v.marks.clear());
        count
    }

    pub(crate) fn keep_marks_of(&mut self, findings: &[Listed]) {
        if self.marked_count() == 0 {
            return;
        }
        let present: HashSet<(&str, &str)> = findings
            .iter()
            .map(|a| (a.cluster().as_str(), a.uid()))
            .collect();
        for view in &mut self.views {
            let cluster = view.line.name.as_str();
            view.marks
                .retain(|uid| present.contains(&(cluster, uid.as_str())));
        }
    }

    /// Why `cluster`'s API will refuse `verb`, if it already did.
    pub(crate) fn forbidden_reason(&self, cluster: &ClusterName, verb: Verb) -> Option<&str> {
        self.get(cluster)?.forbidden.get(&verb).map(String::as_str)
    }

    /// `cluster`'s API refused `verb` with 403; the first reason given stays.
    pub(crate) fn forbid(&mut self, cluster: &ClusterName, verb: Verb, why: String) {
        if let Some(view) = self.get_mut(cluster) {
            view.forbidden.entry(verb).or_insert(why);
        }
    }

    /// `workload` was scaled to zero on `cluster` from this screen: undo may restore it.
    pub(crate) fn scaled(&mut self, cluster: &ClusterName, workload: ScalableWorkload) {
        self.scalings += 1;
        let at = self.scalings;
        if let Some(view) = self.get_mut(cluster) {
            view.scaled.push((at, workload));
        }
    }

    /// `workload` on `cluster` has its replicas back: nothing to undo there.
    pub(crate) fn restored(&mut self, cluster: &ClusterName, workload: &ScalableWorkload) {
        if let Some(view) = self.get_mut(cluster) {
            view.scaled.retain(|(_, w)| w != workload);
        }
    }

    /// The workload scaled to zero last from this screen, on any open cluster.
    pub(crate) fn last_scaled(&self) -> Option<Routed<ScalableWorkload>> {
        self.views
            .iter()
            .flat_map(|v| v.scaled.iter().map(move |(at, w)| (at, &v.line.name, w)))
            .max_by_key(|(at, _, _)| **at)
            .map(|(_, cluster, w)| Routed::new(cluster, w.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::state::WatchLine;

    fn line(name: &ClusterName, watch: WatchLine) -> ClusterLine {
        ClusterLine {
            watch,
            pods: 3,
            ..ClusterLine::listing(name)
        }
    }

    fn c(name: &str) -> ClusterName {
        ClusterName::new(name)
    }

    #[test]
    fn a_sync_that_drops_nothing_says_so() {
        let mut clusters = Clusters::new(&c("eu"));
        assert!(!clusters.sync(vec![line(&c("eu"), WatchLine::Synced)]));
        assert!(!clusters.sync(vec![
            line(&c("eu"), WatchLine::Synced),
            line(&c("us"), WatchLine::Listing),
        ]));
        assert!(clusters.sync(vec![line(&c("us"), WatchLine::Synced)]));
    }
}
