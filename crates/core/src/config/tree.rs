//! A YAML document as a tree of positioned nodes.
//!
//! Why not derive `Deserialize` on the config structs: serde errors carry a position but not
//! the key path, and semantic checks (durations, cron, duplicate rules) happen after parsing.
//! Walking our own tree gives every message a file, line, column and key path.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Location, MessageFormatter, Spanned, UserMessageFormatter};

use super::error::{ConfigError, Problem};
use super::secret::mask_url;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub value: Value,
    /// Line and column, both 1-based (0 when unknown).
    pub pos: Location,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Key, Node)>),
}

/// A mapping key; non-string scalar keys are kept as their text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Key {
    pub name: String,
    pub pos: Location,
}

impl Value {
    /// How a value is described in "found ..." messages. Text that looks like a URL is shown
    /// masked wherever it was written: a webhook pasted under the wrong key is still a secret.
    pub fn describe(&self) -> String {
        match self {
            Value::Bool(b) => format!("the boolean {b}"),
            Value::Int(i) => format!("the number {i}"),
            Value::Float(f) => format!("the number {f}"),
            Value::Str(s) if s.contains("://") => {
                format!(
                    "{} (the rest is not shown: it may hold a token)",
                    mask_url(s)
                )
            }
            Value::Str(s) => format!("{s:?}"),
            Value::Null | Value::Seq(_) | Value::Map(_) => self.kind().into(),
        }
    }

    /// What kind of value this is, without the value: for keys that hold secrets.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "nothing (null)",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

pub(crate) fn parse(text: &str, origin: &str) -> super::Result<Node> {
    let spanned = serde_saphyr::from_str(text).map_err(|e| yaml_error(&e, origin))?;
    Ok(node(spanned))
}

/// A YAML syntax error in our `file:line:col: message` form.
fn yaml_error(err: &serde_saphyr::Error, origin: &str) -> ConfigError {
    let plain = err.without_snippet();
    let text = UserMessageFormatter.format_message(plain);
    // The renderer would neutralize control characters; we bypass it, so do it here.
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    ConfigError {
        at: plain.location().and_then(line_and_column),
        ..ConfigError::of_file(origin, Problem::Yaml(text))
    }
}

/// Where a message points, when the parser knew.
pub(crate) fn line_and_column(at: Location) -> Option<(u64, u64)> {
    (at.line() > 0).then_some((at.line(), at.column()))
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

fn node(spanned: Spanned<Value>) -> Node {
    Node {
        value: spanned.value,
        pos: spanned.referenced,
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Int(v.into()))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        i128::try_from(v)
            .map(Value::Int)
            .map_err(|_| E::custom("number too large"))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_owned()))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Value>>()? {
            items.push(node(item));
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<Value>>()? {
            let value = map.next_value::<Spanned<Value>>()?;
            let key = Key {
                name: key_text(&key.value),
                pos: key.referenced,
            };
            entries.push((key, node(value)));
        }
        Ok(Value::Map(entries))
    }
}

/// Non-string keys (`1:`, `true:`) become their text so the "unknown key" check reports them.
fn key_text(value: &Value) -> String {
    match value {
        Value::Str(s) => s.clone(),
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Seq(_) | Value::Map(_) => "<complex key>".into(),
    }
}
