//! The chain of rules: which category an abnormal pod belongs to, and since when.

mod spec;

pub use spec::{ActionKind, NamespaceFilter, RuleKind, RuleSpec};
