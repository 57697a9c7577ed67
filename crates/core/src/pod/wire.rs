//! Decoding a pod's JSON straight into the compact record.
//!
//! Only the fields named here are materialised; serde skips the rest of the object without
//! allocating, so a 12 KB pod with managedFields costs what its few useful fields cost.

use chrono::{DateTime, Utc};
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, de::DeserializeOwned};

use super::intern::Interner;
use super::resources::ContainerSpecs;
use super::{
    ContainerRecord, ContainerState, Disruption, IGNORE_ANNOTATION, OwnerRef, Phase, PodRecord,
    Termination, Unscheduled,
};

type Time = Option<DateTime<Utc>>;

/// A pod as it arrives from the API, reduced to the fields we read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct WirePod {
    pub metadata: WireMeta,
    pub(super) spec: WireSpec,
    pub(super) status: WireStatus,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WireMeta {
    pub name: String,
    pub namespace: String,
    pub uid: String,
    pub resource_version: String,
    pub(super) creation_timestamp: Time,
    pub(super) deletion_timestamp: Time,
    #[serde(deserialize_with = "nullable")]
    pub(super) finalizers: Vec<String>,
    #[serde(deserialize_with = "nullable")]
    pub(super) owner_references: Vec<WireOwner>,
    pub(super) annotations: IgnoreFlag,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct WireOwner {
    pub(super) api_version: String,
    pub(super) kind: String,
    pub(super) name: String,
    pub(super) uid: String,
    pub(super) controller: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct WireSpec {
    pub(super) node_name: Option<String>,
    pub(super) volumes: ClaimsVolume,
    #[serde(deserialize_with = "nullable")]
    pub(super) init_containers: ContainerSpecs,
    #[serde(deserialize_with = "nullable")]
    pub(super) containers: ContainerSpecs,
}

/// Whether any volume is a claim, read without keeping the volumes (runs on every event).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ClaimsVolume(pub(super) bool);

impl<'de> Deserialize<'de> for ClaimsVolume {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Scan;
        impl<'de> Visitor<'de> for Scan {
            type Value = ClaimsVolume;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of volumes")
            }
            fn visit_unit<E>(self) -> Result<ClaimsVolume, E> {
                Ok(ClaimsVolume(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ClaimsVolume, A::Error> {
                let mut claims = false;
                while let Some(volume) = seq.next_element::<WireVolume>()? {
                    claims |=
                        volume.persistent_volume_claim.is_some() || volume.ephemeral.is_some();
                }
                Ok(ClaimsVolume(claims))
            }
        }
        d.deserialize_any(Scan)
    }
}

/// Only whether a volume is a claim: one that may be ReadWriteOnce.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct WireVolume {
    persistent_volume_claim: Option<IgnoredAny>,
    /// A generic ephemeral volume is a claim made for the pod.
    ephemeral: Option<IgnoredAny>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct WireStatus {
    pub(super) phase: Option<String>,
    pub(super) reason: Option<String>,
    pub(super) message: Option<String>,
    pub(super) start_time: Time,
    #[serde(deserialize_with = "nullable")]
    pub(super) conditions: Vec<WireCondition>,
    #[serde(deserialize_with = "nullable")]
    pub(super) init_container_statuses: Vec<WireContainer>,
    #[serde(deserialize_with = "nullable")]
    pub(super) container_statuses: Vec<WireContainer>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct WireCondition {
    #[serde(rename = "type")]
    pub(super) kind: String,
    pub(super) status: String,
    pub(super) last_transition_time: Time,
    pub(super) reason: Option<String>,
    pub(super) message: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct WireContainer {
    pub(super) name: String,
    pub(super) restart_count: u32,
    pub(super) state: Option<WireState>,
    pub(super) last_state: Option<WireState>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct WireState {
    pub(super) waiting: Option<WireWaiting>,
    pub(super) running: Option<WireRunning>,
    pub(super) terminated: Option<WireTerminated>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct WireWaiting {
    pub(super) reason: Option<String>,
    pub(super) message: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct WireRunning {
    pub(super) started_at: Time,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct WireTerminated {
    pub(super) reason: Option<String>,
    pub(super) exit_code: i32,
    pub(super) finished_at: Time,
}

/// Whether the annotations carry the ignore marker; every other annotation is skipped unread.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct IgnoreFlag(pub(super) bool);

impl<'de> Deserialize<'de> for IgnoreFlag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Scan;
        impl<'de> Visitor<'de> for Scan {
            type Value = IgnoreFlag;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of annotations")
            }
            fn visit_unit<E>(self) -> Result<IgnoreFlag, E> {
                Ok(IgnoreFlag(false))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IgnoreFlag, A::Error> {
                let mut flag = false;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == IGNORE_ANNOTATION {
                        flag = is_truthy(&map.next_value::<String>()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(IgnoreFlag(flag))
            }
        }
        d.deserialize_any(Scan)
    }
}

/// The annotation opts out unless it says no explicitly.
pub(crate) fn is_truthy(value: &str) -> bool {
    !matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "false" | "0" | "no"
    )
}

/// Treat JSON `null` like an absent field.
pub(crate) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + DeserializeOwned,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

pub fn decode_pod(json: &[u8], interner: &mut Interner) -> serde_json::Result<PodRecord> {
    serde_json::from_slice::<WirePod>(json).map(|p| p.into_record(interner))
}

impl WirePod {
    /// The uid its record is kept under: cut as the record's is, so a deletion finds it.
    pub(crate) fn key(&self) -> &str {
        cut(&self.metadata.uid, UID_CAP)
    }

    pub fn into_record(self, interner: &mut Interner) -> PodRecord {
        let WirePod {
            metadata: m,
            spec,
            status,
        } = self;
        let condition = |kind: &str| status.conditions.iter().find(|c| c.kind == kind);
        let unscheduled = condition("PodScheduled")
            .filter(|c| c.status == "False")
            .map(|c| {
                Box::new(Unscheduled {
                    since: c.last_transition_time,
                    reason: c.reason.as_deref().map(|r| cut(r, REASON_CAP).into()),
                    message: c.message.as_deref().map(|m| cut(m, VERDICT_CAP).into()),
                    requests: spec.containers.requests,
                })
            });
        let disruption = condition("DisruptionTarget")
            .filter(|c| c.status == "True")
            // A reason this build does not know is none.
            .and_then(|c| c.reason.as_deref()?.parse::<Disruption>().ok());
        let ready_changed = condition("ContainersReady")
            .or_else(|| condition("Ready"))
            .and_then(|c| c.last_transition_time);
        let not_ready = condition("Ready").is_some_and(|c| c.status == "False");
        let mut containers = status
            .init_container_statuses
            .into_iter()
            .map(|c| c.into_record(true, &spec.init_containers))
            .chain(
                status
                    .container_statuses
                    .into_iter()
                    .map(|c| c.into_record(false, &spec.containers)),
            )
            .collect::<Vec<_>>();
        let controller = m
            .owner_references
            .into_iter()
            .find(|o| o.controller == Some(true));
        // Anyone who creates a pod writes its references: a name no object can have makes the
        // pod malformed, shown but never acted on.
        let malformed = controller.as_ref().is_some_and(|o| {
            o.name.len() > NAME_CAP || o.kind.len() > NAME_CAP || o.api_version.len() > NAME_CAP
        }) || containers.len() > CONTAINERS_CAP;
        let owner = controller.map(|o| OwnerRef {
            api_version: interner.get(cut(&o.api_version, NAME_CAP)),
            kind: interner.get(cut(&o.kind, NAME_CAP)),
            name: kept(o.name, NAME_CAP),
            uid: kept(o.uid, UID_CAP),
        });
        containers.truncate(CONTAINERS_CAP);
        PodRecord {
            namespace: interner.get(cut(&m.namespace, NAME_CAP)),
            name: kept(m.name, NAME_CAP),
            uid: kept(m.uid, UID_CAP),
            node: spec
                .node_name
                .filter(|n| !n.is_empty())
                .map(|n| interner.get(cut(&n, NAME_CAP))),
            phase: parse_phase(status.phase.as_deref()),
            reason: status.reason.map(|r| kept(r, REASON_CAP)),
            message: status.message.map(|m| kept(m, MESSAGE_CAP)),
            created: m.creation_timestamp,
            started: status.start_time,
            deletion: m.deletion_timestamp,
            finalizers: m
                .finalizers
                .into_iter()
                .take(FINALIZERS_CAP)
                .map(|f| kept(f, NAME_CAP))
                .collect(),
            owner,
            malformed,
            ignored: m.annotations.0,
            unscheduled,
            ready_changed,
            not_ready,
            containers: containers.into_boxed_slice(),
            claims_volume: spec.volumes.0,
            disruption,
            reason_seen: None,
        }
    }
}

// What is kept of a string the API sent: anyone who may create a pod writes most of them, and
// an object may be ~1.5 MB, so each is cut to what a valid value can be, or what is read of it.
/// An object name (a DNS subdomain, as Kubernetes validates it).
pub const NAME_CAP: usize = 253;
const UID_CAP: usize = 64;
/// A machine-readable reason (`CrashLoopBackOff`).
const REASON_CAP: usize = 128;
/// A message: its useful words come first.
pub const MESSAGE_CAP: usize = 1024;
/// A scheduler's verdict names a count per reason, and can run longer than a message.
const VERDICT_CAP: usize = 4096;
const FINALIZERS_CAP: usize = 32;
/// More containers than any real pod has: the rest are not kept, and the pod is malformed.
const CONTAINERS_CAP: usize = 64;

/// An API server's error `Status`, its texts cut as a pod's are, whichever format it came in.
pub(crate) fn capped_status(mut status: kube::core::Status) -> kube::core::Status {
    status.message = cut(&status.message, MESSAGE_CAP).to_owned();
    status.reason = cut(&status.reason, REASON_CAP).to_owned();
    status
}

/// `text` cut to at most `max` bytes, on a character.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` cut to at most `max` bytes and kept.
pub(super) fn kept(mut text: String, max: usize) -> Box<str> {
    let end = cut(&text, max).len();
    text.truncate(end);
    text.into_boxed_str()
}

fn parse_phase(phase: Option<&str>) -> Phase {
    match phase {
        // A pod the kubelet has not reported on yet is Pending.
        None | Some("") => Phase::Pending,
        Some(phase) => phase.parse().unwrap_or(Phase::Unknown),
    }
}

impl WireContainer {
    fn into_record(self, init: bool, specs: &ContainerSpecs) -> ContainerRecord {
        ContainerRecord {
            memory_limit: specs.limit(&self.name),
            name: kept(self.name, NAME_CAP),
            init,
            restarts: self.restart_count,
            state: self
                .state
                .map_or(ContainerState::None, WireState::into_state),
            last_termination: self.last_state.and_then(|s| s.terminated).map(Into::into),
        }
    }
}

impl WireState {
    fn into_state(self) -> ContainerState {
        if let Some(w) = self.waiting {
            ContainerState::Waiting {
                reason: kept(w.reason.unwrap_or_default(), REASON_CAP),
                message: w.message.map(|m| kept(m, MESSAGE_CAP)),
            }
        } else if let Some(t) = self.terminated {
            ContainerState::Terminated(t.into())
        } else if let Some(r) = self.running {
            ContainerState::Running {
                since: r.started_at,
            }
        } else {
            ContainerState::None
        }
    }
}

impl From<WireTerminated> for Termination {
    fn from(t: WireTerminated) -> Self {
        Termination {
            reason: t.reason.map(|r| kept(r, REASON_CAP)),
            exit_code: t.exit_code,
            finished: t.finished_at,
        }
    }
}
