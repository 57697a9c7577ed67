//! The one list of action names. The audit log's `action` field, log lines, the screen's
//! memory of refused actions and the config's `action:` values all spell a verb through
//! [`Verb::name`].

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What an [`crate::actions::Action`] does, without its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verb {
    Delete,
    ForceDelete,
    Evict,
    ScaleToZero,
    UndoScale,
    RemoveFinalizers,
}

impl Verb {
    pub const ALL: [Verb; 6] = [
        Verb::Delete,
        Verb::ForceDelete,
        Verb::Evict,
        Verb::ScaleToZero,
        Verb::UndoScale,
        Verb::RemoveFinalizers,
    ];

    /// The wire name: the README's audit schema lists these, so they never change.
    pub fn name(self) -> &'static str {
        match self {
            Verb::Delete => "delete",
            Verb::ForceDelete => "forceDelete",
            Verb::Evict => "evict",
            Verb::ScaleToZero => "scaleToZero",
            Verb::UndoScale => "undoScale",
            Verb::RemoveFinalizers => "removeFinalizers",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Verb> {
        Verb::ALL.into_iter().find(|v| v.name() == name)
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Verb {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Verb {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Verb, D::Error> {
        let name = String::deserialize(deserializer)?;
        Verb::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown action {name:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::Verb;

    #[test]
    fn names_round_trip_through_json() {
        for verb in Verb::ALL {
            let json = serde_json::to_string(&verb).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", verb.name()));
            assert_eq!(serde_json::from_str::<Verb>(&json).ok(), Some(verb));
        }
        assert!(serde_json::from_str::<Verb>("\"reboot\"").is_err());
    }
}
