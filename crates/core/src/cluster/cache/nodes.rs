//! The nodes side of the cache: each node's state, written by the node watch; a change a
//! cause reads finds the causes of the pods on that node again.

use chrono::{DateTime, Utc};

use super::Cache;
use crate::node::NodeState;

pub struct CachedNodes<'a> {
    pub(super) cache: &'a Cache,
}

impl CachedNodes<'_> {
    /// Every node now: the causes of the abnormal pods on nodes that changed are found again.
    pub fn replace(&self, nodes: Vec<NodeState>, now: DateTime<Utc>) {
        self.cache.change(|store| {
            let changed = store.nodes.replace(nodes);
            let unread = store.nodes.set_unreadable(None);
            // Every changed node's pods, not only up to the first that had one.
            for name in &changed {
                store.readmit_on(name, now);
            }
            unread || !changed.is_empty()
        });
    }

    /// A node changed: only a change a cause reads (not a heartbeat) re-examines its pods.
    pub fn upsert(&self, node: NodeState, now: DateTime<Utc>) {
        self.cache.change(|store| {
            let name = node.name.clone();
            let changed = store.nodes.upsert(node);
            if changed {
                store.readmit_on(&name, now);
            }
            changed
        });
    }

    pub fn remove(&self, name: &str, now: DateTime<Utc>) {
        self.cache.change(|store| {
            let removed = store.nodes.remove(name);
            if removed {
                store.readmit_on(name, now);
            }
            removed
        });
    }

    /// Nodes cannot be read (`why`), or can again (None): shown, never a guard.
    pub(crate) fn unreadable(&self, why: Option<String>) {
        self.cache.change(|store| store.nodes.set_unreadable(why));
    }

    pub fn unreadable_why(&self) -> Option<String> {
        self.cache.read().nodes.unreadable().map(str::to_string)
    }
}
