//! Writing into JSON objects without `value[key] = …`, which panics when `value` is neither an
//! object nor null. Bodies come from clients and may be any JSON: the simulator answers them,
//! it does not crash the demo or a test's server task.

use serde_json::{Map, Value};

pub(crate) trait Fields {
    /// The object this value is, after replacing it with an empty one if it is not.
    fn object(&mut self) -> &mut Map<String, Value>;

    /// `self[key]` for writing: a value that is not an object becomes an empty one first, as
    /// null does under `IndexMut`; a missing key is added as null.
    fn field(&mut self, key: &str) -> &mut Value;

    /// `self[key] = value`, on the same terms as [`Fields::field`].
    fn set(&mut self, key: &str, value: Value) {
        *self.field(key) = value;
    }

    /// `set(key, value)` on the value the JSON `pointer` names (e.g. a pod's first container);
    /// nothing where there is none, where indexing would panic.
    fn set_in(&mut self, pointer: &str, key: &str, value: Value);
}

impl Fields for Value {
    fn object(&mut self) -> &mut Map<String, Value> {
        match self {
            Value::Object(map) => map,
            other => {
                // Once: the value is an object now.
                *other = Value::Object(Map::new());
                other.object()
            }
        }
    }

    fn field(&mut self, key: &str) -> &mut Value {
        self.object().entry(key).or_insert(Value::Null)
    }

    fn set_in(&mut self, pointer: &str, key: &str, value: Value) {
        if let Some(target) = self.pointer_mut(pointer) {
            target.set(key, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Fields;

    #[test]
    fn a_field_of_a_value_that_is_not_an_object_replaces_it_instead_of_panicking() {
        let mut pod = json!({"spec": "not an object"});
        pod.field("spec").set("nodeName", json!("node-1"));
        assert_eq!(pod, json!({"spec": {"nodeName": "node-1"}}));
    }

    #[test]
    fn a_field_keeps_what_the_object_has() {
        let mut pod = json!({"spec": {"hostname": "a"}});
        pod.field("spec").set("subdomain", json!("s"));
        assert_eq!(pod, json!({"spec": {"hostname": "a", "subdomain": "s"}}));
    }
}
