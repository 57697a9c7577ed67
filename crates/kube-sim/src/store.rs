//! The versioned object store: one resourceVersion counter, a bounded change history.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::{Value, json};

use super::meta;
use super::resources::Res;

/// Objects are ordered like etcd keys: namespace, then name.
pub type Key = (String, String);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, kept so watches can replay it and lists can rebuild old snapshots.
#[derive(Clone, Debug)]
pub struct Change {
    pub rv: u64,
    pub res: Res,
    pub kind: EventType,
    pub object: Arc<Value>,
    pub prev: Option<Arc<Value>>,
}

/// Simulated clusters started in this process so far.
static CLUSTERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub struct Store {
    rv: u64,
    objects: BTreeMap<Res, BTreeMap<Key, Value>>,
    history: VecDeque<Change>,
    history_limit: usize,
    /// Changes after this version are all retained; older versions are gone (410).
    compacted_rv: u64,
    uid_seq: u64,
}

pub const DEFAULT_HISTORY: usize = 10_000;

impl Store {
    pub fn new() -> Self {
        Self {
            rv: 1,
            objects: BTreeMap::new(),
            history: VecDeque::new(),
            history_limit: DEFAULT_HISTORY,
            compacted_rv: 1,
            // Every simulated cluster in a process draws from its own range, as real API
            // servers' random UIDs never meet.
            uid_seq: CLUSTERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) << 32,
        }
    }

    pub fn rv(&self) -> u64 {
        self.rv
    }

    pub fn compacted_rv(&self) -> u64 {
        self.compacted_rv
    }

    pub fn set_history_limit(&mut self, limit: usize) {
        self.history_limit = limit.max(1);
        self.trim();
    }

    /// Forget all history: every version before now becomes too old.
    pub fn compact(&mut self) {
        self.history.clear();
        self.compacted_rv = self.rv;
    }

    /// A fresh UID in the usual 8-4-4-4-12 hex form.
    pub fn new_uid(&mut self) -> String {
        self.uid_seq += 1;
        let n = self.uid_seq;
        let salt = u64::from(std::process::id()) ^ 0x5eed_cafe;
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            (salt as u32),
            (n >> 48) & 0xffff,
            (n >> 36) & 0xfff,
            (n >> 24) & 0xfff,
            n & 0xffff_ffff_ffff
        )
    }

    pub fn get(&self, res: Res, ns: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(&res)?
            .get(&(ns.to_string(), name.to_string()))
    }

    /// Current objects of a type, in key order, optionally in one namespace.
    pub fn list(&self, res: Res, ns: Option<&str>) -> Vec<Value> {
        let Some(map) = self.objects.get(&res) else {
            return Vec::new();
        };
        map.iter()
            .filter(|((obj_ns, _), _)| ns.is_none_or(|n| n == obj_ns))
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Current objects of a type, by reference.
    pub fn iter(&self, res: Res) -> impl Iterator<Item = &Value> {
        self.objects.get(&res).into_iter().flat_map(|m| m.values())
    }

    pub fn count(&self, res: Res) -> usize {
        self.objects.get(&res).map_or(0, BTreeMap::len)
    }

    /// The objects of a type as they were at `rv`, or None when history no longer covers it.
    pub fn snapshot_at(&self, res: Res, rv: u64) -> Option<BTreeMap<Key, Value>> {
        if rv < self.compacted_rv || rv > self.rv {
            return None;
        }
        let mut map = self.objects.get(&res).cloned().unwrap_or_default();
        for change in self.history.iter().rev().take_while(|c| c.rv > rv) {
            if change.res != res {
                continue;
            }
            let key = key_of(&change.object);
            match &change.prev {
                Some(prev) => map.insert(key, (**prev).clone()),
                None => map.remove(&key),
            };
        }
        Some(map)
    }

    /// Store a new object (metadata already filled by the caller except the version).
    pub fn insert(&mut self, res: Res, mut obj: Value) -> Value {
        let rv = self.bump();
        meta::set_meta(&mut obj, "resourceVersion", json!(rv.to_string()));
        let key = key_of(&obj);
        let prev = self
            .objects
            .entry(res)
            .or_default()
            .insert(key, obj.clone());
        let kind = if prev.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(res, kind, &obj, prev);
        obj
    }

    /// Replace an existing object, giving it a new version.
    pub fn update(&mut self, res: Res, obj: Value) -> Value {
        self.insert(res, obj)
    }

    /// Remove an object; the DELETED event carries the deletion's version.
    pub fn remove(&mut self, res: Res, ns: &str, name: &str) -> Option<Value> {
        let key = (ns.to_string(), name.to_string());
        let mut obj = self.objects.get_mut(&res)?.remove(&key)?;
        let prev = obj.clone();
        let rv = self.bump();
        meta::set_meta(&mut obj, "resourceVersion", json!(rv.to_string()));
        self.record(res, EventType::Deleted, &obj, Some(prev));
        Some(obj)
    }

    /// Changes with a version above `after`, or None if some of them were compacted away.
    pub fn changes_after(&self, after: u64) -> Option<Vec<Change>> {
        if after < self.compacted_rv {
            return None;
        }
        let start = self.history.partition_point(|c| c.rv <= after);
        Some(self.history.range(start..).cloned().collect())
    }

    fn bump(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    fn record(&mut self, res: Res, kind: EventType, obj: &Value, prev: Option<Value>) {
        self.history.push_back(Change {
            rv: self.rv,
            res,
            kind,
            object: Arc::new(obj.clone()),
            prev: prev.map(Arc::new),
        });
        self.trim();
    }

    fn trim(&mut self) {
        while self.history.len() > self.history_limit {
            if let Some(old) = self.history.pop_front() {
                self.compacted_rv = old.rv;
            }
        }
    }
}

pub fn key_of(obj: &Value) -> Key {
    (
        meta::namespace(obj).to_string(),
        meta::name(obj).to_string(),
    )
}
