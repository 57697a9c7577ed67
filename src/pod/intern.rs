//! Shares the strings that repeat across pods (namespaces, nodes, owner kinds).

use std::collections::HashSet;
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct Interner {
    strings: HashSet<Arc<str>>,
}

impl Interner {
    pub(crate) fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(found) = self.strings.get(s) {
            return found.clone();
        }
        let shared: Arc<str> = Arc::from(s);
        self.strings.insert(shared.clone());
        shared
    }
}
