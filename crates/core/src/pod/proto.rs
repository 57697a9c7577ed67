//! Decoding a `v1.Pod` from the API server's protobuf into the same reduced pod the JSON path
//! fills ([`WirePod`]), so both formats share one set of caps, one sanitising and one
//! `malformed` rule. Field numbers are those of `k8s.io/api/core/v1/generated.proto` and
//! `apimachinery/pkg/apis/meta/v1/generated.proto`; every other field is stepped over unread.
//!
//! Go's protobuf writes every string field, empty or not, where its JSON omits the empty ones:
//! an empty optional string reads as absent, as it does in JSON. Text is not checked as UTF-8
//! by the server's protobuf encoder, where its JSON encoder replaces what is not UTF-8: it is
//! read the same lossy way here.

use chrono::{DateTime, Utc};

use super::intern::Interner;
use super::protowire::{ProtoError, Value, for_each_field, last_field, map_entry};
use super::resources::ContainerSpecs;
use super::wire::{
    IgnoreFlag, WireCondition, WireContainer, WireMeta, WireOwner, WirePod, WireRunning, WireSpec,
    WireState, WireStatus, WireTerminated, WireWaiting, is_truthy,
};
use super::{IGNORE_ANNOTATION, PodRecord};

type Time = Option<DateTime<Utc>>;

/// Decode one `v1.Pod` message (no envelope) into its record.
pub fn decode_pod_proto(message: &[u8], interner: &mut Interner) -> Result<PodRecord, ProtoError> {
    WirePod::from_proto(message).map(|p| p.into_record(interner))
}

impl WirePod {
    /// The fields we read of one `v1.Pod` message (no envelope).
    pub fn from_proto(message: &[u8]) -> Result<WirePod, ProtoError> {
        let mut pod = WirePod::default();
        for_each_field(message, |field, value| {
            match field {
                1 => pod.metadata = meta(value.bytes(field)?)?,
                2 => pod.spec = spec(value.bytes(field)?)?,
                3 => pod.status = status(value.bytes(field)?)?,
                _ => {}
            }
            Ok(())
        })?;
        Ok(pod)
    }
}

/// A string field, whole (what is kept of it is cut later, by the rules JSON follows).
pub(super) fn text(value: Value<'_>, field: u32) -> Result<String, ProtoError> {
    Ok(String::from_utf8_lossy(value.bytes(field)?).into_owned())
}

/// An optional string field: empty is absent.
fn word(value: Value<'_>, field: u32) -> Result<Option<String>, ProtoError> {
    let text = text(value, field)?;
    Ok((!text.is_empty()).then_some(text))
}

/// A `metav1.Time`: whole seconds, as the server writes and reads them; an empty message is
/// the zero time, which JSON writes as null.
fn time(value: Value<'_>, field: u32) -> Result<Time, ProtoError> {
    let message = value.bytes(field)?;
    if message.is_empty() {
        return Ok(None);
    }
    let seconds = last_field(message, 1, |v| v.varint(1))?.unwrap_or(0);
    Ok(DateTime::from_timestamp(seconds as i64, 0))
}

/// A protobuf `int32`: negative values are written sign-extended to 64 bits.
fn int32(value: Value<'_>, field: u32) -> Result<i32, ProtoError> {
    Ok(value.varint(field)? as i64 as i32)
}

/// A message read field by field into a `T` that starts empty.
fn fields_into<'a, T: Default>(
    message: &'a [u8],
    mut each: impl FnMut(&mut T, u32, Value<'a>) -> Result<(), ProtoError>,
) -> Result<T, ProtoError> {
    let mut out = T::default();
    for_each_field(message, |f, v| each(&mut out, f, v))?;
    Ok(out)
}

fn meta(message: &[u8]) -> Result<WireMeta, ProtoError> {
    fields_into(message, |m: &mut WireMeta, f, v| {
        match f {
            1 => m.name = text(v, f)?,
            3 => m.namespace = text(v, f)?,
            5 => m.uid = text(v, f)?,
            6 => m.resource_version = text(v, f)?,
            8 => m.creation_timestamp = time(v, f)?,
            9 => m.deletion_timestamp = time(v, f)?,
            12 => {
                if let Some(flag) = ignore_entry(v.bytes(f)?)? {
                    m.annotations = IgnoreFlag(flag);
                }
            }
            13 => m.owner_references.push(owner(v.bytes(f)?)?),
            14 => m.finalizers.push(text(v, f)?),
            _ => {}
        }
        Ok(())
    })
}

/// One annotation: whether it opts out, if it is the ignore marker. Every other annotation
/// is stepped over without being copied.
fn ignore_entry(entry: &[u8]) -> Result<Option<bool>, ProtoError> {
    let (key, value) = map_entry(entry)?;
    Ok((key == IGNORE_ANNOTATION.as_bytes()).then(|| is_truthy(&String::from_utf8_lossy(value))))
}

fn owner(message: &[u8]) -> Result<WireOwner, ProtoError> {
    fields_into(message, |o: &mut WireOwner, f, v| {
        match f {
            1 => o.kind = text(v, f)?,
            3 => o.name = text(v, f)?,
            4 => o.uid = text(v, f)?,
            5 => o.api_version = text(v, f)?,
            6 => o.controller = Some(v.varint(f)? != 0),
            _ => {}
        }
        Ok(())
    })
}

