//! A text is cut to its cap as a pod or an Event is read: on a character, never inside one.

use opc_core::pod::{Capped, Interner, NAME_CAP, decode_pod};
use serde_json::json;

#[test]
fn cuts_fall_on_characters() {
    let cut = serde_json::from_value::<Capped<3>>(json!("ééé")).unwrap();
    assert_eq!(&*cut.0, "é");
    let short = serde_json::from_value::<Capped<5>>(json!("abc")).unwrap();
    assert_eq!(&*short.0, "abc");
    // A name is kept cut at its cap, which falls one byte into a character here as 4 does
    // into `日本語`.
    let name = "日本語".repeat(NAME_CAP / 9 + 1);
    let pod = json!({"metadata": {"name": name, "namespace": "shop", "uid": "u"}});
    let record = decode_pod(pod.to_string().as_bytes(), &mut Interner::default()).unwrap();
    assert_eq!(&*record.name, &name[..NAME_CAP - NAME_CAP % 3]);
}
