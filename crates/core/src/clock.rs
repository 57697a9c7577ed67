//! The one source of time for the core: wall time for what is written down or compared with
//! the API server's timestamps, and monotonic time for deadlines and sleeps.
//!
//! Both follow tokio's clock, so a test on paused time (`start_paused = true` and
//! `tokio::time::advance`) drives the wall clock too, and a test can start the wall clock at
//! any instant to play a node or worker whose clock is skewed. The product passes
//! [`Clock::real`].

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

    /// Wall time now.
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

    /// Sleeps `pause` on tokio's clock.
    pub async fn sleep(&self, pause: Duration) {
        tokio::time::sleep(pause).await
    }

    /// Sleeps until `at` (read from [`Clock::instant`]) on tokio's clock.
    pub async fn sleep_until(&self, at: std::time::Instant) {
        tokio::time::sleep_until(Instant::from_std(at)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noon() -> DateTime<Utc> {
        "2026-03-01T12:00:00Z".parse().unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn anchored_wall_time_follows_paused_time() {
        let clock = Clock::starting_at(noon());
        assert_eq!(clock.now(), noon());
        let before = clock.instant();
        tokio::time::advance(Duration::from_secs(90)).await;
        assert_eq!(clock.now(), noon() + TimeDelta::seconds(90));
        assert_eq!(clock.instant() - before, Duration::from_secs(90));
    }

    #[tokio::test(start_paused = true)]
    async fn sleeping_moves_both_clocks() {
        let clock = Clock::starting_at(noon());
        clock.sleep(Duration::from_secs(30)).await;
        assert_eq!(clock.now(), noon() + TimeDelta::seconds(30));
    }

    #[tokio::test(start_paused = true)]
    async fn skew_moves_wall_time_only() {
        let ahead = Clock::starting_at(noon()).skewed(TimeDelta::minutes(5));
        assert_eq!(ahead.now(), noon() + TimeDelta::minutes(5));
        assert_eq!(ahead.until(noon()), Duration::ZERO, "already past");
        assert_eq!(
            ahead.until(noon() + TimeDelta::minutes(6)),
            Duration::from_secs(60)
        );
    }

    #[test]
    fn real_clock_reads_the_system_wall_clock() {
        let before = Utc::now();
        let read = Clock::real().now();
        assert!(before <= read && read <= Utc::now());
        let behind = Clock::real().skewed(TimeDelta::hours(-1)).now();
        assert!(behind < before);
    }
}
