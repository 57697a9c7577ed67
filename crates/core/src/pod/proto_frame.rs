//! What carries pods in the API server's protobuf: the envelope around a whole body
//! (`k8s\0` then a `runtime.Unknown`), a `v1.PodList` page, and the watch stream's frames.
//!
//! A watch stream is a run of frames, each a 4-byte big-endian length and then a bare
//! `metav1.WatchEvent` (the stream serializer writes no envelope); the event's object is a
//! whole body again, envelope and all. A frame that does carry an envelope is read too.

use std::collections::BTreeMap;

use kube::core::watch::{Bookmark, BookmarkMeta};
use kube::core::{Status, TypeMeta, WatchEvent};
use serde::Deserialize;

use super::WirePod;
use super::protowire::{ProtoError, for_each_field, last_field, map_entry};
use crate::pod::proto::text;

/// The media type a client asks for and a server answers with.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// What starts every protobuf body the API server writes.
pub const MAGIC: &[u8; 4] = b"k8s\0";
/// The most one watch frame may hold: an object is at most ~1.5 MB in etcd, and an event
/// carries one. A length beyond this is a broken stream, not an object to wait for.
pub const FRAME_CAP: usize = 16 << 20;
/// The annotation of the bookmark that ends a streaming list's initial events.
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// The bytes of a `kind` inside a whole body: the magic, then a `runtime.Unknown` whose
/// typeMeta (1) names the kind (2) and whose raw (2) holds it.
fn object<'a>(body: &'a [u8], kind: &str) -> Result<&'a [u8], ProtoError> {
    let message = body.strip_prefix(MAGIC).ok_or(ProtoError::NoMagic)?;
    let (mut named, mut raw) = (&[][..], &[][..]);
    for_each_field(message, |f, v| {
        match f {
            1 => named = last_field(v.bytes(f)?, 2, |kind| kind.bytes(2))?.unwrap_or(named),
            2 => raw = v.bytes(f)?,
            _ => {}
        }
        Ok(())
    })?;
    if named == kind.as_bytes() {
        Ok(raw)
    } else {
        Err(ProtoError::Kind)
    }
}

/// A list page's `ListMeta`, in either format: where a watch starts, and the next page does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PageMeta {
    pub resource_version: String,
    #[serde(rename = "continue")]
    pub continue_token: Option<String>,
}

/// Reads a `v1.PodList` body: calls `each` with every pod's message (field 2), in order, as
/// it is met, and returns the list's metadata (field 1: resourceVersion 2, continue 3).
pub fn pod_list<'a>(
    body: &'a [u8],
    mut each: impl FnMut(&'a [u8]),
) -> Result<PageMeta, ProtoError> {
    let mut meta = PageMeta::default();
    for_each_field(object(body, "PodList")?, |f, v| {
        match f {
            1 => meta = list_meta(v.bytes(f)?)?,
            2 => each(v.bytes(f)?),
            _ => {}
        }
        Ok(())
    })?;
    Ok(meta)
}

/// A `ListMeta` message: resourceVersion (2) and continue (3); an empty token is none.
pub fn list_meta(message: &[u8]) -> Result<PageMeta, ProtoError> {
    let mut meta = PageMeta::default();
    for_each_field(message, |m, value| {
        match m {
            2 => meta.resource_version = text(value, m)?,
            3 => meta.continue_token = Some(text(value, m)?).filter(|t| !t.is_empty()),
            _ => {}
        }
        Ok(())
    })?;
    Ok(meta)
}

/// A whole `metav1.Status` body: how an API server that speaks protobuf answers an error.
pub fn status_body(body: &[u8]) -> Result<Status, ProtoError> {
    status(object(body, "Status")?)
}

/// A whole `v1.Pod` body (a GET of one pod) into the fields we read.
pub fn pod_body(body: &[u8]) -> Result<WirePod, ProtoError> {
    WirePod::from_proto(object(body, "Pod")?)
}

/// The first whole frame at the front of `buffer` and how many bytes it took, length prefix
/// included; None while it has not all arrived.
pub fn next_frame(buffer: &[u8]) -> Result<Option<(&[u8], usize)>, ProtoError> {
    let Some((prefix, rest)) = buffer.split_first_chunk::<4>() else {
        return Ok(None);
    };
    let length = u32::from_be_bytes(*prefix) as usize;
    if length > FRAME_CAP {
        return Err(ProtoError::Frame);
    }
    Ok(rest.get(..length).map(|frame| (frame, 4 + length)))
}

/// One watch frame (without its length) into the event it carries.
pub fn watch_event(frame: &[u8]) -> Result<WatchEvent<WirePod>, ProtoError> {
    let event = if frame.starts_with(MAGIC) {
        object(frame, "WatchEvent")?
    } else {
        frame
    };
    let (mut kind, mut raw) = (&[][..], &[][..]);
    for_each_field(event, |f, v| {
        match f {
            1 => kind = v.bytes(f)?,
            // A RawExtension: its bytes are field 1.
            2 => raw = last_field(v.bytes(f)?, 1, |bytes| bytes.bytes(1))?.unwrap_or(raw),
            _ => {}
        }
        Ok(())
    })?;
    Ok(match kind {
        b"ADDED" => WatchEvent::Added(pod_body(raw)?),
        b"MODIFIED" => WatchEvent::Modified(pod_body(raw)?),
        b"DELETED" => WatchEvent::Deleted(pod_body(raw)?),
        b"BOOKMARK" => WatchEvent::Bookmark(bookmark(object(raw, "Pod")?)?),
        b"ERROR" => WatchEvent::Error(Box::new(status(object(raw, "Status")?)?)),
        _ => return Err(ProtoError::Kind),
    })
}

/// A bookmark is a pod with nothing but a resourceVersion (metadata 1, field 6) and maybe the
/// annotation that ends a streaming list's initial events (field 12, map entries).
fn bookmark(pod: &[u8]) -> Result<Bookmark, ProtoError> {
    let mut metadata = BookmarkMeta {
        resource_version: String::new(),
        annotations: BTreeMap::new(),
    };
    for_each_field(pod, |f, v| {
        if f != 1 {
            return Ok(());
        }
        for_each_field(v.bytes(f)?, |m, value| {
            match m {
                6 => metadata.resource_version = text(value, m)?,
                12 => {
                    let (key, value) = map_entry(value.bytes(m)?)?;
                    if key == INITIAL_EVENTS_END.as_bytes() {
                        let value = String::from_utf8_lossy(value).into_owned();
                        metadata
                            .annotations
                            .insert(INITIAL_EVENTS_END.into(), value);
                    }
                }
                _ => {}
            }
            Ok(())
        })
    })?;
    Ok(Bookmark {
        types: TypeMeta {
            api_version: "v1".into(),
            kind: "Pod".into(),
        },
        metadata,
    })
}

/// A `metav1.Status` (status 2, message 3, reason 4, code 6), its text cut as any other.
fn status(message: &[u8]) -> Result<Status, ProtoError> {
    let (mut outcome, mut said, mut reason, mut code) =
        (String::new(), String::new(), String::new(), 0);
    for_each_field(message, |f, v| {
        match f {
            2 => outcome = text(v, f)?,
            3 => said = text(v, f)?,
            4 => reason = text(v, f)?,
            6 => code = u16::try_from(v.varint(f)?).unwrap_or(0),
            _ => {}
        }
        Ok(())
    })?;
    let status = if outcome == "Success" {
        Status::success()
    } else {
        Status::failure(&said, &reason)
    };
    Ok(super::capped_status(status.with_code(code)))
}
