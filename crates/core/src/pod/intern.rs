//! Shares the strings that repeat across pods (namespaces, nodes, owner kinds).
//!
//! Names come and go (short-lived namespaces, replaced nodes): strings no pod holds any more
//! are dropped whenever the set has doubled since the last sweep, so it stays within twice what
//! is in use, at an amortised constant cost per new string.

use std::collections::HashSet;
use std::sync::Arc;

/// Below this many strings no sweep is worth its pass.
const FIRST_SWEEP: usize = 1024;

#[derive(Debug, Default)]
pub struct Interner {
    strings: HashSet<Arc<str>>,
    sweep_at: usize,
}

impl Interner {
    pub(crate) fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(found) = self.strings.get(s) {
            return found.clone();
        }
        if self.strings.len() >= self.sweep_at {
            // Only the set holds these: no pod names them any more.
            self.strings.retain(|s| Arc::strong_count(s) > 1);
            self.sweep_at = (self.strings.len() * 2).max(FIRST_SWEEP);
        }
        let shared: Arc<str> = Arc::from(s);
        self.strings.insert(shared.clone());
        shared
    }
}
