//! What the worker has done since start, for `/metrics`.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::rules::RuleKind;

#[derive(Debug, Default)]
pub struct Counters {
    /// (rule, outcome label) → count.
    actions: Mutex<BTreeMap<(RuleKind, &'static str), u64>>,
    /// (sink, "sent" | "resent" | "spooled" | "deadLetter" | "dropped" | "failed") → count.
    deliveries: Mutex<BTreeMap<(String, &'static str), u64>>,
}

impl Counters {
    pub(crate) fn count_action(&self, rule: RuleKind, outcome: &'static str) {
        let mut actions = self.actions.lock().unwrap_or_else(|e| e.into_inner());
        *actions.entry((rule, outcome)).or_default() += 1;
    }

    pub fn count_delivery(&self, sink: &str, result: &'static str) {
        let mut deliveries = self.deliveries.lock().unwrap_or_else(|e| e.into_inner());
        *deliveries.entry((sink.to_string(), result)).or_default() += 1;
    }

    pub fn actions(&self) -> BTreeMap<(RuleKind, &'static str), u64> {
        self.actions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn deliveries(&self) -> BTreeMap<(String, &'static str), u64> {
        self.deliveries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
