//! The one list of action names. The audit log's `action` field, log lines, the screen's
//! memory of refused actions and the config's `action:` values all spell a verb through
//! [`Verb::name`].

/// What an [`crate::actions::Action`] does, without its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, strum::IntoStaticStr)]
#[strum(serialize_all = "camelCase")]
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
        self.into()
    }
}

by_name!(Verb, "action");

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
