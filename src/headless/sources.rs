//! What the endpoints read from, and how the feed serves it: the one place the server and
//! the feed both read, so neither needs the other's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::watch;

use super::metrics::stale_past;
use opc_core::actions::PastAction;
use opc_core::cluster::{CacheReader, Health};
use opc_core::report::LiveReport;
use opc_core::worker::{Counters, WorkerStatus};

#[derive(Clone)]
pub struct Sources {
    /// Read-only: a scrape never takes the lock the watches write under.
    pub cache: CacheReader,
    pub max_stale: Duration,
    pub counters: Arc<Counters>,
    pub worker: watch::Receiver<WorkerStatus>,
    pub leader: watch::Receiver<bool>,
    /// When serving began: the worker's first pass is expected within the stall bound of it.
    pub started: DateTime<Utc>,
    /// The automatic actions sent lately, for `/v1/`'s worker status.
    pub recent: watch::Receiver<Vec<PastAction>>,
    pub fleet: FleetSettings,
    /// The restart report as it stands, for `/v1/report`.
    pub restarts: Option<LiveReport>,
}

impl Sources {
    /// The worker as it last reported, blocked by a stale view: the worker re-reads staleness
    /// between passes, while the guard before every action reads it live, and so does this.
    pub(crate) fn worker_now(&self, health: &Health, now: Instant) -> WorkerStatus {
        let mut worker = self.worker.borrow().clone();
        if worker.blocked.is_none() {
            worker.blocked = stale_past(health, self.max_stale, now);
        }
        worker
    }
}

/// How the feed publishes and how long a stream lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FleetSettings {
    /// At most one publication per this: a burst of changes costs one diff.
    pub coalesce: Duration,
    /// An idle stream hears a heartbeat at least this often.
    pub heartbeat: Duration,
    /// Frames kept for a client that resumes.
    pub ring: usize,
    /// Frames queued for one client; one that falls further behind gets a snapshot.
    pub queue: usize,
    /// A stream ends after this; the client resumes from its sequence number.
    pub stream_lifetime: Duration,
    /// The longest line served: a snapshot over it is refused with a 413 that says so.
    pub max_line: usize,
}

impl Default for FleetSettings {
    fn default() -> FleetSettings {
        FleetSettings {
            coalesce: Duration::from_millis(500),
            heartbeat: Duration::from_secs(5),
            ring: 4096,
            queue: 1024,
            stream_lifetime: Duration::from_secs(15 * 60),
            max_line: opc_core::fleet::MAX_LINE,
        }
    }
}
