//! Merge patch (RFC 7386), a strategic-merge approximation, and JSON patch (RFC 6902).

use serde_json::{Map, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchKind {
    Merge,
    Strategic,
    Json,
    /// Server-side apply, approximated as a merge patch.
    Apply,
}

impl PatchKind {
    pub fn from_content_type(ct: &str) -> Option<Self> {
        match ct.split(';').next().unwrap_or("").trim() {
            "application/merge-patch+json" => Some(Self::Merge),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            "application/json-patch+json" => Some(Self::Json),
            "application/apply-patch+yaml" | "application/apply-patch+json" => Some(Self::Apply),
            _ => None,
        }
    }
}

/// Apply a patch document to `target`; errors are messages for a 4xx Status.
pub fn apply(kind: PatchKind, target: &mut Value, patch: &Value) -> Result<(), String> {
    match kind {
        PatchKind::Merge | PatchKind::Apply => {
            merge(target, patch);
            Ok(())
        }
        PatchKind::Strategic => {
            strategic(target, patch, "");
            Ok(())
        }
        PatchKind::Json => json_patch(target, patch),
    }
}

/// RFC 7386: objects merge recursively, `null` deletes, everything else replaces.
pub fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(map) = target else { return };
    for (k, v) in patch {
        if v.is_null() {
            map.remove(k);
        } else {
            merge(map.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// Merge keys of the list fields the product and tests touch.
fn merge_key(field: &str) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "containerStatuses"
        | "initContainerStatuses"
        | "env"
        | "volumes"
        | "imagePullSecrets" => "name",
        "conditions" => "type",
        "ownerReferences" => "uid",
        "volumeMounts" => "mountPath",
        "ports" => "containerPort",
        _ => return None,
    })
}

/// Strategic merge: like merge patch, but keyed lists merge by their merge key,
/// `finalizers` merge as a set, and `$patch`/`$deleteFromPrimitiveList` directives work.
fn strategic(target: &mut Value, patch: &Value, _field: &str) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if patch.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut clean = patch.clone();
        clean.remove("$patch");
        *target = Value::Object(clean);
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(map) = target else { return };
    for (k, v) in patch {
        if let Some(list) = k.strip_prefix("$deleteFromPrimitiveList/") {
            delete_primitives(map, list, v);
        } else if k.starts_with('$') {
            continue;
        } else if v.is_null() {
            map.remove(k);
        } else if let (Some(key), Value::Array(items)) = (merge_key(k), v) {
            let slot = map.entry(k.clone()).or_insert(Value::Array(Vec::new()));
            merge_keyed_list(slot, items, key);
        } else if k == "finalizers" && v.as_array().is_some_and(|a| !a.is_empty()) {
            let slot = map.entry(k.clone()).or_insert(Value::Array(Vec::new()));
            union_primitives(slot, v);
        } else {
            strategic(map.entry(k.clone()).or_insert(Value::Null), v, k);
        }
    }
}

