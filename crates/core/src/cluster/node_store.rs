//! The cluster's nodes as a cause reads them, and whether they could be read at all.

use std::collections::HashMap;
use std::sync::Arc;

use crate::node::{NodeState, Readiness};
use crate::pod::PodRecord;

#[derive(Debug, Default)]
pub struct NodeStore {
    by_name: HashMap<Arc<str>, NodeState>,
    /// Why nodes cannot be read (no permission, say); causes then come from the pod alone.
    unreadable: Option<String>,
}

impl NodeStore {
    /// The nodes of one complete list.
    pub fn listed(nodes: Vec<NodeState>) -> NodeStore {
        let mut store = NodeStore::default();
        store.replace(nodes);
        store
    }

    /// The state of the node `pod` is bound to, if known.
    pub fn of(&self, pod: &PodRecord) -> Option<&NodeState> {
        self.by_name.get(pod.node.as_deref()?)
    }

    /// How many nodes stopped reporting (Ready=Unknown).
    pub fn not_reporting(&self) -> usize {
        self.by_name
            .values()
            .filter(|n| n.readiness == Readiness::NotReporting)
            .count()
    }

    pub fn unreadable(&self) -> Option<&str> {
        self.unreadable.as_deref()
    }

    pub(crate) fn set_unreadable(&mut self, why: Option<String>) -> bool {
        let changed = self.unreadable != why;
        self.unreadable = why;
        changed
    }

    /// Store `node`; whether what a cause reads of it changed (a new node counts).
    pub(crate) fn upsert(&mut self, node: NodeState) -> bool {
        let changed = self
            .by_name
            .get(&node.name)
            .is_none_or(|known| node.says_more_than(known));
        self.by_name.insert(node.name.clone(), node);
        changed
    }

    pub(crate) fn remove(&mut self, name: &str) -> bool {
        self.by_name.remove(name).is_some()
    }

    /// Every node now in place of those known; the names whose state a cause reads changed.
    pub(crate) fn replace(&mut self, nodes: Vec<NodeState>) -> Vec<Arc<str>> {
        let mut previous = std::mem::take(&mut self.by_name);
        let mut changed = Vec::new();
        for node in nodes {
            let known = previous.remove(&node.name);
            if known.is_none_or(|known| node.says_more_than(&known)) {
                changed.push(node.name.clone());
            }
            self.by_name.insert(node.name.clone(), node);
        }
        changed.extend(previous.into_keys());
        changed
    }
}
