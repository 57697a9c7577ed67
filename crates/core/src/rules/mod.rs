//! The chain of rules: which category an abnormal pod belongs to, and since when.

/// `Display`, `Serialize` and `Deserialize` through a type's `name()` and `ALL`: one spelling
/// everywhere, and a name this build does not know is an error, not a guess.
macro_rules! by_name {
    ($type:ty, $what:literal) => {
        impl std::fmt::Display for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl serde::Serialize for $type {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $type {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let name = String::deserialize(deserializer)?;
                <$type>::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name() == name)
                    .ok_or_else(|| serde::de::Error::custom(format!("unknown {} {name:?}", $what)))
            }
        }
    };
}

mod cause;
mod classify;
mod spec;
mod verb;

pub(crate) use cause::format_bytes;
pub use cause::{Cause, CauseClass, Evidence, cause, cause_class};
pub use classify::{Finding, classify};
pub(crate) use classify::{ON_THE_WAY, next_change};
pub use spec::{ActionKind, NamespaceFilter, RuleKind, RuleSpec};
pub use verb::Verb;

pub fn default_chain() -> Vec<RuleSpec> {
    RuleKind::ALL.map(RuleSpec::default_for).to_vec()
}

/// "3h12m", "45s", "2d4h": how long, the way the screen and reports say it.
pub fn format_age(age: chrono::Duration) -> String {
    let secs = age.num_seconds().max(0);
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m{s:02}s"),
        (0, _, _) => format!("{h}h{m:02}m"),
        _ => format!("{d}d{h}h"),
    }
}