fn merge_keyed_list(slot: &mut Value, items: &[Value], key: &str) {
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    let Value::Array(list) = slot else { return };
    for item in items {
        let id = item.get(key).cloned().unwrap_or(Value::Null);
        let pos = list.iter().position(|e| e.get(key) == Some(&id));
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (pos, delete) {
            (Some(i), true) => {
                list.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => {
                if let Some(existing) = list.get_mut(i) {
                    strategic(existing, item, "");
                }
            }
            (None, false) => list.push(item.clone()),
        }
    }
}

fn union_primitives(slot: &mut Value, add: &Value) {
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    let (Value::Array(list), Some(add)) = (slot, add.as_array()) else {
        return;
    };
    for v in add {
        if !list.contains(v) {
            list.push(v.clone());
        }
    }
}

fn delete_primitives(map: &mut Map<String, Value>, field: &str, remove: &Value) {
    let Some(remove) = remove.as_array() else {
        return;
    };
    if let Some(Value::Array(list)) = map.get_mut(field) {
        list.retain(|v| !remove.contains(v));
    }
}

/// RFC 6902 with add, remove, replace, test, move and copy.
pub fn json_patch(target: &mut Value, patch: &Value) -> Result<(), String> {
    let ops = patch
        .as_array()
        .ok_or("json patch must be an array of operations")?;
    let mut work = target.clone();
    for op in ops {
        apply_op(&mut work, op)?;
    }
    *target = work;
    Ok(())
}

fn apply_op(doc: &mut Value, op: &Value) -> Result<(), String> {
    let name = op
        .get("op")
        .and_then(Value::as_str)
        .ok_or("operation has no \"op\"")?;
    let path = op
        .get("path")
        .and_then(Value::as_str)
        .ok_or("operation has no \"path\"")?;
    let value = || {
        op.get("value")
            .cloned()
            .ok_or(format!("{name} operation has no \"value\""))
    };
    match name {
        "add" => add(doc, path, value()?),
        "remove" => remove(doc, path).map(drop),
        "replace" => {
            remove(doc, path)?;
            add(doc, path, value()?)
        }
        "test" => match doc.pointer(path) {
            Some(found) if *found == value()? => Ok(()),
            _ => Err(format!("testing value {path} failed")),
        },
        "move" | "copy" => {
            let from = op
                .get("from")
                .and_then(Value::as_str)
                .ok_or("missing \"from\"")?;
            let v = if name == "move" {
                remove(doc, from)?
            } else {
                doc.pointer(from)
                    .cloned()
                    .ok_or(format!("doc is missing path: {from}"))?
            };
            add(doc, path, v)
        }
        other => Err(format!("Unexpected kind: {other}")),
    }
}

/// Split a JSON pointer into its parent pointer and unescaped last token.
fn split_pointer(path: &str) -> Result<(&str, String), String> {
    let idx = path.rfind('/').ok_or(format!("invalid path: {path:?}"))?;
    let last = path[idx + 1..].replace("~1", "/").replace("~0", "~");
    Ok((&path[..idx], last))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = split_pointer(path)?;
    let missing = || format!("doc is missing path: {path}");
    match doc.pointer_mut(parent).ok_or_else(missing)? {
        Value::Object(map) => {
            map.insert(last, value);
            Ok(())
        }
        Value::Array(list) if last == "-" => {
            list.push(value);
            Ok(())
        }
        Value::Array(list) => {
            let i: usize = last.parse().map_err(|_| missing())?;
            if i > list.len() {
                return Err(format!("add operation index out of bounds: {i}"));
            }
            list.insert(i, value);
            Ok(())
        }
        _ => Err(missing()),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, last) = split_pointer(path)?;
    let missing = || format!("doc is missing path: {path}");
    match doc.pointer_mut(parent).ok_or_else(missing)? {
        Value::Object(map) => map.remove(&last).ok_or_else(missing),
        Value::Array(list) => {
            let i: usize = last.parse().map_err(|_| missing())?;
            if i >= list.len() {
                return Err(missing());
            }
            Ok(list.remove(i))
        }
        _ => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_deletes_with_null() {
        let mut doc = json!({"metadata": {"finalizers": ["a"], "labels": {"x": "1"}}});
        merge(
            &mut doc,
            &json!({"metadata": {"finalizers": null, "labels": {"y": "2"}}}),
        );
        assert_eq!(doc, json!({"metadata": {"labels": {"x": "1", "y": "2"}}}));
    }

    #[test]
    fn json_patch_ops() {
        let mut doc = json!({"metadata": {"finalizers": ["a", "b"]}});
        let ops = json!([
            {"op": "remove", "path": "/metadata/finalizers/0"},
            {"op": "add", "path": "/metadata/annotations", "value": {}},
            {"op": "add", "path": "/metadata/annotations/x.io~1y", "value": "1"},
            {"op": "test", "path": "/metadata/finalizers", "value": ["b"]},
        ]);
        json_patch(&mut doc, &ops).unwrap();
        assert_eq!(doc["metadata"]["annotations"]["x.io/y"], "1");
        assert!(json_patch(&mut doc, &json!([{"op": "remove", "path": "/nope"}])).is_err());
    }

    #[test]
    fn strategic_merges_keyed_lists() {
        let mut doc = json!({"spec": {"containers": [{"name": "a", "image": "x"}]}});
        let p = json!({"spec": {"containers": [{"name": "a", "image": "y"}, {"name": "b"}]}});
        apply(PatchKind::Strategic, &mut doc, &p).unwrap();
        assert_eq!(doc["spec"]["containers"][0]["image"], "y");
        assert_eq!(doc["spec"]["containers"][1]["name"], "b");
    }
}
