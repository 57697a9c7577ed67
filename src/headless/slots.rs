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

#[derive(Clone)]
pub(crate) struct Slots {
    table: Arc<Mutex<Table>>,
    per_peer: usize,
    max: usize,
}

impl Slots {
    pub(crate) fn new(per_peer: usize, max: usize) -> Slots {
        Slots {
            table: Arc::default(),
            per_peer: per_peer.max(1),
            max: max.max(1),
        }
    }

    /// A slot for a new connection from `peer`, closing an older one if room is needed.
    pub(crate) fn admit(&self, peer: IpAddr) -> Slot {
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
pub(crate) struct Slot {
    id: u64,
    table: Arc<Mutex<Table>>,
    /// Resolves when the connection must close to make room for a newer one.
    pub(crate) closed: oneshot::Receiver<()>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        table.open.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    fn must_close(slot: &mut Slot) -> bool {
        slot.closed.try_recv().is_ok()
    }

    #[test]
    fn one_address_over_its_share_replaces_its_own_oldest() {
        let slots = Slots::new(2, 10);
        let mut a1 = slots.admit(ip(1));
        let mut b1 = slots.admit(ip(2));
        let mut a2 = slots.admit(ip(1));
        let mut a3 = slots.admit(ip(1));
        assert!(must_close(&mut a1), "the oldest of 10.0.0.1 makes room");
        assert!(!must_close(&mut a2) && !must_close(&mut a3));
        assert!(!must_close(&mut b1), "another address is left alone");
    }

    #[test]
    fn a_full_server_replaces_the_oldest_of_all() {
        let slots = Slots::new(4, 3);
        let mut first = slots.admit(ip(1));
        let mut second = slots.admit(ip(2));
        let mut third = slots.admit(ip(3));
        let mut fourth = slots.admit(ip(4));
        assert!(must_close(&mut first));
        for slot in [&mut second, &mut third, &mut fourth] {
            assert!(!must_close(slot));
        }
    }

    #[test]
    fn a_closed_connection_gives_its_slot_back() {
        let slots = Slots::new(2, 2);
        let a1 = slots.admit(ip(1));
        let mut b1 = slots.admit(ip(2));
        drop(a1);
        let mut c1 = slots.admit(ip(3));
        assert!(!must_close(&mut b1), "room was free: nobody is closed");
        assert!(!must_close(&mut c1));
    }
}
