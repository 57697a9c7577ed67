//! Where a rule is paused: in one namespace, or across the cluster. A burst in one namespace
//! is that namespace's trouble (or a tenant's doing) and must not switch a rule off for
//! everyone; only bursts in several namespaces point at a cause the whole cluster shares.

use std::collections::BTreeMap;
use std::fmt;

use super::pause_cause::PauseCause;
use crate::cluster::ClusterName;
use crate::rules::RuleKind;

/// How far a pause reaches.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PauseScope {
    Cluster,
    Namespace(String),
}

impl PauseScope {
    /// Whether a pod of `namespace` is held by a pause of this scope.
    pub fn covers(&self, namespace: &str) -> bool {
        match self {
            PauseScope::Cluster => true,
            PauseScope::Namespace(ns) => ns == namespace,
        }
    }
}

impl fmt::Display for PauseScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PauseScope::Cluster => f.write_str("cluster-wide"),
            PauseScope::Namespace(ns) => write!(f, "in {ns}"),
        }
    }
}

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

    /// The cause, after the cluster's name when it has one.
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

    /// The pause that holds `rule` for a pod of `namespace`, the cluster-wide one first.
    pub fn holding(&self, rule: RuleKind, namespace: &str) -> Option<&Pause> {
        self.of(rule).iter().find(|p| p.scope.covers(namespace))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::Bound;

    fn pause(scope: PauseScope) -> Pause {
        let namespaces = vec!["shop".into(), "web".into()];
        Pause::new(
            scope,
            PauseCause::Workloads(Bound::ManyNamespaces { namespaces }),
        )
    }

    #[test]
    fn a_namespace_pause_holds_only_its_namespace_and_a_cluster_pause_comes_first() {
        let shop = PauseScope::Namespace("shop".into());
        let mut pauses = Pauses::default();
        pauses.add(RuleKind::Failed, pause(shop.clone()));
        assert!(pauses.holding(RuleKind::Failed, "shop").is_some());
        assert!(pauses.holding(RuleKind::Failed, "web").is_none());
        assert!(pauses.holding(RuleKind::Evicted, "shop").is_none());
        pauses.add(RuleKind::Failed, pause(PauseScope::Cluster));
        let held = pauses.holding(RuleKind::Failed, "shop").unwrap();
        assert_eq!(held.scope, PauseScope::Cluster);
        let why = "the bound on workloads paused it in 2 namespaces (shop, web)";
        assert!(
            held.to_string()
                .starts_with(&format!("paused cluster-wide: {why}"))
        );
        let mut theirs = pause(shop);
        theirs.cluster = Some("demo-us".into());
        assert!(
            theirs
                .to_string()
                .starts_with(&format!("paused in shop: demo-us: {why}"))
        );
    }
}
