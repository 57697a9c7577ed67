//! Label selectors, as workloads carry them, and the labels they match.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::core::Selector;
use serde::Deserialize;
use serde_json::Value;

/// The label a ReplicaSet made by a Deployment puts on itself and its pods.
pub(crate) const TEMPLATE_HASH: &str = "pod-template-hash";
/// The same label, as an Argo Rollout's ReplicaSets carry it.
pub(crate) const ROLLOUT_TEMPLATE_HASH: &str = "rollouts-pod-template-hash";
/// The revision a StatefulSet's controller stamps on each pod it makes.
pub(crate) const REVISION_HASH: &str = "controller-revision-hash";

pub(crate) type Labels = BTreeMap<String, String>;

/// `spec.selector`: a LabelSelector, or a ReplicationController's plain map. Unreadable or empty,
/// it selects nothing (`None`): a workload that cannot prove it selects a pod is not scaled for it.
pub(crate) fn selector(spec_selector: Option<&Value>) -> Option<Selector> {
    let value = spec_selector?;
    let object = value.as_object()?;
    let selector = if object.contains_key("matchLabels") || object.contains_key("matchExpressions")
    {
        LabelSelector::deserialize(value).ok()?
    } else {
        LabelSelector {
            match_labels: Some(Labels::deserialize(value).ok()?),
            match_expressions: None,
        }
    };
    Selector::try_from(selector)
        .ok()
        .filter(|s| !s.selects_all())
}
