//! What `kubectl kustomize` renders from the layout under `assets/deploy`, for the features
//! that layout uses, so the tests can check each install without kubectl: `resources` (files
//! and directories), `components`, `configMapGenerator` (files, labels, no name hash) and
//! `patches` whose file is a list of JSON6902 operations on one kind and name. Anything else
//! in a kustomization fails the build here rather than being silently ignored.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// The keys `build` understands; any other key in a kustomization is an error.
const UNDERSTOOD: [&str; 6] = [
    "apiVersion",
    "kind",
    "resources",
    "components",
    "configMapGenerator",
    "patches",
];

pub fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/deploy")
}

/// The YAML documents of one file.
pub fn documents(file: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.split("\n---\n")
        .map(|doc| {
            serde_saphyr::from_str::<Value>(doc)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        })
        .collect()
}

/// The `kustomization.yaml` of `dir`, parsed.
pub fn kustomization(dir: &Path) -> Value {
    documents(&dir.join("kustomization.yaml")).remove(0)
}

/// The list under `key` as strings (none: empty).
pub fn list(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// The objects `kubectl kustomize dir` prints.
pub fn build(dir: &Path) -> Vec<Value> {
    build_with(dir, &[])
}

/// As `build`, with `extra` components added to the kustomization's own, as a kustomization
/// of one's own that lists `dir` and them would.
pub fn build_with(dir: &Path, extra: &[PathBuf]) -> Vec<Value> {
    let k = kustomization(dir);
    assert_eq!(k["kind"], "Kustomization", "{}", dir.display());
    let mut objects = accumulate(dir, &k);
    let own = list(&k, "components").into_iter().map(|c| dir.join(c));
    for component in own.chain(extra.iter().cloned()) {
        let c = kustomization(&component);
        assert_eq!(c["kind"], "Component", "{}", component.display());
        objects.extend(accumulate(&component, &c));
        patch(&component, &c, &mut objects);
    }
    patch(dir, &k, &mut objects);
    objects
}

/// A kustomization's resources (recursively) and generated ConfigMaps, before its patches.
fn accumulate(dir: &Path, k: &Value) -> Vec<Value> {
    for key in k.as_object().unwrap().keys() {
        assert!(
            UNDERSTOOD.contains(&key.as_str()),
            "{}: `{key}` is not understood by the test's renderer",
            dir.display()
        );
    }
    let mut objects = Vec::new();
    for resource in list(k, "resources") {
        let path = dir.join(&resource);
        if path.is_dir() {
            objects.extend(build(&path));
        } else {
            objects.extend(documents(&path));
        }
    }
    for generator in k["configMapGenerator"].as_array().into_iter().flatten() {
        objects.push(generated_config_map(dir, generator));
    }
    objects
}

fn generated_config_map(dir: &Path, generator: &Value) -> Value {
    let options = &generator["options"];
    assert_eq!(
        options["disableNameSuffixHash"], true,
        "a hashed name would need the references rewritten: {generator}"
    );
    let mut data = Map::new();
    for file in list(generator, "files") {
        let text = std::fs::read_to_string(dir.join(&file)).unwrap();
        data.insert(file, Value::String(text));
    }
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": generator["name"],
            "namespace": generator["namespace"],
            "labels": options["labels"],
        },
        "data": data,
    })
}

/// Applies a kustomization's patches to the objects it targets; each must hit one at least.
fn patch(dir: &Path, k: &Value, objects: &mut [Value]) {
    for p in k["patches"].as_array().into_iter().flatten() {
        let target = &p["target"];
        let file = dir.join(p["path"].as_str().expect("patches come from files"));
        let ops = documents(&file).remove(0);
        let mut hit = 0;
        for object in objects
            .iter_mut()
            .filter(|o| o["kind"] == target["kind"] && o["metadata"]["name"] == target["name"])
        {
            for op in ops.as_array().expect("a list of JSON6902 operations") {
                apply(object, op);
            }
            hit += 1;
        }
        assert!(hit > 0, "{} patches nothing: {target}", file.display());
    }
}

/// One JSON6902 operation (add, replace, remove) on `doc`.
pub fn apply(doc: &mut Value, op: &Value) {
    let path = op["path"].as_str().unwrap();
    assert!(!path.contains('~'), "escapes are not needed here: {path}");
    let (parent, last) = path.rsplit_once('/').unwrap();
    let parent = doc
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("{path}: no such parent"));
    let value = op["value"].clone();
    match (op["op"].as_str().unwrap(), parent) {
        ("add", Value::Array(items)) if last == "-" => items.push(value),
        ("add", Value::Array(items)) => items.insert(last.parse().unwrap(), value),
        ("replace", Value::Array(items)) => items[last.parse::<usize>().unwrap()] = value,
        ("remove", Value::Array(items)) => {
            items.remove(last.parse().unwrap());
        }
        ("add", Value::Object(map)) => {
            map.insert(last.to_string(), value);
        }
        ("replace", Value::Object(map)) => {
            let old = map.get_mut(last);
            *old.unwrap_or_else(|| panic!("{path}: nothing to replace")) = value;
        }
        ("remove", Value::Object(map)) => {
            map.remove(last)
                .unwrap_or_else(|| panic!("{path}: nothing to remove"));
        }
        (other, _) => panic!("{other} on {path} is not supported"),
    }
}
