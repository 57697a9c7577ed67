//! Proving, hop by hop, that a pod really belongs to the workload its owner references name.
//!
//! A pod's `ownerReferences` are written by whoever creates the pod: a tenant may name any
//! workload of its namespace, with that workload's real uid. So a workload is scaled only when
//! every hop checks out: each owner read carries the uid its reference names, a Deployment or
//! Rollout is reached only through a ReplicaSet it controls, the pod matches each workload's
//! selector (and its ReplicaSet's `pod-template-hash`), and a StatefulSet pod is named
//! `<set>-<ordinal>`. A chain only says whose the pod claims to be; the workload's own template
//! and revisions say whether it made the pod: the failing container's image must be in its
//! current template, and the pod's revision one it names as current or updating.

use kube::core::SelectorExt;

use super::owners::{LivePod, Owner};
use super::selector::{Labels, REVISION_HASH, ROLLOUT_TEMPLATE_HASH, TEMPLATE_HASH};
use super::workload::{ScalableWorkload, WorkloadKind};
use crate::pod::{NAME_CAP, OwnerRef, PodRecord};
use crate::rules::ActionKind;

/// The two openings of an [`Unproven`]'s words: a chain that does not hold, or a pod that is
/// no evidence against the workload it leads to.
const CHAIN: &str = "the owner chain does not check out";
const EVIDENCE: &str = "the pod is no evidence against its workload";

/// What did not check out on the way from a pod to its workload.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unproven {
    #[error(
        "{CHAIN}: the pod names {kind_name} {name} as its controller, but a {kind_name} only ever \
         owns ReplicaSets",
        kind_name = kind.name()
    )]
    DirectlyOwned { kind: WorkloadKind, name: String },
    #[error("{CHAIN}: {kind} {name} has uid {found}, not the uid {named} its reference names")]
    UidMismatch {
        kind: String,
        name: String,
        named: String,
        found: String,
    },
    #[error("{CHAIN}: {kind} {name} does not exist")]
    Missing { kind: String, name: String },
    #[error("{CHAIN}: ReplicaSet {replicaset} is not controlled by the workload it names")]
    NotControlled { replicaset: String },
    #[error("{CHAIN}: the pod's labels do not match the selector of {kind} {name}")]
    NotSelected { kind: String, name: String },
    #[error("{CHAIN}: the pod's {TEMPLATE_HASH} label is not that of ReplicaSet {replicaset}")]
    TemplateHash { replicaset: String },
    #[error("{CHAIN}: StatefulSet {set} names its pods {set}-<ordinal>, and this pod is not one")]
    NotOrdinal { set: String },
    #[error("{CHAIN}: the owner reference names an object longer than {NAME_CAP} characters")]
    MalformedOwner,
    #[error(
        "{EVIDENCE}: container {container} runs image {image}, which is not in the pod template \
         of {kind} {name}, so {kind} {name} did not make this pod"
    )]
    ForeignImage {
        container: String,
        image: String,
        kind: String,
        name: String,
    },
    #[error(
        "{EVIDENCE}: container {container} pulls its image with {differs}, unlike the pod \
         template of {kind} {name}, so {kind} {name} did not make this pod"
    )]
    ForeignPull {
        container: String,
        differs: PullDiffers,
        kind: String,
        name: String,
    },
    #[error("{EVIDENCE}: {}", stale_revision(kind, name, revision.as_deref()))]
    StaleRevision {
        kind: String,
        name: String,
        revision: Option<String>,
    },
    #[error("{EVIDENCE}: no container of the pod, as read now, is failing")]
    NothingFailing,
}

/// How a pod's pull differs from its workload's template.
#[derive(Debug, Clone, PartialEq, Eq, strum::Display)]
pub enum PullDiffers {
    /// Another `imagePullPolicy` (as the API server defaults it): the pod's.
    #[strum(to_string = "imagePullPolicy {0}")]
    Policy(String),
    #[strum(to_string = "no imagePullSecret {0}")]
    NoSecret(String),
}

fn stale_revision(kind: &str, name: &str, revision: Option<&str>) -> String {
    match revision {
        Some(revision) => format!(
            "its revision {revision} is neither the current nor the updating revision of {kind} \
             {name}"
        ),
        None => format!("it carries no revision that {kind} {name} names as current or updating"),
    }
}

/// Why the action planned for a pod would be refused, told from the pod alone: what the table
/// and `scan` show in its place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, strum::IntoStaticStr)]
#[strum(serialize_all = "camelCase")]
pub enum Suspect {
    #[error("a field is longer than Kubernetes allows for it: the pod is left alone")]
    Malformed,
    /// Its scale to zero would land on a workload its references cannot prove.
    #[error("{0}")]
    Unproven(Unproven),
}

impl Suspect {
    pub fn of(pod: &PodRecord, action: ActionKind) -> Option<Suspect> {
        if pod.malformed {
            return Some(Suspect::Malformed);
        }
        match action {
            ActionKind::ScaleToZero => local_fault(pod).map(Suspect::Unproven),
            _ => None,
        }
    }

    /// One word for an action column.
    pub fn label(&self) -> &'static str {
        self.into()
    }
}

/// A workload the chain leads to, and the uid it must still have when it is scaled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proven {
    pub workload: ScalableWorkload,
    pub uid: String,
}

