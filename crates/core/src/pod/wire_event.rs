//! An Event as it arrives, decoded field by field into what a cause reads: anyone who may
//! create an Event in a namespace writes all of it, up to ~1.5 MB, so nothing else is kept and
//! every string is cut while it is read.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde::de::{Deserializer, Visitor};

use super::{MESSAGE_CAP, NAME_CAP, cut, nullable};

/// A string cut to at most `N` bytes as it is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capped<const N: usize>(pub Box<str>);

impl<'de, const N: usize> Deserialize<'de> for Capped<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Cut<const N: usize>;
        impl<const N: usize> Visitor<'_> for Cut<N> {
            type Value = Capped<N>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, text: &str) -> Result<Capped<N>, E> {
                Ok(Capped(cut(text, N).into()))
            }
        }
        d.deserialize_str(Cut::<N>)
    }
}

/// The text of a capped field an Event may leave out.
pub(crate) fn field_text<const N: usize>(field: &Option<Capped<N>>) -> Option<&str> {
    field.as_ref().map(|c| &*c.0)
}

type Name = Capped<NAME_CAP>;
/// A reason or a type: short words.
type Word = Capped<128>;

/// The few fields of a core/v1 Event a cause reads (the scheduler's events.k8s.io Events are
/// served through core/v1 too).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WireEvent {
    #[serde(deserialize_with = "nullable")]
    pub metadata: EventMeta,
    pub involved_object: Involved,
    #[serde(rename = "type")]
    pub type_: Option<Word>,
    pub reason: Option<Word>,
    pub message: Option<Capped<MESSAGE_CAP>>,
    pub count: Option<i64>,
    pub series: Option<Series>,
    pub last_timestamp: Option<DateTime<Utc>>,
    pub event_time: Option<DateTime<Utc>>,
    pub first_timestamp: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Involved {
    pub kind: Option<Word>,
    pub namespace: Option<Name>,
    pub uid: Option<Capped<64>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Series {
    pub count: Option<i64>,
    pub last_observed_time: Option<DateTime<Utc>>,
}

/// Of the metadata, what a watch and a cause read; annotations, labels and managedFields go unread.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct EventMeta {
    pub namespace: Option<Name>,
    pub uid: Option<Capped<64>>,
    pub resource_version: Option<Capped<64>>,
}
