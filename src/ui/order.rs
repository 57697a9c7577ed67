//! The table's order: chain position, then the chosen key, then namespace, name and cluster.
//! Each row's sort keys are read once per sort, not at each comparison: a fleet's screen sorts
//! hundreds of thousands of rows, and chasing their pointers each time costs millions.

use std::cmp::Ordering;

use chrono::{DateTime, Utc};

use opc_core::cluster::Listed;
use opc_core::rules::{RuleKind, RuleSpec};

/// One row's sort fields and its place in the list; its texts are read from the row, on ties.
struct Keyed {
    rank: u16,
    since: DateTime<Utc>,
    restarts: u32,
    at: u32,
}

/// Put `findings` in the order of `key`, its own way reversed when `reversed`.
pub(super) fn sort(findings: &mut [Listed], chain: &[RuleSpec], key: SortKey, reversed: bool) {
    let Ok(count) = u32::try_from(findings.len()) else {
        return;
    };
    let rank = |kind: RuleKind| chain.iter().position(|r| r.kind == kind);
    let mut keyed: Vec<Keyed> = (findings.iter().zip(0..count))
        .map(|(a, at)| Keyed {
            rank: rank(a.rule()).map_or(u16::MAX, |r| u16::try_from(r).unwrap_or(u16::MAX)),
            since: a.since(),
            restarts: a.restarts(),
            at,
        })
        .collect();
    let row = |k: &Keyed| findings.get(k.at as usize);
    let texts = |k: &Keyed| row(k).map(|a| (a.namespace(), a.name(), a.cluster().as_str()));
    let order = |a: &Keyed, b: &Keyed| -> Ordering {
        let by_key = match key {
            SortKey::Age => a.since.cmp(&b.since),
            SortKey::Namespace => row(a)
                .map(Listed::namespace)
                .cmp(&row(b).map(Listed::namespace)),
            SortKey::Restarts => b.restarts.cmp(&a.restarts),
            SortKey::Name => row(a).map(Listed::name).cmp(&row(b).map(Listed::name)),
        };
        let by_key = if reversed { by_key.reverse() } else { by_key };
        (a.rank.cmp(&b.rank))
            .then(by_key)
            .then_with(|| texts(a).cmp(&texts(b)))
    };
    // Checking costs one comparison a row; sorting, many.
    if keyed.is_sorted_by(|a, b| order(a, b).is_le()) {
        return;
    }
    keyed.sort_by(order);
    let places: Vec<u32> = keyed.into_iter().map(|k| k.at).collect();
    permute(findings, places);
}

/// Rearrange `rows` in place, cycle by cycle, so that place `i` holds what was at `places[i]`.
fn permute(rows: &mut [Listed], mut places: Vec<u32>) {
    const DONE: u32 = u32::MAX;
    for start in 0..places.len() {
        let mut here = start;
        while let Some(&from) = places.get(here).filter(|&&from| from != DONE) {
            if let Some(place) = places.get_mut(here) {
                *place = DONE;
            }
            let from = from as usize;
            if from == start {
                break;
            }
            rows.swap(here, from);
            here = from;
        }
    }
}

/// The table's order within a category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum SortKey {
    /// Longest in its state first.
    #[default]
    Age,
    Namespace,
    Restarts,
    Name,
}

impl SortKey {
    pub(crate) fn next(self) -> SortKey {
        match self {
            SortKey::Age => SortKey::Namespace,
            SortKey::Namespace => SortKey::Restarts,
            SortKey::Restarts => SortKey::Name,
            SortKey::Name => SortKey::Age,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            SortKey::Age => "time in state",
            SortKey::Namespace => "namespace",
            SortKey::Restarts => "restarts",
            SortKey::Name => "pod name",
        }
    }

    /// Which way the rows run, in the column's own words.
    pub(crate) fn direction(self, reversed: bool) -> &'static str {
        match (self, reversed) {
            (SortKey::Age, false) => "longest first",
            (SortKey::Age, true) => "newest first",
            (SortKey::Restarts, false) => "most first",
            (SortKey::Restarts, true) => "fewest first",
            (SortKey::Namespace | SortKey::Name, false) => "a→z",
            (SortKey::Namespace | SortKey::Name, true) => "z→a",
        }
    }
}
