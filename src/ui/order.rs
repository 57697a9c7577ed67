//! The table's order: chain position, then the chosen key, then namespace, name and cluster.
//! What each row is sorted by is read once per sort, not at each of its comparisons: a row
//! points at what its source keeps, and a sort of many rows would chase those pointers
//! millions of times.

use std::cmp::Ordering;

use chrono::{DateTime, Utc};

use super::state::SortKey;
use crate::cluster::Listed;
use crate::rules::{RuleKind, RuleSpec};

/// One row's sort fields, with its place in the list.
struct Keyed<'a> {
    rank: Option<usize>,
    since: DateTime<Utc>,
    restarts: u32,
    namespace: &'a str,
    name: &'a str,
    cluster: &'a str,
    at: usize,
}

/// Put `findings` in the order of `key`, its own way reversed when `reversed`.
pub(super) fn sort(findings: &mut Vec<Listed>, chain: &[RuleSpec], key: SortKey, reversed: bool) {
    let rank = |kind: RuleKind| chain.iter().position(|r| r.kind == kind);
    let mut keyed: Vec<Keyed> = (findings.iter().enumerate())
        .map(|(at, a)| Keyed {
            rank: rank(a.rule()),
            since: a.since(),
            restarts: a.restarts(),
            namespace: a.namespace(),
            name: a.name(),
            cluster: a.cluster().as_str(),
            at,
        })
        .collect();
    let order = |a: &Keyed, b: &Keyed| -> Ordering {
        let by_key = match key {
            SortKey::Age => a.since.cmp(&b.since),
            SortKey::Namespace => a.namespace.cmp(b.namespace),
            SortKey::Restarts => b.restarts.cmp(&a.restarts),
            SortKey::Name => a.name.cmp(b.name),
        };
        let by_key = if reversed { by_key.reverse() } else { by_key };
        (a.rank.cmp(&b.rank))
            .then(by_key)
            .then_with(|| a.namespace.cmp(b.namespace))
            .then_with(|| a.name.cmp(b.name))
            .then_with(|| a.cluster.cmp(b.cluster))
    };
    // Checking costs one comparison a row; sorting, many.
    if keyed.is_sorted_by(|a, b| order(a, b).is_le()) {
        return;
    }
    keyed.sort_by(order);
    let places: Vec<usize> = keyed.into_iter().map(|k| k.at).collect();
    let mut rows: Vec<Option<Listed>> = std::mem::take(findings).into_iter().map(Some).collect();
    *findings = (places.into_iter())
        .filter_map(|at| rows.get_mut(at).and_then(Option::take))
        .collect();
}
