//! Tier 1: the rule chain on real-looking pods, table-driven from `tests/fixtures/pods/cases.yaml`.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use opc_core::pod::{Interner, decode_pod};
use opc_core::rules::{RuleKind, RuleSpec, classify, default_chain, format_age};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    #[serde(default)]
    rules: ChainChanges,
    pod: serde_json::Value,
    expect: Vec<Expect>,
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct ChainChanges {
    order: Vec<RuleKind>,
    after: BTreeMap<RuleKind, String>,
    restarts: BTreeMap<RuleKind, u32>,
    include: BTreeMap<RuleKind, Vec<String>>,
    enabled: BTreeMap<RuleKind, bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    at: DateTime<Utc>,
    rule: Option<RuleKind>,
    reason: Option<String>,
    message: Option<String>,
    container: Option<String>,
    since: Option<DateTime<Utc>>,
    action: Option<String>,
}

fn seconds(text: &str) -> Duration {
    let (n, unit) = text.split_at(text.len() - 1);
    let n: u64 = n.parse().expect("test durations are like 5s or 2m");
    Duration::from_secs(if unit == "m" { n * 60 } else { n })
}

fn chain_for(changes: &ChainChanges) -> Vec<RuleSpec> {
    let mut chain = default_chain();
    for (position, kind) in changes.order.iter().enumerate() {
        let at = chain.iter().position(|r| r.kind == *kind).unwrap();
        let rule = chain.remove(at);
        chain.insert(position, rule);
    }
    for rule in &mut chain {
        if let Some(after) = changes.after.get(&rule.kind) {
            rule.after = seconds(after);
        }
        if let Some(restarts) = changes.restarts.get(&rule.kind) {
            rule.restarts = *restarts;
        }
        if let Some(include) = changes.include.get(&rule.kind) {
            rule.namespaces.include = include.clone();
        }
        if let Some(enabled) = changes.enabled.get(&rule.kind) {
            rule.enabled = *enabled;
        }
    }
    chain
}

#[test]
fn fixtures_classify_as_expected() {
    let text = std::fs::read_to_string("tests/fixtures/pods/cases.yaml").unwrap();
    let cases: Vec<Case> = serde_saphyr::from_str(&text).unwrap();
    assert!(cases.len() >= 15, "fixture file lost cases");
    let mut failures = Vec::new();
    for case in &cases {
        let json = serde_json::to_vec(&case.pod).unwrap();
        let pod = decode_pod(&json, &mut Interner::default()).unwrap();
        let chain = chain_for(&case.rules);
        for e in &case.expect {
            let found = classify(&pod, &chain, e.at);
            let got = found.as_ref().map(|f| f.rule);
            let mut wrong = Vec::new();
            if got != e.rule {
                wrong.push(format!("rule {:?}, want {:?}", got, e.rule));
            }
            if let Some(f) = &found {
                let check = |what: &str,
                             want: Option<String>,
                             have: Option<String>,
                             wrong: &mut Vec<String>| {
                    if want.is_some() && want != have {
                        wrong.push(format!("{what} {have:?}, want {want:?}"));
                    }
                };
                check(
                    "reason",
                    e.reason.clone(),
                    Some(f.reason.to_string()),
                    &mut wrong,
                );
                let text = |t: &Option<std::sync::Arc<str>>| t.as_deref().map(String::from);
                check("message", e.message.clone(), text(&f.message), &mut wrong);
                check(
                    "container",
                    e.container.clone(),
                    text(&f.container),
                    &mut wrong,
                );
                check(
                    "since",
                    e.since.map(|s| s.to_rfc3339()),
                    Some(f.since.to_rfc3339()),
                    &mut wrong,
                );
                check(
                    "action",
                    e.action.clone(),
                    Some(f.action.name().to_string()),
                    &mut wrong,
                );
            }
            if !wrong.is_empty() {
                failures.push(format!("{} at {}: {}", case.name, e.at, wrong.join("; ")));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn observed_transition_refines_time_in_state() {
    let base = |waiting: bool| {
        let state = if waiting {
            serde_json::json!({"waiting": {"reason": "ImagePullBackOff"}})
        } else {
            serde_json::json!({"running": {}})
        };
        serde_json::json!({
            "metadata": {"name": "p", "namespace": "default", "uid": "u", "creationTimestamp": "2026-11-20T08:00:00Z"},
            "status": {"phase": "Running", "containerStatuses": [{"name": "c", "restartCount": 0, "state": state}]}
        })
    };
    let mut interner = Interner::default();
    let decode = |v: serde_json::Value, i: &mut Interner| {
        decode_pod(&serde_json::to_vec(&v).unwrap(), i).unwrap()
    };
    let t = |s: &str| s.parse::<DateTime<Utc>>().unwrap();
    let running = decode(base(false), &mut interner);
    let mut waiting = decode(base(true), &mut interner);
    waiting.observe_transition(Some(&running), t("2026-11-20T09:50:00Z"));
    let chain = default_chain();
    let at = t("2026-11-20T10:00:00Z");
    // Seen at 09:50: ten minutes, not two hours since creation.
    assert_eq!(
        classify(&waiting, &chain, at).unwrap().since,
        t("2026-11-20T09:50:00Z")
    );
    // A later flip between pull reasons keeps the moment it started.
    let mut again = decode(base(true), &mut interner);
    again.observe_transition(Some(&waiting), t("2026-11-20T09:55:00Z"));
    assert_eq!(again.reason_seen, Some(t("2026-11-20T09:50:00Z")));
    // First sight at startup proves nothing: fall back to the pod's own evidence.
    let mut fresh = decode(base(true), &mut interner);
    fresh.observe_transition(None, at);
    assert_eq!(
        classify(&fresh, &chain, at).unwrap().since,
        t("2026-11-20T08:00:00Z")
    );
}

#[test]
fn ignore_annotation_is_read_and_others_skipped() {
    let pod = |value: &str| {
        serde_json::json!({"metadata": {"name": "p", "namespace": "n", "uid": "u",
            "annotations": {"a": "{\"big\": 1}", "ops-pod-cleaner.io/ignore": value}}})
    };
    let decode =
        |v| decode_pod(&serde_json::to_vec(&v).unwrap(), &mut Interner::default()).unwrap();
    assert!(decode(pod("true")).ignored);
    assert!(decode(pod("")).ignored);
    assert!(!decode(pod("false")).ignored);
    assert!(!decode(serde_json::json!({"metadata": {"name": "p", "annotations": null}})).ignored);
}

#[test]
fn malformed_pod_is_an_error_not_a_panic() {
    let bad = br#"{"metadata":{"name":"p","creationTimestamp":"yesterday"}}"#;
    assert!(decode_pod(bad, &mut Interner::default()).is_err());
    assert!(decode_pod(b"[1,2]", &mut Interner::default()).is_err());
}

#[test]
fn ages_read_like_the_screen() {
    let cases = [
        (0, "0s"),
        (59, "59s"),
        (61, "1m01s"),
        (3600 * 3 + 12 * 60, "3h12m"),
        (86_400 * 2 + 3600 * 4, "2d4h"),
    ];
    for (secs, want) in cases {
        assert_eq!(format_age(chrono::Duration::seconds(secs)), want);
    }
}
