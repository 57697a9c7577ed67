//! From a pod to the workload that can be scaled, following `controller: true` owners.

use super::calls::Calls;
use super::owners::{LivePod, Owner, live_pod};
use super::proof::{Proven, Unproven, local_fault, prove};
use super::retry::Stop;
use super::workload::{ScalableWorkload, WorkloadKind};
use crate::pod::{OwnerRef, PodRecord};

/// Where scale-to-zero would land, or why it cannot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Scalable(ScalableWorkload),
    Unscalable(Unscalable),
}

/// Why scale to zero has no workload to land on, and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unscalable {
    #[error(
        "pod {pod} has no controller, so there is no workload to scale; delete the pod instead"
    )]
    NoController { pod: String },
    #[error(
        "DaemonSet {name} runs one pod per node and has no replica count; fix its image or delete the DaemonSet"
    )]
    DaemonSet { name: String },
    #[error("Job {name} runs to completion and has no replica count; suspend or delete the Job")]
    Job { name: String },
    #[error("CronJob {name} has no replica count; suspend the CronJob")]
    CronJob { name: String },
    #[error(
        "owned by {kind} {name} ({api_version}), which ops-pod-cleaner does not know how to scale"
    )]
    Unknown {
        api_version: String,
        kind: String,
        name: String,
    },
    /// The references do not prove the pod belongs to the workload they name.
    #[error("{0}")]
    Unproven(#[from] Unproven),
}

impl Unscalable {
    fn of_kind(owner: &OwnerRef) -> Unscalable {
        let group = owner.api_version.split_once('/').map_or("", |(g, _)| g);
        let name = owner.name.to_string();
        match (group, &*owner.kind) {
            ("apps", "DaemonSet") => Unscalable::DaemonSet { name },
            ("batch", "Job") => Unscalable::Job { name },
            ("batch", "CronJob") => Unscalable::CronJob { name },
            _ => Unscalable::Unknown {
                api_version: owner.api_version.to_string(),
                kind: owner.kind.to_string(),
                name,
            },
        }
    }
}

/// The pod's controller, if it is of a kind that can be scaled and nothing that can be told
/// without the pod's labels rules it out; `chain` as read with [`SCALE_CHAIN`].
pub(crate) fn scalable_owner<'a>(
    pod: &'a PodRecord,
    chain: &[Owner],
) -> Result<(&'a OwnerRef, WorkloadKind), Unscalable> {
    let Some(first) = &pod.owner else {
        return Err(Unscalable::NoController {
            pod: pod.name.to_string(),
        });
    };
    let Some(kind) = WorkloadKind::from_owner(&first.api_version, &first.kind) else {
        return Err(Unscalable::of_kind(first));
    };
    if let Some(fault) = local_fault(pod) {
        return Err(fault.into());
    }
    if kind == WorkloadKind::ReplicaSet
        && let Some(manager) = chain.first().and_then(|rs| rs.next.as_ref())
        && !matches!(
            WorkloadKind::from_owner(&manager.api_version, &manager.kind),
            Some(WorkloadKind::Deployment | WorkloadKind::Rollout)
        )
    {
        return Err(Unscalable::of_kind(manager));
    }
    Ok((first, kind))
}

/// Where scale-to-zero of a pod lands, proven from its controller chain (nearest first) and the pod
/// as read now, with the uid the workload must still have. What the pod alone rules out costs no
/// read; `live`, a pod read just now, is not read again. `Err`: the pod could not be read.
pub(crate) async fn resolve(
    calls: &Calls,
    pod: &PodRecord,
    chain: &[Owner],
    live: Option<LivePod>,
) -> Result<Result<Proven, Unscalable>, Stop> {
    let (owner, kind) = match scalable_owner(pod, chain) {
        Ok(found) => found,
        Err(why) => return Ok(Err(why)),
    };
    let live = match live {
        Some(live) => live,
        None => live_pod(calls, pod).await?,
    };
    Ok(prove(pod, owner, kind, &live, chain).map_err(Unscalable::from))
}

/// How far up a chain scale resolution reads: a ReplicaSet and its manager.
pub(crate) const SCALE_CHAIN: usize = 2;
