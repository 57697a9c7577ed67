//! What a rule is configured to do. Built by `config`, read by `rules::classify`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Verb;

/// One rule of the chain, and the category of the pods it claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[derive(strum::IntoStaticStr, strum::Display)]
#[strum(serialize_all = "camelCase")]
pub enum RuleKind {
    Evicted,
    Terminating,
    ImagePull,
    CrashLoop,
    ConfigError,
    /// Scheduled, not up: a container still creating or initializing, an init container not
    /// done, or running but not Ready.
    Starting,
    Pending,
    Failed,
    Unknown,
}

impl RuleKind {
    /// The default chain order.
    pub const ALL: [RuleKind; 9] = [
        RuleKind::Evicted,
        RuleKind::Terminating,
        RuleKind::ImagePull,
        RuleKind::CrashLoop,
        RuleKind::ConfigError,
        RuleKind::Starting,
        RuleKind::Pending,
        RuleKind::Failed,
        RuleKind::Unknown,
    ];

    /// The name used in config files, JSON output and the UI.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// What a rule plans for the pods it claims: the config's `action:`, the verbs the worker may
/// run, or none. Named by [`Verb::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::VariantArray)]
pub enum ActionKind {
    None,
    Delete,
    ForceDelete,
    ScaleToZero,
    Evict,
}

impl ActionKind {
    pub(crate) const ALL: &[ActionKind] = <ActionKind as strum::VariantArray>::VARIANTS;

    pub(crate) fn verb(self) -> Option<Verb> {
        match self {
            ActionKind::None => None,
            ActionKind::Delete => Some(Verb::Delete),
            ActionKind::ForceDelete => Some(Verb::ForceDelete),
            ActionKind::ScaleToZero => Some(Verb::ScaleToZero),
            ActionKind::Evict => Some(Verb::Evict),
        }
    }

    pub fn name(self) -> &'static str {
        self.verb().map_or("none", Verb::name)
    }

    /// What a row shows as the pod's next action, the same on the screen and in `scan`: a
    /// deletion already under way is what happens next (a stuck one, `terminating`'s own,
    /// excepted), a hold when the action would be refused, `-` where there is nothing to act
    /// on (a pod without a controller has no workload to scale).
    pub fn shown(self, rule: RuleKind, deleting: bool, owned: bool, held: Option<&str>) -> &str {
        match self {
            _ if deleting && rule != RuleKind::Terminating => "deleting",
            _ if let Some(held) = held => held,
            ActionKind::ScaleToZero if !owned => "-",
            ActionKind::None => "-",
            other => other.name(),
        }
    }
}

by_name!(ActionKind, "action");

/// Which namespaces a rule looks at. An empty `include` means all of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamespaceFilter {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl NamespaceFilter {
    pub(crate) fn admits(&self, namespace: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|n| n == namespace))
            && !self.exclude.iter().any(|n| n == namespace)
    }
}

/// The effective settings of one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSpec {
    pub kind: RuleKind,
    pub enabled: bool,
    /// Whether the auto-clean worker may act on this rule's findings.
    pub auto: bool,
    /// Minimum time in the state before the rule matches.
    pub after: Duration,
    /// Container reasons that count (imagePull, crashLoop, configError).
    pub reasons: Vec<String>,
    /// Minimum total restarts (crashLoop).
    pub restarts: u32,
    pub action: ActionKind,
    pub namespaces: NamespaceFilter,
    /// Let the worker scale a workload to zero even while it has available replicas.
    pub scale_while_available: bool,
}

impl RuleSpec {
    /// The built-in settings of a rule; `config/default.yaml` states the same values.
    pub fn default_for(kind: RuleKind) -> RuleSpec {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        let (after, reasons, restarts, action) = match kind {
            RuleKind::Evicted => (0, vec![], 0, ActionKind::Delete),
            RuleKind::Terminating => (300, vec![], 0, ActionKind::ForceDelete),
            RuleKind::ImagePull => (
                600,
                strings(&[
                    "ErrImagePull",
                    "ImagePullBackOff",
                    "InvalidImageName",
                    "ErrImageNeverPull",
                ]),
                0,
                ActionKind::ScaleToZero,
            ),
            RuleKind::CrashLoop => (
                0,
                strings(&[
                    "CrashLoopBackOff",
                    "Error",
                    "Completed",
                    "RunContainerError",
                    "OOMKilled",
                ]),
                5,
                ActionKind::None,
            ),
            RuleKind::ConfigError => (
                0,
                strings(&["CreateContainerConfigError", "CreateContainerError"]),
                0,
                ActionKind::None,
            ),
            // kubernetes-mixin's KubePodNotReady fires after 15 minutes (KubeContainerWaiting
            // after an hour): a pod not up by then is what an engineer is paged for.
            RuleKind::Starting => (900, vec![], 0, ActionKind::None),
            RuleKind::Pending => (300, vec![], 0, ActionKind::None),
            RuleKind::Failed => (0, vec![], 0, ActionKind::Delete),
            RuleKind::Unknown => (0, vec![], 0, ActionKind::None),
        };
        RuleSpec {
            kind,
            enabled: true,
            auto: false,
            after: Duration::from_secs(after),
            reasons,
            restarts,
            action,
            namespaces: NamespaceFilter::default(),
            scale_while_available: false,
        }
    }
}
