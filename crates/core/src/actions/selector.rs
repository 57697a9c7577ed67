//! Label selectors, as workloads carry them, and the labels they match.

use std::collections::BTreeMap;

use serde_json::Value;

/// The label a ReplicaSet made by a Deployment (or Rollout) puts on itself and its pods.
pub(crate) const TEMPLATE_HASH: &str = "pod-template-hash";
/// The same label, as an Argo Rollout's ReplicaSets carry it.
pub(crate) const ROLLOUT_TEMPLATE_HASH: &str = "rollouts-pod-template-hash";
/// The revision a StatefulSet's controller stamps on each pod it makes.
pub(crate) const REVISION_HASH: &str = "controller-revision-hash";

pub(crate) type Labels = BTreeMap<String, String>;

/// A workload's label selector. One that cannot be read, or is empty, selects nothing: a
/// workload that cannot prove it selects a pod is not scaled for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selector {
    labels: Vec<(String, String)>,
    expressions: Vec<Expression>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Expression {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl Selector {
    /// `spec.selector` of a workload: a LabelSelector, or a plain map for a
    /// ReplicationController.
    pub(crate) fn of(spec_selector: Option<&Value>) -> Option<Selector> {
        let object = spec_selector?.as_object()?;
        let plain = !object.contains_key("matchLabels") && !object.contains_key("matchExpressions");
        let pairs = |map: Option<&Value>| -> Option<Vec<(String, String)>> {
            map.and_then(Value::as_object)
                .map_or(Some(Vec::new()), |m| {
                    m.iter()
                        .map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect()
                })
        };
        let labels = if plain {
            pairs(spec_selector)?
        } else {
            pairs(object.get("matchLabels"))?
        };
        let expressions = object
            .get("matchExpressions")
            .and_then(Value::as_array)
            .map_or(Some(Vec::new()), |all| {
                all.iter().map(Expression::of).collect()
            })?;
        (!labels.is_empty() || !expressions.is_empty()).then_some(Selector {
            labels,
            expressions,
        })
    }

    pub(crate) fn matches(&self, labels: &Labels) -> bool {
        self.labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.expressions.iter().all(|e| e.matches(labels))
    }
}

impl Expression {
    fn of(value: &Value) -> Option<Expression> {
        let operator = match value.get("operator")?.as_str()? {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            _ => return None,
        };
        let values = match value.get("values").and_then(Value::as_array) {
            Some(values) => values
                .iter()
                .map(|v| v.as_str().map(String::from))
                .collect::<Option<_>>()?,
            None => Vec::new(),
        };
        Some(Expression {
            key: value.get("key")?.as_str()?.to_string(),
            operator,
            values,
        })
    }

    fn matches(&self, labels: &Labels) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            Operator::In => value.is_some_and(|v| self.values.contains(v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
        }
    }
}

/// Labels from pairs, for tests.
#[cfg(test)]
pub(crate) fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selectors_match_labels_and_expressions() {
        let s = Selector::of(Some(&json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["front", "edge"]},
                {"key": "canary", "operator": "DoesNotExist"},
            ]
        })))
        .unwrap();
        assert!(s.matches(&labels(&[("app", "web"), ("tier", "edge")])));
        assert!(!s.matches(&labels(&[("app", "web"), ("tier", "back")])));
        assert!(!s.matches(&labels(&[
            ("app", "web"),
            ("tier", "edge"),
            ("canary", "1")
        ])));
        assert!(!s.matches(&labels(&[("app", "api"), ("tier", "edge")])));
        // A ReplicationController's plain map.
        let rc = Selector::of(Some(&json!({"app": "web"}))).unwrap();
        assert!(rc.matches(&labels(&[("app", "web")])));
        assert!(!rc.matches(&labels(&[])));
    }

    #[test]
    fn a_selector_that_cannot_be_read_or_is_empty_selects_nothing() {
        assert_eq!(Selector::of(None), None);
        assert_eq!(Selector::of(Some(&json!({}))), None);
        assert_eq!(Selector::of(Some(&json!({"matchLabels": {}}))), None);
        let odd = json!({"matchExpressions": [{"key": "a", "operator": "Near"}]});
        assert_eq!(Selector::of(Some(&odd)), None);
    }
}
