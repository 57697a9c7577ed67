use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use opc_core::clock::Clock;

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
