//! Guards for automatic actions: what auto-clean may touch, how often, and when it stops.

use std::time::Duration;

use super::Result;
use super::read::Field;

#[derive(Debug, Clone, PartialEq)]
pub struct SafetyConfig {
    /// Namespaces auto-clean never touches unless listed in `include_protected`.
    pub protected_namespaces: Vec<String>,
    pub include_protected: Vec<String>,
    pub max_actions_per_minute: u32,
    pub max_actions_per_namespace_per_minute: u32,
    /// No automatic action on a view older than this: not proved in sync with the API server
    /// (by a list, an event, a bookmark or a re-made watch) for this long.
    pub max_stale: Duration,
    pub breaker: BreakerConfig,
    /// Log what would be done, do nothing.
    pub dry_run: bool,
}

/// The mass-failure breaker: pause a rule's auto-clean when at least `min_pods` pods and at
/// least `share` of a namespace or workload match it at once (a registry outage), or when it
/// would act on more than `max_workloads` distinct workloads within `window` (the same outage
/// spread thin over many small workloads). A burst in one namespace pauses the rule in that
/// namespace only; it pauses for a registry once `min_namespaces` namespaces whose failing pods
/// pull from it take part, never for pods that share nothing with the burst's.
#[derive(Debug, Clone, PartialEq)]
pub struct BreakerConfig {
    pub min_pods: u32,
    pub share: f64,
    pub max_workloads: u32,
    pub window: Duration,
    /// How many namespaces a pause beyond one namespace (for a registry) needs.
    pub min_namespaces: u32,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            min_pods: 5,
            share: 0.5,
            max_workloads: 3,
            window: Duration::from_secs(600),
            min_namespaces: 2,
        }
    }
}

impl BreakerConfig {
    /// Namespaces a pause for what they share needs; 0 reads as 1.
    pub fn shared_namespaces(&self) -> usize {
        self.min_namespaces.max(1) as usize
    }
}

impl Default for SafetyConfig {
    fn default() -> Self {
        SafetyConfig {
            protected_namespaces: ["kube-system", "kube-public", "kube-node-lease"]
                .map(String::from)
                .to_vec(),
            include_protected: Vec::new(),
            max_actions_per_minute: 30,
            max_actions_per_namespace_per_minute: 10,
            max_stale: Duration::from_secs(30),
            breaker: BreakerConfig::default(),
            dry_run: false,
        }
    }
}

impl SafetyConfig {
    /// Whether auto-clean must leave `namespace` alone.
    pub fn is_protected(&self, namespace: &str) -> bool {
        self.protected_namespaces.iter().any(|n| n == namespace)
            && !self.include_protected.iter().any(|n| n == namespace)
    }
}

const KEYS: &[&str] = &[
    "protectedNamespaces",
    "includeProtected",
    "maxActionsPerMinute",
    "maxActionsPerNamespacePerMinute",
    "maxStale",
    "breaker",
    "dryRun",
];
const BREAKER_KEYS: &[&str] = &[
    "minPods",
    "share",
    "maxWorkloads",
    "window",
    "minNamespaces",
];

pub(crate) fn read(field: &Field) -> Result<SafetyConfig> {
    let m = field.map(KEYS)?;
    let mut s = SafetyConfig::default();
    m.set(
        "protectedNamespaces",
        &mut s.protected_namespaces,
        Field::list,
    )?;
    m.set("includeProtected", &mut s.include_protected, Field::list)?;
    m.set(
        "maxActionsPerMinute",
        &mut s.max_actions_per_minute,
        Field::u32,
    )?;
    let per_ns = &mut s.max_actions_per_namespace_per_minute;
    m.set("maxActionsPerNamespacePerMinute", per_ns, Field::u32)?;
    m.set("maxStale", &mut s.max_stale, Field::duration)?;
    m.set("dryRun", &mut s.dry_run, Field::bool)?;
    if let Some(breaker) = m.get("breaker") {
        let b = breaker.map(BREAKER_KEYS)?;
        b.set("minPods", &mut s.breaker.min_pods, Field::u32)?;
        b.set("share", &mut s.breaker.share, Field::share)?;
        b.set("maxWorkloads", &mut s.breaker.max_workloads, Field::u32)?;
        b.set("window", &mut s.breaker.window, Field::duration)?;
        b.set("minNamespaces", &mut s.breaker.min_namespaces, Field::u32)?;
    }
    Ok(s)
}
