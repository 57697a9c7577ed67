//! The findings kept up to date as pods change: one classification per event, for the pod that
//! changed; rules that mature with time (`after`) are re-classified when due, not on every
//! read. Readers pay for the abnormal pods, never all pods, and get them in the screen's default
//! order (chain position, time in state, namespace, name) without sorting.

use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::abnormal::Abnormal;
use super::event_store::EventStore;
use super::name::ClusterName;
use super::node_store::NodeStore;
use crate::pod::{PodRecord, WorkloadId};
use crate::rules::{CauseClass, RuleKind, RuleSpec, cause_class, classify, next_change};

/// How many pods that could be healthy (not Succeeded or Failed) each namespace and each
/// workload holds: what the mass-failure breaker compares its matches with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Census {
    namespaces: HashMap<String, u32>,
    workloads: HashMap<WorkloadId, u32>,
}

impl Census {
    pub fn add(&mut self, pod: &PodRecord) {
        if pod.phase.finished() {
            return;
        }
        *self
            .namespaces
            .entry(pod.namespace.to_string())
            .or_default() += 1;
        *self.workloads.entry(WorkloadId::of(pod)).or_default() += 1;
    }

    /// A count that falls to zero goes: a Job per CronJob run, a bare pod, a namespace that
    /// lived an hour must not stay behind for good.
    pub(crate) fn remove(&mut self, pod: &PodRecord) {
        if pod.phase.finished() {
            return;
        }
        decrement(&mut self.namespaces, pod.namespace.to_string());
        decrement(&mut self.workloads, WorkloadId::of(pod));
    }

    pub(crate) fn namespace(&self, namespace: &str) -> u32 {
        self.namespaces.get(namespace).copied().unwrap_or(0)
    }

    pub(crate) fn workload(&self, workload: &WorkloadId) -> u32 {
        self.workloads.get(workload).copied().unwrap_or(0)
    }
}

fn decrement<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, u32>, key: K) {
    if let Entry::Occupied(mut count) = counts.entry(key) {
        *count.get_mut() = count.get().saturating_sub(1);
        if *count.get() == 0 {
            count.remove();
        }
    }
}

/// What a pod's cause reads besides the pod: its latest Warning Events and its node's state.
pub(super) type EventsAndNodes<'a> = (&'a EventStore, &'a NodeStore);

/// Where a finding sits in the default order; unique per pod thanks to the UID.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    rule: usize,
    since: DateTime<Utc>,
    namespace: Arc<str>,
    name: Box<str>,
    uid: Box<str>,
}

impl Place {
    fn of(found: &Abnormal, chain: &[RuleSpec]) -> Place {
        let rule = chain
            .iter()
            .position(|r| r.kind == found.finding.rule)
            .unwrap_or(chain.len());
        Place {
            rule,
            since: found.finding.since,
            namespace: found.pod.namespace.clone(),
            name: found.pod.name.clone(),
            uid: found.pod.uid.clone(),
        }
    }
}

/// Findings in the default order, where each pod's sits, and counts, under one rule chain.
#[derive(Default)]
pub(super) struct Index {
    pub cluster: ClusterName,
    pub chain: Vec<RuleSpec>,
    /// Shared: a screen lists them without copying one.
    ordered: BTreeMap<Place, Arc<Abnormal>>,
    places: HashMap<Box<str>, Place>,
    /// Findings by category and cause, for `/metrics`; and each finding's, to take it back.
    causes: BTreeMap<(RuleKind, CauseClass), usize>,
    cause_of: HashMap<Box<str>, (RuleKind, CauseClass)>,
    /// When each pod's classification may next change by time alone; the heap may hold
    /// outdated entries, `scheduled` says which one counts.
    due: BinaryHeap<Reverse<(DateTime<Utc>, Box<str>)>>,
    scheduled: HashMap<Box<str>, DateTime<Utc>>,
    pub census: Census,
}

impl Index {
    pub fn new(cluster: ClusterName, chain: Vec<RuleSpec>) -> Index {
        Index {
            cluster,
            chain,
            ..Index::default()
        }
    }

    /// A pod arrived or changed (after `forget` of its old version), or its Events or its node did.
    pub fn admit(&mut self, pod: &Arc<PodRecord>, stores: EventsAndNodes<'_>, now: DateTime<Utc>) {
        self.census.add(pod);
        self.classify(pod, stores, now);
    }

    /// The pods with a finding on `node`: those whose cause its state may change.
    pub fn abnormal_on(&self, node: &str) -> Vec<Box<str>> {
        self.ordered
            .values()
            .filter(|found| found.pod.node.as_deref() == Some(node))
            .map(|found| found.pod.uid.clone())
            .collect()
    }

    /// A pod left, or is about to be replaced by a newer version.
    pub fn forget(&mut self, pod: &PodRecord) {
        self.census.remove(pod);
        self.set_finding(&pod.uid, None);
        self.scheduled.remove(&pod.uid);
    }

