//! Pauses and holds as the worker makes them, for tests of what shows them.

use std::time::Duration;

use opc_core::actions::{Outcome, Refusal, ScalableWorkload, WorkloadKind};
use opc_core::place::PauseScope;
use opc_core::pod::WorkloadId;
use opc_core::rules::RuleKind;
use opc_core::worker::{Bound, Burst, Group, HeldReason, Pause, PauseCause, Reach};

/// A burst of `rule` in namespace `ns`: `matched` of `total` pods, paused there.
pub fn burst_in(ns: &str, rule: RuleKind, matched: u32, total: u32) -> Pause {
    let burst = Burst {
        rule,
        matched,
        total,
        group: Group::Namespace(ns.into()),
        reach: Reach::OneNamespace,
        silent_node: None,
    };
    Pause::new(PauseScope::Namespace(ns.into()), PauseCause::Burst(burst))
}

/// The bound on workloads: `rule` would act on a 4th Deployment of `ns` after `a`, `b`, `c`.
pub fn fourth_workload_in(ns: &str, rule: RuleKind) -> Pause {
    let deployment = |name: &str| WorkloadId::new(ns, "Deployment", name);
    let bound = Bound::InNamespace {
        rule,
        next: deployment("d"),
        acted: vec![deployment("a"), deployment("b"), deployment("c")],
        window: Duration::from_secs(600),
    };
    Pause::new(
        PauseScope::Namespace(ns.into()),
        PauseCause::Workloads(bound),
    )
}

/// Held because a Deployment's bad rollout still has `available` replicas serving.
pub fn bad_rollout(ns: &str, name: &str, available: i32) -> HeldReason {
    let workload = ScalableWorkload::new(WorkloadKind::Deployment, ns, name);
    HeldReason {
        outcome: Outcome::Refused(Refusal::BadRollout {
            workload,
            available,
        }),
        cluster: None,
    }
}
