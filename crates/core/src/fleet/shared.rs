//! What many rows of one worker repeat, held once: a set of shared values from which a row
//! takes its copy.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::Hash;
use std::sync::Arc;

/// One copy of each value, shared by every row that carries it.
#[derive(Debug)]
pub(crate) struct Shared<T: ?Sized>(HashSet<Arc<T>>);

impl<T: ?Sized> Default for Shared<T> {
    fn default() -> Shared<T> {
        Shared(HashSet::new())
    }
}

impl<T: ?Sized> Clone for Shared<T> {
    fn clone(&self) -> Shared<T> {
        Shared(self.0.clone())
    }
}

impl<T: ?Sized + Hash + Eq> Shared<T> {
    /// The shared copy of `value`, made by `make` when there is none yet.
    pub(crate) fn one<Q>(&mut self, value: Q, make: impl FnOnce(Q) -> Arc<T>) -> Arc<T>
    where
        Q: Borrow<T>,
    {
        if let Some(held) = self.0.get(value.borrow()) {
            return Arc::clone(held);
        }
        let held = make(value);
        self.0.insert(Arc::clone(&held));
        held
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Let go of the values no row carries any more.
    pub(crate) fn forget_unused(&mut self) {
        self.0.retain(|value| Arc::strong_count(value) > 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_held_once_and_let_go_when_no_row_carries_it() {
        let mut shared: Shared<str> = Shared::default();
        let a = shared.one("team-a", Arc::from);
        assert!(Arc::ptr_eq(&a, &shared.one("team-a", Arc::from)));
        for i in 0..100 {
            shared.one(format!("node-{i}").as_str(), Arc::from);
        }
        shared.forget_unused();
        assert_eq!(shared.len(), 1, "only the value a row still carries");
        assert!(Arc::ptr_eq(&a, &shared.one("team-a", Arc::from)));
    }
}
