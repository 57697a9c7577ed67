//! Why a row's action would be refused, in its own module: what a screen lists carries it too.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::actions::Suspect;

/// Why a planned action would be refused, from the pod alone. In JSON as the words that say
/// why; read back into its kind, since only a malformed pod has those exact words.
#[derive(Debug, Clone, PartialEq, Eq, Hash, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Held {
    /// A field longer than Kubernetes allows.
    Malformed,
    /// Its scale to zero would land on a workload its references cannot prove; why.
    Unproven(String),
}

impl Held {
    /// One word for an action column.
    pub fn label(&self) -> &'static str {
        self.into()
    }
}

impl From<Suspect> for Held {
    fn from(suspect: Suspect) -> Held {
        match suspect {
            Suspect::Malformed => Held::Malformed,
            Suspect::Unproven(why) => Held::Unproven(why.to_string()),
        }
    }
}

impl fmt::Display for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Held::Malformed => write!(f, "{}", Suspect::Malformed),
            Held::Unproven(why) => f.write_str(why),
        }
    }
}

impl Serialize for Held {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Held {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(match text == Suspect::Malformed.to_string() {
            true => Held::Malformed,
            false => Held::Unproven(text),
        })
    }
}
