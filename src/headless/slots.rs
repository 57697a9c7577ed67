//! Which connections the endpoints keep open. There is always room for a new one: the oldest
//! of its address, or of all, is closed to make room, so clients that connect and hold on
//! cannot keep the kubelet's probe out.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

/// Connections served at once; Prometheus and two probes need a handful.
pub(crate) const MAX_CONNECTIONS: usize = 32;
/// Connections one address keeps: a single client cannot push everyone else out.
pub(crate) const PER_PEER: usize = 8;
/// Watch streams held at once, apart from the connections above so they never push a probe
/// out. Past this the oldest stream ends; its client resumes where it was.
pub(crate) const MAX_STREAMS: usize = 256;
/// Watch streams one client (as the service proxy names it in `X-Forwarded-For`) holds: its
/// streams push out its own oldest, never another's.
pub(crate) const STREAMS_PER_CLIENT: usize = 8;

struct Open {
    peer: IpAddr,
    close: oneshot::Sender<()>,
}

/// The open connections, oldest first (ids count up).
#[derive(Default)]
struct Table {
    next: u64,
    open: BTreeMap<u64, Open>,
}

impl Table {
    /// The connection a new one from `peer` replaces, if the new one needs room.
    fn to_close(&self, peer: IpAddr, per_peer: usize, max: usize) -> Option<u64> {
        let mut own = self.open.iter().filter(|(_, o)| o.peer == peer);
        if own.clone().count() >= per_peer {
            return own.next().map(|(id, _)| *id);
        }
        if self.open.len() >= max {
            return self.open.keys().next().copied();
        }
        None
    }
}

/// The open connections of one listener: at most `per_peer` from one address, `max` in all.
#[derive(Clone)]
pub struct Slots {
    table: Arc<Mutex<Table>>,
    per_peer: usize,
    max: usize,
}

impl Slots {
    pub fn new(per_peer: usize, max: usize) -> Slots {
        Slots {
            table: Arc::default(),
            per_peer: per_peer.max(1),
            max: max.max(1),
        }
    }

    /// A slot for a new connection from `peer`, closing an older one if room is needed.
    pub fn admit(&self, peer: IpAddr) -> Slot {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(id) = table.to_close(peer, self.per_peer, self.max)
            && let Some(old) = table.open.remove(&id)
        {
            tracing::debug!(
                "closing the oldest connection from {} to make room",
                old.peer
            );
            // Its task may have ended already; then there is nothing to close.
            let _ = old.close.send(());
        }
        let id = table.next;
        table.next += 1;
        let (close, closed) = oneshot::channel();
        table.open.insert(id, Open { peer, close });
        Slot {
            id,
            table: self.table.clone(),
            closed,
        }
    }
}

/// A connection's place; given back when dropped.
pub struct Slot {
    id: u64,
    table: Arc<Mutex<Table>>,
    /// Resolves when the connection must close to make room for a newer one.
    pub closed: oneshot::Receiver<()>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        table.open.remove(&self.id);
    }
}