/// What can be told from the pod alone, without reading its owners: enough for the table and
/// `scan` to show a forged reference before anyone asks to scale.
pub(crate) fn local_fault(pod: &PodRecord) -> Option<Unproven> {
    let owner = pod.owner.as_ref()?;
    if pod.malformed {
        return Some(Unproven::MalformedOwner);
    }
    match WorkloadKind::from_owner(&owner.api_version, &owner.kind) {
        Some(kind @ (WorkloadKind::Deployment | WorkloadKind::Rollout)) => {
            Some(Unproven::DirectlyOwned {
                kind,
                name: owner.name.to_string(),
            })
        }
        Some(WorkloadKind::StatefulSet) if !is_ordinal_of(&pod.name, &owner.name) => {
            Some(Unproven::NotOrdinal {
                set: owner.name.to_string(),
            })
        }
        _ => None,
    }
}

/// The workload that `chain` (as read, nearest first) proves the pod belongs to and that made it,
/// up from its own controller `owner` of a scalable `kind`; `live` is the pod as read now.
pub(crate) fn prove(
    pod: &PodRecord,
    owner: &OwnerRef,
    kind: WorkloadKind,
    live: &LivePod,
    chain: &[Owner],
) -> Result<Proven, Unproven> {
    let labels = &live.labels;
    let first = hop(owner, chain.first())?;
    selected(first, labels)?;
    let workload = |kind, owner: &Owner| Proven {
        workload: ScalableWorkload::new(kind, &pod.namespace, &owner.name),
        uid: owner.uid.clone(),
    };
    if kind != WorkloadKind::ReplicaSet {
        if kind == WorkloadKind::StatefulSet {
            current_revision(first, labels.get(REVISION_HASH))?;
        }
        made_by(first, live)?;
        return Ok(workload(kind, first));
    }
    let pod_hash = labels
        .get(TEMPLATE_HASH)
        .or_else(|| labels.get(ROLLOUT_TEMPLATE_HASH));
    if let Some(hash) = &first.template_hash
        && pod_hash != Some(hash)
    {
        return Err(Unproven::TemplateHash {
            replicaset: first.name.clone(),
        });
    }
    let Some(link) = &first.next else {
        made_by(first, live)?;
        return Ok(workload(kind, first));
    };
    let manager = WorkloadKind::from_owner(&link.api_version, &link.kind)
        .filter(|k| matches!(k, WorkloadKind::Deployment | WorkloadKind::Rollout))
        .ok_or_else(|| Unproven::NotControlled {
            replicaset: first.name.clone(),
        })?;
    let above = hop(link, chain.get(1))?;
    selected(above, labels)?;
    // A Deployment names its newest ReplicaSet by revision; a Rollout names its by hash.
    let revision = match manager {
        WorkloadKind::Rollout => first.template_hash.as_ref(),
        _ => first.current.revisions.first(),
    };
    current_revision(above, revision)?;
    made_by(above, live)?;
    Ok(workload(manager, above))
}

/// `revision` must be one `workload` names as current or updating.
fn current_revision(workload: &Owner, revision: Option<&String>) -> Result<(), Unproven> {
    match revision {
        Some(r) if workload.current.revisions.contains(r) => Ok(()),
        _ => Err(Unproven::StaleRevision {
            kind: workload.kind.clone(),
            name: workload.name.clone(),
            revision: revision.cloned(),
        }),
    }
}

/// Every failing container must pull as `workload`'s current template says: the same image,
/// pull policy and pull Secrets. A pod that pulls otherwise is not one the workload made,
/// however well it copies the references.
fn made_by(workload: &Owner, live: &LivePod) -> Result<(), Unproven> {
    if live.failing.is_empty() {
        return Err(Unproven::NothingFailing);
    }
    let current = &workload.current;
    let (kind, name) = (workload.kind.clone(), workload.name.clone());
    for failing in &live.failing {
        let container = failing.container.clone();
        let Some(template) = current
            .containers
            .iter()
            .find(|t| t.container == failing.container && t.image == failing.image)
        else {
            return Err(Unproven::ForeignImage {
                container,
                image: failing.image.clone(),
                kind,
                name,
            });
        };
        let differs = if template.pull_policy() != failing.pull_policy() {
            PullDiffers::Policy(failing.pull_policy().to_string())
        } else if let Some(missing) =
            (current.pull_secrets.iter()).find(|s| !live.pull_secrets.contains(s))
        {
            PullDiffers::NoSecret(missing.clone())
        } else {
            continue;
        };
        return Err(Unproven::ForeignPull {
            container,
            differs,
            kind,
            name,
        });
    }
    Ok(())
}

/// The owner read for `link` must exist and carry the uid the link names.
fn hop<'a>(link: &OwnerRef, read: Option<&'a Owner>) -> Result<&'a Owner, Unproven> {
    let Some(owner) = read.filter(|o| *o.kind == *link.kind && *o.name == *link.name) else {
        return Err(Unproven::Missing {
            kind: link.kind.to_string(),
            name: link.name.to_string(),
        });
    };
    if *owner.uid != *link.uid {
        return Err(Unproven::UidMismatch {
            kind: link.kind.to_string(),
            name: link.name.to_string(),
            named: link.uid.to_string(),
            found: owner.uid.clone(),
        });
    }
    Ok(owner)
}

fn selected(owner: &Owner, labels: &Labels) -> Result<(), Unproven> {
    let matches = owner.selector.as_ref().is_some_and(|s| s.matches(labels));
    matches.then_some(()).ok_or_else(|| Unproven::NotSelected {
        kind: owner.kind.clone(),
        name: owner.name.clone(),
    })
}

/// `db-0`, `db-12` for StatefulSet `db`: the ordinal has no sign and no leading zero.
fn is_ordinal_of(pod: &str, set: &str) -> bool {
    pod.strip_prefix(set)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|n| {
            !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
                && (n == "0" || !n.starts_with('0'))
        })
}
