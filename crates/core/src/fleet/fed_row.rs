//! A row a worker served, as a screen keeps it. A fleet's screen holds every abnormal pod of
//! every cluster, so a row is compact: what rows of one worker repeat (namespace, owner kind,
//! category, reason, container, action, cause class, hold) is one shared [`Shape`]; what is
//! the pod's own (uid, name, owner's name) is one text. Nothing here is acted on: an action
//! reads the pod live first.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::Hash;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::{FindingRow, Held, Owner};
use crate::cluster::ClusterName;
use crate::pod::WorkloadId;
use crate::rules::{ActionKind, CauseClass, RuleKind};

/// How a stuck deletion's row names the finalizers that hold it.
const FINALIZERS: &str = "finalizers: ";

/// One abnormal pod as its cluster's worker told it, kept for a screen.
#[derive(Debug, PartialEq, Eq)]
pub struct FedRow {
    shape: Arc<Shape>,
    /// The uid, the name and the owner's name, one after the other.
    ids: Box<str>,
    name_at: usize,
    owner_at: usize,
    node: Option<Arc<str>>,
    /// Apart from the shape: a kubelet's message often names the pod itself.
    message: Option<Arc<str>>,
    since: DateTime<Utc>,
    restarts: u32,
}

/// What many rows of one worker have in common, held once.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    /// The screen's name for the cluster.
    cluster: ClusterName,
    namespace: Arc<str>,
    owner_kind: Option<Arc<str>>,
    rule: RuleKind,
    reason: Arc<str>,
    container: Option<Arc<str>>,
    action: ActionKind,
    /// Why, by class: its words are asked of the worker when the details pane shows them.
    cause: CauseClass,
    held: Option<Held>,
}

/// What the rows of one worker repeat, each held once: texts, and whole shapes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Shapes {
    texts: HashSet<Arc<str>>,
    shapes: HashSet<Arc<Shape>>,
}

impl Shapes {
    fn text(&mut self, text: &str) -> Arc<str> {
        one(&mut self.texts, text, Arc::from)
    }

    fn shape(&mut self, shape: Shape) -> Arc<Shape> {
        one(&mut self.shapes, shape, Arc::new)
    }

    /// Let go of what no row carries any more, once it outnumbers the rows: nodes and
    /// namespaces come and go over weeks, and the sets must not keep every one ever seen.
    pub(crate) fn forget_unused(&mut self, rows: usize) {
        if self.texts.len() + self.shapes.len() > 2 * rows + 64 {
            // Shapes first: a shape let go lets go of its texts.
            self.shapes.retain(|shape| Arc::strong_count(shape) > 1);
            self.texts.retain(|text| Arc::strong_count(text) > 1);
        }
    }
}

/// The copy of `value` that `held` shares, made by `make` when there is none yet.
fn one<T, Q>(held: &mut HashSet<Arc<T>>, value: Q, make: impl FnOnce(Q) -> Arc<T>) -> Arc<T>
where
    T: ?Sized + Hash + Eq,
    Q: Borrow<T>,
{
    if let Some(shared) = held.get(value.borrow()) {
        return Arc::clone(shared);
    }
    let shared = make(value);
    held.insert(Arc::clone(&shared));
    shared
}

impl FindingRow {
    /// The row as a screen of `cluster` keeps it. The cluster is the screen's name for it (a
    /// worker in its pod calls its own `in-cluster`): actions and marks are routed by it. Copied,
    /// not moved: rows made while the served ones are still held lie together in memory, rather
    /// than in the gaps each served row would leave, which would keep their pages resident.
    pub(crate) fn fed_row(&self, cluster: &ClusterName, shapes: &mut Shapes) -> FedRow {
        let FindingRow {
            cluster: _,
            namespace,
            name,
            uid,
            category,
            reason,
            message,
            container,
            since,
            for_seconds: _,
            restarts,
            node,
            owner,
            action,
            held,
            cause,
        } = self;
        let (owner_kind, owner_name) = match owner {
            Some(Owner { kind, name }) => (Some(shapes.text(kind)), name.as_str()),
            None => (None, ""),
        };
        let shape = Shape {
            cluster: cluster.clone(),
            namespace: shapes.text(namespace),
            owner_kind,
            rule: *category,
            reason: shapes.text(reason),
            container: container.as_deref().map(|c| shapes.text(c)),
            action: *action,
            cause: cause.class,
            held: held.clone(),
        };
        let mut ids = String::with_capacity(uid.len() + name.len() + owner_name.len());
        ids.push_str(uid);
        let name_at = ids.len();
        ids.push_str(name);
        let owner_at = ids.len();
        ids.push_str(owner_name);
        FedRow {
            shape: shapes.shape(shape),
            ids: ids.into_boxed_str(),
            name_at,
            owner_at,
            node: node.as_deref().map(|node| shapes.text(node)),
            message: message.as_deref().map(|m| shapes.text(m)),
            since: *since,
            restarts: *restarts,
        }
    }
}

impl FedRow {
    pub fn cluster(&self) -> &ClusterName {
        &self.shape.cluster
    }

    pub fn uid(&self) -> &str {
        self.ids.get(..self.name_at).unwrap_or_default()
    }

    pub fn name(&self) -> &str {
        self.ids
            .get(self.name_at..self.owner_at)
            .unwrap_or_default()
    }

    pub fn namespace(&self) -> &str {
        &self.shape.namespace
    }

    pub fn node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    /// The owner's kind and name.
    pub fn owner(&self) -> Option<(&str, &str)> {
        let kind = self.shape.owner_kind.as_deref()?;
        Some((kind, self.ids.get(self.owner_at..).unwrap_or_default()))
    }

    /// The workload the engineer thinks in, as the worker named the owner.
    pub fn workload(&self) -> WorkloadId {
        WorkloadId::of_owner(self.namespace(), self.owner(), self.name())
    }

    pub fn rule(&self) -> RuleKind {
        self.shape.rule
    }

    pub fn reason(&self) -> &str {
        &self.shape.reason
    }

    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    pub fn container(&self) -> Option<&str> {
        self.shape.container.as_deref()
    }

    pub fn since(&self) -> DateTime<Utc> {
        self.since
    }

    pub fn action(&self) -> ActionKind {
        self.shape.action
    }

    pub fn cause(&self) -> CauseClass {
        self.shape.cause
    }

    pub fn held(&self) -> Option<&Held> {
        self.shape.held.as_ref()
    }

    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// A stuck deletion is being deleted; the worker lists no other pod that is.
    pub fn deleting(&self) -> bool {
        self.shape.rule == RuleKind::Terminating
    }

    /// The finalizers that hold a stuck deletion, as its row names them.
    pub fn finalizers(&self) -> Vec<&str> {
        match (self.deleting(), self.message()) {
            (true, Some(message)) => message
                .strip_prefix(FINALIZERS)
                .map(|list| list.split(", ").collect())
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// A StatefulSet's pod: its replacement has the same name and identity. (Whether it holds
    /// a claim the row does not say; the action reads the pod live.)
    pub fn must_run_once(&self) -> bool {
        self.owner().is_some_and(|(kind, _)| kind == "StatefulSet")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_held_once_and_let_go_when_no_row_carries_it() {
        let mut shapes = Shapes::default();
        let a = shapes.text("team-a");
        assert!(Arc::ptr_eq(&a, &shapes.text("team-a")));
        for i in 0..100 {
            shapes.text(&format!("node-{i}"));
        }
        shapes.forget_unused(0);
        assert_eq!(shapes.texts.len(), 1, "only the value a row still carries");
        assert!(Arc::ptr_eq(&a, &shapes.text("team-a")));
    }
}
