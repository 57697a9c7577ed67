//! The table's order (`src/ui/order.rs`): chain position, then the chosen key, then namespace,
//! name and cluster, as the rows are drawn after `s` and `S`.

use crate::ui_support;

use std::cmp::Ordering;

use opc_core::cluster::{ClusterName, Listed};
use opc_core::config::KeyBinding;
use opc_core::rules::{RuleKind, RuleSpec, default_chain};
use ops_pod_cleaner::ui::{ClusterLine, Event, State, WatchLine, update};
use ui_support::{seen, show, state};

/// The table's sort keys, in the order `s` steps through them from the first.
#[derive(Debug, Clone, Copy)]
enum SortKey {
    Age,
    Namespace,
    Restarts,
    Name,
}

fn press(state: &mut State, keys: &str) {
    for key in keys.split_whitespace() {
        update(state, Event::Key(KeyBinding::parse(key).unwrap()));
    }
}

/// A worker's row of `name` in `namespace` of `cluster`, `minutes` in its state.
fn row(
    cluster: &str,
    namespace: &str,
    name: &str,
    category: &str,
    minutes: i64,
    restarts: u32,
) -> Listed {
    let since = chrono::DateTime::UNIX_EPOCH + chrono::Duration::minutes(minutes);
    let row: opc_core::fleet::FindingRow = serde_json::from_value(serde_json::json!({
        "cluster": cluster, "namespace": namespace, "name": name,
        "uid": format!("{cluster}/{namespace}/{name}"), "category": category,
        "reason": "Evicted", "since": since, "forSeconds": 0, "restarts": restarts,
        "node": null, "owner": null, "action": "delete",
        "cause": {"class": "nodeMemoryPressure", "detail": "", "evidence": [], "next": ""}
    }))
    .unwrap();
    Listed::from(row)
}

fn rows() -> Vec<Listed> {
    let mut rows = Vec::new();
    for (i, category) in ["failed", "evicted", "crashLoop"].iter().enumerate() {
        for cluster in ["west", "east"] {
            for namespace in ["b", "a"] {
                for name in ["y", "x"] {
                    // Ties in time and restarts, broken by the texts.
                    let minutes = (i as i64 + name.len() as i64) % 2;
                    let restarts = (i % 2) as u32;
                    rows.push(row(cluster, namespace, name, category, minutes, restarts));
                }
            }
        }
    }
    rows
}

/// The order as it reads, on the rows themselves.
fn reference(a: &Listed, b: &Listed, chain: &[RuleSpec], key: SortKey, reversed: bool) -> Ordering {
    let rank = |kind: RuleKind| chain.iter().position(|r| r.kind == kind);
    let by_key = match key {
        SortKey::Age => a.since().cmp(&b.since()),
        SortKey::Namespace => a.namespace().cmp(b.namespace()),
        SortKey::Restarts => b.restarts().cmp(&a.restarts()),
        SortKey::Name => a.name().cmp(b.name()),
    };
    let by_key = if reversed { by_key.reverse() } else { by_key };
    (rank(a.rule()).cmp(&rank(b.rule())))
        .then(by_key)
        .then_with(|| a.namespace().cmp(b.namespace()))
        .then_with(|| a.name().cmp(b.name()))
        .then_with(|| a.cluster().cmp(b.cluster()))
}

/// A screen showing `rows` of the clusters west and east, sorted by `key`, reversed when
/// `reversed`: `s` steps to the key, `S` turns it round.
fn sorted_screen(rows: Vec<Listed>, key: SortKey, reversed: bool) -> State {
    let mut s = state();
    let synced = |name: &str| ClusterLine {
        watch: WatchLine::Synced,
        ..ClusterLine::listing(&ClusterName::new(name))
    };
    show(&mut s, rows, vec![synced("west"), synced("east")]);
    for _ in 0..key as usize {
        press(&mut s, "s");
    }
    if reversed {
        press(&mut s, "S");
    }
    s
}

/// The rows drawn, category by category in chain order, each as its uid
/// (`cluster/namespace/name`).
fn drawn(s: &mut State, chain: &[RuleSpec]) -> Vec<String> {
    let mut drawn = Vec::new();
    for at in 1..=chain.len() {
        press(s, &at.to_string());
        for row in seen(s).rows() {
            let cells: Vec<&str> = row.split(['│', ' ']).filter(|c| !c.is_empty()).collect();
            drawn.push(cells[..3].join("/"));
        }
    }
    drawn
}

fn uids(rows: &[Listed]) -> Vec<String> {
    rows.iter().map(|a| a.uid().to_string()).collect()
}

#[test]
fn every_key_either_way_orders_as_the_rows_compare() {
    let chain = default_chain();
    for key in [
        SortKey::Age,
        SortKey::Namespace,
        SortKey::Restarts,
        SortKey::Name,
    ] {
        for reversed in [false, true] {
            let mut sorted = sorted_screen(rows(), key, reversed);
            let mut want = rows();
            want.sort_by(|a, b| reference(a, b, &chain, key, reversed));
            assert_eq!(
                drawn(&mut sorted, &chain),
                uids(&want),
                "{key:?}, reversed {reversed}"
            );
        }
    }
}

/// A permutation reaches the rows as the sort finds it: the five rows are given times in
/// the order of `places`, so that sorting them by time in state moves each row where
/// `places` says.
#[test]
fn a_permutation_is_applied_in_place_cycle_by_cycle() {
    let rows = rows();
    let chain = default_chain();
    for places in [
        vec![4, 0, 3, 2, 1],
        vec![0, 1, 2, 3, 4],
        vec![1, 2, 3, 4, 0],
    ] {
        let timed: Vec<Listed> = (rows.iter().take(5).zip(0..))
            .map(|(a, at)| {
                let place = places.iter().position(|&p| p == at).unwrap();
                let (cluster, namespace) = (a.cluster().as_str(), a.namespace());
                row(cluster, namespace, a.name(), "failed", place as i64, 0)
            })
            .collect();
        let mut permuted = sorted_screen(timed, SortKey::Age, false);
        let got = drawn(&mut permuted, &chain);
        let want: Vec<&str> = places.iter().map(|&i| rows[i as usize].uid()).collect();
        assert_eq!(got, want);
    }
}
