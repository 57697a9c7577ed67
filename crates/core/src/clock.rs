//! The one source of time for the core: wall time for what is written down or compared with
//! the API server's timestamps, and monotonic time for deadlines and sleeps.
//!
//! Both follow tokio's clock, so a test on paused time (`start_paused = true` and
//! `tokio::time::advance`) drives the wall clock too, and a test can start the wall clock at any
//! instant to play a node or worker whose clock is skewed. The product passes [`Clock::real`].

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use tokio::time::Instant;

/// Wall and monotonic time. Cheap to clone: every holder reads the same time.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    wall: Wall,
}

#[derive(Clone, Copy, Debug)]
enum Wall {
    /// The system's wall clock, moved by `skew`.
    System { skew: TimeDelta },
    /// `at` when tokio's clock read `since`, running on with tokio's clock from there.
    Anchored { at: DateTime<Utc>, since: Instant },
}

impl Default for Clock {
    fn default() -> Self {
        Clock::real()
    }
}

impl Clock {
    /// The system's clocks, as the product runs.
    pub fn real() -> Self {
        Clock {
            wall: Wall::System {
                skew: TimeDelta::zero(),
            },
        }
    }

    /// A clock whose wall time reads `at` now and then advances with tokio's clock (paused
    /// or not): tests set the date a scenario needs without depending on today's.
    pub fn starting_at(at: DateTime<Utc>) -> Self {
        Clock {
            wall: Wall::Anchored {
                at,
                since: Instant::now(),
            },
        }
    }

    /// This clock with its wall time moved by `by`: a worker whose clock runs ahead of
    /// (positive) or behind (negative) the API server's.
    pub fn skewed(self, by: TimeDelta) -> Self {
        let wall = match self.wall {
            Wall::System { skew } => Wall::System { skew: skew + by },
            Wall::Anchored { at, since } => Wall::Anchored { at: at + by, since },
        };
        Clock { wall }
    }

    pub fn now(&self) -> DateTime<Utc> {
        match self.wall {
            Wall::System { skew } => Utc::now() + skew,
            Wall::Anchored { at, since } => {
                let elapsed = TimeDelta::from_std(since.elapsed()).unwrap_or(TimeDelta::MAX);
                at.checked_add_signed(elapsed)
                    .unwrap_or(DateTime::<Utc>::MAX_UTC)
            }
        }
    }

    /// Monotonic time now, on tokio's clock (paused in tests that pause it), as a standard
    /// `Instant` so that deadlines compare with any other.
    pub fn instant(&self) -> std::time::Instant {
        Instant::now().into_std()
    }

    /// How long until the wall clock reads `at`; zero when it is already past.
    pub fn until(&self, at: DateTime<Utc>) -> Duration {
        (at - self.now()).to_std().unwrap_or(Duration::ZERO)
    }

    pub async fn sleep(&self, pause: Duration) {
        tokio::time::sleep(pause).await
    }
}
