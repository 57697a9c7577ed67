//! What many rows of one worker repeat (namespaces, nodes, owner kinds, "no hold"), held once.

use std::collections::HashSet;
use std::sync::Arc;

use crate::cluster::Told;

/// One copy of each, shared by every row that carries it.
#[derive(Debug, Clone)]
pub(crate) struct Repeated {
    held: HashSet<Arc<str>>,
    unheld: Arc<Told>,
}

impl Default for Repeated {
    fn default() -> Repeated {
        Repeated {
            held: HashSet::new(),
            unheld: Arc::new(Told { held: None }),
        }
    }
}

impl Repeated {
    /// What the worker told of a pod whose action it would not refuse.
    pub(crate) fn unheld(&self) -> Arc<Told> {
        Arc::clone(&self.unheld)
    }

    /// The shared copy of `text`.
    pub(crate) fn text(&mut self, text: &str) -> Arc<str> {
        if let Some(held) = self.held.get(text) {
            return Arc::clone(held);
        }
        let held: Arc<str> = Arc::from(text);
        self.held.insert(Arc::clone(&held));
        held
    }

    /// Let go of the texts no row carries any more, once they outnumber the rows: nodes and
    /// namespaces come and go over weeks, and the set must not keep every one ever seen.
    pub(crate) fn forget_unused(&mut self, rows: usize) {
        if self.held.len() > 2 * rows + 64 {
            self.held.retain(|text| Arc::strong_count(text) > 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_held_once_and_let_go_when_no_row_carries_it() {
        let mut repeated = Repeated::default();
        let a = repeated.text("team-a");
        assert!(Arc::ptr_eq(&a, &repeated.text("team-a")));
        let unused: Vec<String> = (0..100).map(|i| format!("node-{i}")).collect();
        for text in &unused {
            repeated.text(text);
        }
        repeated.forget_unused(1);
        assert_eq!(repeated.held.len(), 1, "only the text a row still carries");
        assert!(Arc::ptr_eq(&a, &repeated.text("team-a")));
    }
}