    /// Re-classify the pods whose rules matured by `now`. Returns whether a finding changed.
    pub fn promote(
        &mut self,
        pods: &HashMap<Box<str>, Arc<PodRecord>>,
        stores: EventsAndNodes<'_>,
        now: DateTime<Utc>,
    ) -> bool {
        let mut changed = false;
        while let Some(Reverse((due, _))) = self.due.peek() {
            if *due > now {
                break;
            }
            let Some(Reverse((due, uid))) = self.due.pop() else {
                break;
            };
            if self.scheduled.get(&uid) != Some(&due) {
                continue;
            }
            self.scheduled.remove(&uid);
            if let Some(pod) = pods.get(&uid) {
                let before = self.places.get(&uid).cloned();
                self.classify(pod, stores, now);
                changed |= before.as_ref() != self.places.get(&uid);
            }
        }
        changed
    }

    /// When the next pod's classification may change by time alone (maybe an outdated entry).
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        self.due.peek().map(|Reverse((due, _))| *due)
    }

    pub fn is_abnormal(&self, uid: &str) -> bool {
        self.places.contains_key(uid)
    }

    /// Every finding, in the default order.
    pub fn findings(&self) -> impl Iterator<Item = &Arc<Abnormal>> {
        self.ordered.values()
    }

    /// Findings by category and cause as `promote(now)` would leave them, without promoting:
    /// for readers that must not write (`/metrics`).
    pub fn cause_counts_at(
        &self,
        pods: &HashMap<Box<str>, Arc<PodRecord>>,
        (events, nodes): EventsAndNodes<'_>,
        now: DateTime<Utc>,
    ) -> BTreeMap<(RuleKind, CauseClass), usize> {
        let mut causes = self.causes.clone();
        let matured = self.scheduled.iter().filter(|(_, due)| **due <= now);
        for (uid, _) in matured {
            let Some(pod) = pods.get(uid) else {
                continue;
            };
            if let Some(key) = self.cause_of.get(uid) {
                uncount(&mut causes, *key);
            }
            if let Some(finding) = classify(pod, &self.chain, now) {
                let events = events.of(pod).map_or(&[][..], |e| e);
                let cause = cause_class(pod, &finding, events, nodes.of(pod));
                *causes.entry((finding.rule, cause)).or_default() += 1;
            }
        }
        causes
    }

    fn classify(&mut self, pod: &Arc<PodRecord>, stores: EventsAndNodes<'_>, now: DateTime<Utc>) {
        let (events, nodes) = stores;
        let found = classify(pod, &self.chain, now).map(|finding| {
            let (events, node) = (events.of(pod), nodes.of(pod));
            // One event classifies one pod: its cause is found here, once, not per read.
            let cause = cause_class(pod, &finding, events.map_or(&[], |e| e), node);
            Abnormal {
                cluster: self.cluster.clone(),
                pod: pod.clone(),
                finding: Arc::new(finding),
                cause,
                events: events.cloned(),
                node: node.cloned().map(Arc::new),
            }
        });
        self.set_finding(&pod.uid, found);
        match next_change(pod, &self.chain, now) {
            Some(due) => {
                if self.scheduled.insert(pod.uid.clone(), due) != Some(due) {
                    self.due.push(Reverse((due, pod.uid.clone())));
                }
            }
            None => {
                self.scheduled.remove(&pod.uid);
            }
        }
    }

    fn set_finding(&mut self, uid: &str, found: Option<Abnormal>) {
        if let Some(place) = self.places.remove(uid) {
            self.ordered.remove(&place);
        }
        if let Some(key) = self.cause_of.remove(uid) {
            uncount(&mut self.causes, key);
        }
        if let Some(found) = found {
            let key = (found.finding.rule, found.cause);
            *self.causes.entry(key).or_default() += 1;
            self.cause_of.insert(uid.into(), key);
            let place = Place::of(&found, &self.chain);
            self.places.insert(uid.into(), place.clone());
            self.ordered.insert(place, Arc::new(found));
        }
    }
}

/// One finding fewer of `key`; a cause with none left goes (no series stays at 0).
fn uncount(causes: &mut BTreeMap<(RuleKind, CauseClass), usize>, key: (RuleKind, CauseClass)) {
    if let std::collections::btree_map::Entry::Occupied(mut count) = causes.entry(key) {
        *count.get_mut() = count.get().saturating_sub(1);
        if *count.get() == 0 {
            count.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pod::{Interner, decode_pod};

    fn running(namespace: &str, name: &str, job: &str) -> PodRecord {
        let json = serde_json::json!({
            "metadata": { "name": name, "namespace": namespace, "uid": name,
                "ownerReferences": [{ "apiVersion": "batch/v1", "kind": "Job", "name": job,
                    "uid": job, "controller": true }] },
            "status": { "phase": "Running" },
        });
        decode_pod(json.to_string().as_bytes(), &mut Interner::default()).unwrap()
    }

    #[test]
    fn namespaces_and_workloads_that_are_gone_leave_nothing_behind() {
        let pods: Vec<PodRecord> = (0..1000)
            .map(|i| {
                running(
                    &format!("ci-{i}"),
                    &format!("run-{i}-x7k2p"),
                    &format!("run-{i}"),
                )
            })
            .collect();
        let mut census = Census::default();
        pods.iter().for_each(|p| census.add(p));
        assert_eq!(census.namespace("ci-7"), 1);
        assert_eq!(census.workload(&WorkloadId::new("ci-7", "Job", "run-7")), 1);
        pods.iter().for_each(|p| census.remove(p));
        assert_eq!(census, Census::default());
    }
}
