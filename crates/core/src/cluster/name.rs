//! A cluster's name: the kubeconfig context it was opened by, `in-cluster`, or a demo cluster.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A cluster as every key and every line of the tool names it. Cheap to clone.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClusterName(Arc<str>);

/// In JSON (the audit log, parked records) as the plain name.
impl Serialize for ClusterName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ClusterName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(ClusterName::from)
    }
}

impl ClusterName {
    /// The cluster a process runs in, reached with its service account, not a kubeconfig.
    pub const IN_CLUSTER: &'static str = "in-cluster";

    pub fn new(name: &str) -> ClusterName {
        ClusterName(name.into())
    }

    /// The kubeconfig context it was opened by, as `kubectl --context` takes it; none for
    /// the cluster a process runs in.
    pub fn context(&self) -> Option<&str> {
        Some(self.as_str()).filter(|name| *name != ClusterName::IN_CLUSTER)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for ClusterName {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for ClusterName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&ClusterName> for ClusterName {
    fn from(name: &ClusterName) -> ClusterName {
        name.clone()
    }
}

impl From<&str> for ClusterName {
    fn from(name: &str) -> ClusterName {
        ClusterName::new(name)
    }
}

impl From<String> for ClusterName {
    fn from(name: String) -> ClusterName {
        ClusterName(name.into())
    }
}

impl From<&String> for ClusterName {
    fn from(name: &String) -> ClusterName {
        ClusterName::new(name)
    }
}

impl PartialEq<str> for ClusterName {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for ClusterName {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl fmt::Display for ClusterName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ClusterName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}
