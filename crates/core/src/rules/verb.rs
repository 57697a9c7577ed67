//! The one list of action names. The audit log's `action` field, log lines, the screen's memory of
//! refused actions and the config's `action:` values all spell a verb through [`Verb::name`].

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
