//! What a dry run has already "done". Live mode moves through its candidates because what it
//! acts on leaves the cache (deleted) or changes state (evicted, scaled away); a dry run
//! changes nothing, so without this it would meet the same oldest candidates again after each
//! cooldown and never reach the rest. Kept per pod and the state it was judged in, so a pod
//! that moves to another state is a candidate again, and dropped when the pod leaves that
//! state or the cache: at most one entry per pod that still matches.

use std::collections::HashMap;

use crate::actions::Target;
use crate::cluster::Abnormal;
use crate::pod::WorkloadId;
use crate::rules::RuleKind;

use super::planned::{Judged, Planned};

#[derive(Debug, Clone, Default)]
pub struct DryRunDone {
    /// By pod uid.
    pods: HashMap<Box<str>, Judged>,
    /// Workloads "scaled to zero", with the rule that did it: their pods it matches are done.
    workloads: HashMap<WorkloadId, RuleKind>,
}

impl DryRunDone {
    /// A would-action on `planned` was recorded: what live mode would have changed.
    pub fn record(&mut self, planned: &Planned) {
        match &planned.target {
            Target::Pod(uid) => {
                self.pods.insert(uid.as_str().into(), planned.judged);
            }
            Target::Workload(workload) => {
                self.workloads.insert(workload.clone(), planned.rule);
            }
        }
    }

    /// Whether live mode would no longer see `found` as it is: acted on in this state.
    pub fn done(&self, found: &Abnormal) -> bool {
        let judged = Judged::of(found);
        // A workload key allocates: made only when some workload was "scaled".
        self.pods.get(&found.pod.uid) == Some(&judged)
            || (!self.workloads.is_empty()
                && self
                    .workloads
                    .get(&WorkloadId::of(&found.pod))
                    .is_some_and(|rule| *rule == judged.rule))
    }

    /// `findings` without what was already done: what live mode would still find.
    pub fn outstanding(&self, findings: Vec<Abnormal>) -> Vec<Abnormal> {
        if self.is_empty() {
            return findings;
        }
        findings.into_iter().filter(|f| !self.done(f)).collect()
    }

    /// Forget what no longer holds: a pod that left the cache or its state, a workload none of
    /// whose pods match any more. `findings` are those of the rules `judged` may see now; what
    /// other rules did is kept until they may act again (nothing is added meanwhile).
    pub fn forget_moved(&mut self, findings: &[Abnormal], judged: impl Fn(RuleKind) -> bool) {
        if self.is_empty() {
            return;
        }
        let mut now: HashMap<&str, Judged> = HashMap::with_capacity(findings.len());
        let mut matching: HashMap<WorkloadId, Vec<RuleKind>> = HashMap::new();
        for found in findings {
            now.insert(&found.pod.uid, Judged::of(found));
            if !self.workloads.is_empty() {
                let rules = matching.entry(WorkloadId::of(&found.pod)).or_default();
                rules.push(found.finding.rule);
            }
        }
        self.pods
            .retain(|uid, was| !judged(was.rule) || now.get(&**uid) == Some(was));
        self.workloads.retain(|workload, rule| {
            !judged(*rule) || matching.get(workload).is_some_and(|r| r.contains(rule))
        });
    }

    pub fn len(&self) -> usize {
        self.pods.len() + self.workloads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
