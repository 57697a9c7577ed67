//! Small accessors over objects stored as JSON.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

use crate::json::Fields;

pub fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

pub fn name(obj: &Value) -> &str {
    str_at(obj, "/metadata/name")
}

pub fn namespace(obj: &Value) -> &str {
    str_at(obj, "/metadata/namespace")
}

pub fn uid(obj: &Value) -> &str {
    str_at(obj, "/metadata/uid")
}

pub fn resource_version(obj: &Value) -> &str {
    str_at(obj, "/metadata/resourceVersion")
}

pub fn labels(obj: &Value) -> Map<String, Value> {
    obj.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

pub fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

pub fn is_terminating(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

pub fn deletion_timestamp(obj: &Value) -> Option<DateTime<Utc>> {
    let raw = obj.pointer("/metadata/deletionTimestamp")?.as_str()?;
    DateTime::parse_from_rfc3339(raw)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

pub fn deletion_grace(obj: &Value) -> Option<i64> {
    obj.pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64)
}

/// The alphabet Kubernetes draws generated name suffixes from: no vowels, no look-alikes.
pub(crate) const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The letter of [`NAME_ALPHABET`] at `n`, wrapping around it.
pub(crate) fn name_char(n: u64) -> char {
    let at = n % NAME_ALPHABET.len() as u64;
    NAME_ALPHABET
        .get(at as usize)
        .map_or('x', |&letter| char::from(letter))
}

/// The `metadata` map, created if missing (or replaced if not an object).
pub fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    obj.field("metadata").object()
}

pub fn set_meta(obj: &mut Value, key: &str, value: Value) {
    meta_mut(obj).insert(key.to_string(), value);
}

/// The controller owner reference: (apiVersion, kind, name, uid).
pub fn controller_of(obj: &Value) -> Option<(String, String, String, String)> {
    let refs = obj.pointer("/metadata/ownerReferences")?.as_array()?;
    let r = refs
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))?;
    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    Some((s("apiVersion"), s("kind"), s("name"), s("uid")))
}

pub fn owner_uids(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str).map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// A controller owner reference pointing at `owner`.
pub fn owner_ref(api_version: &str, kind: &str, owner: &Value) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "name": name(owner),
        "uid": uid(owner),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// Timestamps as the API server writes them (second precision, `Z`).
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

pub fn replicas(obj: &Value, pointer: &str) -> i64 {
    obj.pointer(pointer).and_then(Value::as_i64).unwrap_or(1)
}
