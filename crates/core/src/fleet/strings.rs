//! The texts many rows of one worker repeat (namespaces, nodes, owner kinds), held once.

use std::collections::HashSet;
use std::sync::Arc;

/// One copy of each text, shared by every row that carries it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Strings {
    held: HashSet<Arc<str>>,
}

impl Strings {
    /// The shared copy of `text`.
    pub(crate) fn get(&mut self, text: &str) -> Arc<str> {
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
        let mut strings = Strings::default();
        let a = strings.get("team-a");
        assert!(Arc::ptr_eq(&a, &strings.get("team-a")));
        let unused: Vec<String> = (0..100).map(|i| format!("node-{i}")).collect();
        for text in &unused {
            strings.get(text);
        }
        strings.forget_unused(1);
        assert_eq!(strings.held.len(), 1, "only the text a row still carries");
        assert!(Arc::ptr_eq(&a, &strings.get("team-a")));
    }
}
