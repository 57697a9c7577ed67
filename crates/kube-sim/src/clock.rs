//! The simulated server's wall clock: the system's, or one that reads a given instant when it
//! is made and runs on with tokio's clock from there, so a test on paused time sees the
//! server's timestamps move as its own clock does.

use chrono::{DateTime, TimeDelta, Utc};
use tokio::time::Instant;

#[derive(Clone, Copy, Debug, Default)]
pub struct SimClock {
    /// The wall time it read, and tokio's instant then; none for the system's clock.
    anchor: Option<(DateTime<Utc>, Instant)>,
}

impl SimClock {
    /// A clock that reads `at` now and runs with tokio's clock (paused or not).
    pub fn starting_at(at: DateTime<Utc>) -> SimClock {
        SimClock {
            anchor: Some((at, Instant::now())),
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        match self.anchor {
            None => Utc::now(),
            Some((at, since)) => at + TimeDelta::from_std(since.elapsed()).unwrap_or_default(),
        }
    }

    /// Now, as the API server writes a timestamp.
    pub fn stamp(&self) -> String {
        crate::meta::timestamp(self.now())
    }
}
