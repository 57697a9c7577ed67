//! Where a rule is paused: only as far as what the failing pods share. A burst in one
//! namespace is that namespace's trouble (or a tenant's doing); bursts in several namespaces
//! reach further only through what their pods have in common (the registry they pull from, the
//! node they are on), never to pods that share nothing with them: a tenant's namespaces cannot
//! switch a rule off for everyone.

use std::collections::BTreeMap;
use std::fmt;

use super::pause_cause::PauseCause;
use crate::cluster::ClusterName;
use crate::place::{PauseScope, Place};
use crate::rules::RuleKind;

/// One pause of one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pause {
    pub scope: PauseScope,
    pub cause: PauseCause,
    /// The cluster whose worker made it, where several clusters' statuses show as one.
    pub cluster: Option<ClusterName>,
}

impl Pause {
    pub fn new(scope: PauseScope, cause: PauseCause) -> Pause {
        Pause {
            scope,
            cause,
            cluster: None,
        }
    }

    /// Made by the bound on distinct workloads, which only a person lifts; a burst's pause
    /// lifts by itself when the share drops.
    pub fn resumable(&self) -> bool {
        matches!(self.cause, PauseCause::Workloads(_))
    }

    pub fn why(&self) -> String {
        match &self.cluster {
            Some(cluster) => format!("{cluster}: {}", self.cause),
            None => self.cause.to_string(),
        }
    }
}

impl fmt::Display for Pause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "paused {}: {}", self.scope, self.why())
    }
}

/// Every pause in force, per rule; at most one per scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pauses(BTreeMap<RuleKind, Vec<Pause>>);

impl Pauses {
    /// Adds `pause` unless the rule is already paused in that scope.
    pub fn add(&mut self, rule: RuleKind, pause: Pause) {
        let pauses = self.0.entry(rule).or_default();
        if !pauses.iter().any(|p| p.scope == pause.scope) {
            pauses.push(pause);
            pauses.sort_by(|a, b| a.scope.cmp(&b.scope));
        }
    }

    pub fn holding(&self, rule: RuleKind, place: &Place) -> Option<&Pause> {
        self.of(rule).iter().find(|p| p.scope.covers(place))
    }

    pub fn of(&self, rule: RuleKind) -> &[Pause] {
        self.0.get(&rule).map_or(&[], Vec::as_slice)
    }

    pub fn iter(&self) -> impl Iterator<Item = (RuleKind, &Pause)> {
        self.0
            .iter()
            .flat_map(|(rule, pauses)| pauses.iter().map(|p| (*rule, p)))
    }

    pub fn is_empty(&self) -> bool {
        self.0.values().all(Vec::is_empty)
    }
}

impl FromIterator<(RuleKind, Pause)> for Pauses {
    fn from_iter<I: IntoIterator<Item = (RuleKind, Pause)>>(iter: I) -> Pauses {
        let mut pauses = Pauses::default();
        for (rule, pause) in iter {
            pauses.add(rule, pause);
        }
        pauses
    }
}
