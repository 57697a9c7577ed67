//! What one kind of object (pods, nodes, pods' Warning Events) is to the lists and the watch loop,
//! which are the same for all: where its objects are listed, how they decode and where they go.

use std::sync::Mutex;
use std::time::Instant;

use kube::core::WatchEvent;
use serde::de::DeserializeOwned;

use super::{Cache, Scope, ScopeHealth, WatchState};
use crate::clock::Clock;
use crate::node::{NodeState, WireNode};
use crate::pod::{Interner, PodRecord, ProtoError, WirePod, watch_event};

/// One kind of listed and watched object, and the store it feeds.
pub(crate) trait Kind: Send + Sync + 'static {
    /// A list item's or a watch event's object, decoded straight into the fields kept.
    type Wire: DeserializeOwned + Clone + std::fmt::Debug + Send + 'static;
    /// What a complete list keeps of each object.
    type Record: Send + 'static;
    /// Shared by one list's items: pods share their strings.
    type Decoder: Default + Send;
    const RESOURCE: &'static str;
    /// A field selector the server filters by; empty for every object.
    const SELECTOR: &'static str = "";
    /// Whether the API server is asked for this kind in protobuf ([`Kind::from_proto`] reads it).
    const PROTOBUF: bool = false;

    fn record(wire: Self::Wire, decoder: &mut Self::Decoder) -> Self::Record;
    /// What tells two objects apart (a streaming list's repeats replace each other).
    fn wire_key(wire: &Self::Wire) -> &str;
    fn wire_version(wire: &Self::Wire) -> &str;
    /// One listed object's protobuf message (no envelope).
    fn from_proto(_item: &[u8]) -> Result<Self::Wire, ProtoError> {
        Err(ProtoError::Kind)
    }
    /// A protobuf watch frame into its event.
    fn proto_event(_frame: &[u8]) -> Result<WatchEvent<Self::Wire>, ProtoError> {
        Err(ProtoError::Kind)
    }

    /// A complete list of `scope`, in place of what was kept.
    fn replace(&self, scope: &Scope, records: Vec<Self::Record>);
    fn upsert(&self, wire: Self::Wire);
    fn remove(&self, wire: Self::Wire);
    /// How the watch of `scope` stands, for whoever shows it.
    fn health(&self, scope: &Scope, change: &mut dyn FnMut(&mut ScopeHealth));
    /// The view of `scope` was proved current at `at`: news only where freshness is a guard.
    fn proved(&self, _scope: &Scope, _at: Instant) {}
    /// The time the store reads: its cache's clock.
    fn clock(&self) -> Clock;
}

/// Pods, into the cache whose freshness the guards read.
pub(crate) struct Pods(pub Cache);

impl Kind for Pods {
    type Wire = WirePod;
    type Record = PodRecord;
    type Decoder = Interner;
    const RESOURCE: &'static str = "pods";
    const PROTOBUF: bool = true;

    fn record(wire: WirePod, interner: &mut Interner) -> PodRecord {
        wire.into_record(interner)
    }
    fn wire_key(wire: &WirePod) -> &str {
        wire.key()
    }
    fn wire_version(wire: &WirePod) -> &str {
        &wire.metadata.resource_version
    }
    fn from_proto(item: &[u8]) -> Result<WirePod, ProtoError> {
        WirePod::from_proto(item)
    }
    fn proto_event(frame: &[u8]) -> Result<WatchEvent<WirePod>, ProtoError> {
        watch_event(frame)
    }
    fn replace(&self, scope: &Scope, records: Vec<PodRecord>) {
        self.0.replace_scope(scope, records, self.0.clock().now());
    }
    fn upsert(&self, wire: WirePod) {
        self.0.upsert(wire, self.0.clock().now());
    }
    fn remove(&self, wire: WirePod) {
        self.0.remove(wire.key());
    }
    fn health(&self, scope: &Scope, change: &mut dyn FnMut(&mut ScopeHealth)) {
        self.0.update_health(scope, change);
    }
    fn proved(&self, scope: &Scope, at: Instant) {
        self.0.proved(scope, at);
    }
    fn clock(&self) -> Clock {
        self.0.clock()
    }
}

/// Nodes, into the cache's nodes. Their watch's health is its own: a node watch that fails
/// (no permission to read nodes) is a notice, never a reason to hold an action.
pub(crate) struct Nodes {
    pub(crate) cache: Cache,
    pub(crate) health: Mutex<ScopeHealth>,
}

impl Kind for Nodes {
    type Wire = WireNode;
    type Record = NodeState;
    type Decoder = ();
    const RESOURCE: &'static str = "nodes";

    fn record(wire: WireNode, _: &mut ()) -> NodeState {
        wire.into_state()
    }
    fn wire_key(wire: &WireNode) -> &str {
        &wire.metadata.name
    }
    fn wire_version(wire: &WireNode) -> &str {
        &wire.metadata.resource_version
    }
    fn replace(&self, _: &Scope, records: Vec<NodeState>) {
        self.cache
            .nodes()
            .replace(records, self.cache.clock().now());
    }
    fn upsert(&self, wire: WireNode) {
        self.cache
            .nodes()
            .upsert(wire.into_state(), self.cache.clock().now());
    }
    fn remove(&self, wire: WireNode) {
        self.cache
            .nodes()
            .remove(&wire.metadata.name, self.cache.clock().now());
    }
    fn health(&self, _: &Scope, change: &mut dyn FnMut(&mut ScopeHealth)) {
        let mut health = self.health.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut health);
        let why = match &health.state {
            WatchState::Reconnecting { error } => Some(error.clone()),
            WatchState::Forbidden(forbidden) => {
                Some(format!("permission denied: {}", forbidden.explained()))
            }
            _ => None,
        };
        self.cache.nodes().unreadable(why);
    }
    fn clock(&self) -> Clock {
        self.cache.clock()
    }
}