fn spec(message: &[u8]) -> Result<WireSpec, ProtoError> {
    fields_into(message, |s: &mut WireSpec, f, v| {
        match f {
            1 => s.volumes.0 |= volume_claims(v.bytes(f)?)?,
            2 => container_spec(&mut s.containers, v.bytes(f)?)?,
            10 => s.node_name = Some(text(v, f)?),
            20 => container_spec(&mut s.init_containers, v.bytes(f)?)?,
            _ => {}
        }
        Ok(())
    })
}

/// Whether a `Volume` is a claim: its source (field 2, inlined in JSON) is a
/// persistentVolumeClaim (10) or a generic ephemeral volume (29).
fn volume_claims(volume: &[u8]) -> Result<bool, ProtoError> {
    let mut claims = false;
    for_each_field(volume, |f, v| {
        if f == 2 {
            for_each_field(v.bytes(f)?, |source, _| {
                claims |= matches!(source, 10 | 29);
                Ok(())
            })?;
        }
        Ok(())
    })?;
    Ok(claims)
}

/// One `Container`: its name (1) and its resources (8), nothing else.
fn container_spec(specs: &mut ContainerSpecs, container: &[u8]) -> Result<(), ProtoError> {
    let mut name = String::new();
    let mut quantities: [Option<String>; 3] = Default::default();
    for_each_field(container, |f, v| {
        match f {
            1 => name = text(v, f)?,
            8 => resources(v.bytes(f)?, &mut quantities)?,
            _ => {}
        }
        Ok(())
    })?;
    let [limit, cpu, memory] = quantities.each_ref().map(Option::as_deref);
    specs.add(&name, limit, [cpu, memory]);
    Ok(())
}

/// `ResourceRequirements`: limits (1) and requests (2), maps of name to `Quantity{string=1}`.
/// Fills `[memory limit, cpu request, memory request]`.
fn resources(message: &[u8], out: &mut [Option<String>; 3]) -> Result<(), ProtoError> {
    for_each_field(message, |f, v| {
        let (key, quantity) = match f {
            1 | 2 => quantity_entry(v.bytes(f)?)?,
            _ => return Ok(()),
        };
        let slot = match (f, key) {
            (1, b"memory") => &mut out[0],
            (2, b"cpu") => &mut out[1],
            (2, b"memory") => &mut out[2],
            _ => return Ok(()),
        };
        *slot = quantity;
        Ok(())
    })
}

/// A map entry of a resource name to a `Quantity`, whose text is its field 1.
fn quantity_entry(entry: &[u8]) -> Result<(&[u8], Option<String>), ProtoError> {
    let (key, quantity) = map_entry(entry)?;
    Ok((key, last_field(quantity, 1, |v| text(v, 1))?))
}

fn status(message: &[u8]) -> Result<WireStatus, ProtoError> {
    fields_into(message, |s: &mut WireStatus, f, v| {
        match f {
            1 => s.phase = word(v, f)?,
            2 => s.conditions.push(condition(v.bytes(f)?)?),
            3 => s.message = word(v, f)?,
            4 => s.reason = word(v, f)?,
            7 => s.start_time = time(v, f)?,
            8 => s.container_statuses.push(container(v.bytes(f)?)?),
            10 => s.init_container_statuses.push(container(v.bytes(f)?)?),
            _ => {}
        }
        Ok(())
    })
}

fn condition(message: &[u8]) -> Result<WireCondition, ProtoError> {
    fields_into(message, |c: &mut WireCondition, f, v| {
        match f {
            1 => c.kind = text(v, f)?,
            2 => c.status = text(v, f)?,
            4 => c.last_transition_time = time(v, f)?,
            5 => c.reason = word(v, f)?,
            6 => c.message = word(v, f)?,
            _ => {}
        }
        Ok(())
    })
}

fn container(message: &[u8]) -> Result<WireContainer, ProtoError> {
    fields_into(message, |c: &mut WireContainer, f, v| {
        match f {
            1 => c.name = text(v, f)?,
            2 => c.state = Some(state(v.bytes(f)?)?),
            3 => c.last_state = Some(state(v.bytes(f)?)?),
            // JSON refuses a negative count as it refuses the pod: so does this.
            5 => {
                c.restart_count =
                    u32::try_from(int32(v, f)?).map_err(|_| ProtoError::Range { field: f })?
            }
            _ => {}
        }
        Ok(())
    })
}

fn state(message: &[u8]) -> Result<WireState, ProtoError> {
    fields_into(message, |s: &mut WireState, f, v| {
        match f {
            1 => s.waiting = Some(waiting(v.bytes(f)?)?),
            2 => s.running = Some(running(v.bytes(f)?)?),
            3 => s.terminated = Some(terminated(v.bytes(f)?)?),
            _ => {}
        }
        Ok(())
    })
}

fn waiting(message: &[u8]) -> Result<WireWaiting, ProtoError> {
    fields_into(message, |w: &mut WireWaiting, f, v| {
        match f {
            1 => w.reason = word(v, f)?,
            2 => w.message = word(v, f)?,
            _ => {}
        }
        Ok(())
    })
}

fn running(message: &[u8]) -> Result<WireRunning, ProtoError> {
    let started_at = last_field(message, 1, |v| time(v, 1))?.flatten();
    Ok(WireRunning { started_at })
}

fn terminated(message: &[u8]) -> Result<WireTerminated, ProtoError> {
    fields_into(message, |t: &mut WireTerminated, f, v| {
        match f {
            1 => t.exit_code = int32(v, f)?,
            3 => t.reason = word(v, f)?,
            6 => t.finished_at = time(v, f)?,
            _ => {}
        }
        Ok(())
    })
}
