//! The names of verbs and cause classes, as scripts and the audit log read them.

use opc_core::rules::{CauseClass, Verb};

#[test]
fn names_round_trip_through_json() {
    for verb in Verb::ALL {
        let json = serde_json::to_string(&verb).unwrap_or_default();
        assert_eq!(json, format!("\"{}\"", verb.name()));
        assert_eq!(serde_json::from_str::<Verb>(&json).ok(), Some(verb));
    }
    assert!(serde_json::from_str::<Verb>("\"reboot\"").is_err());
}

#[test]
fn every_class_has_a_distinct_camel_case_name() {
    let names: std::collections::BTreeSet<&str> =
        CauseClass::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(names.len(), CauseClass::ALL.len());
    assert!(
        names
            .iter()
            .all(|n| n.chars().next().is_some_and(char::is_lowercase))
    );
    assert_eq!(
        serde_json::to_string(&CauseClass::RegistryTls).unwrap_or_default(),
        "\"registryTLS\""
    );
}
