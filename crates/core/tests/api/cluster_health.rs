//! How current each scope's view is, and how old the stalest one is.

use std::time::{Duration, Instant};

use opc_core::cluster::{Health, Scope, ScopeHealth, WatchState};

fn scope(proved_ago: Option<u64>, now: Instant) -> ScopeHealth {
    let mut h = ScopeHealth::new(Scope::All, Duration::from_secs(20));
    h.proved = proved_ago.map(|s| now - Duration::from_secs(s));
    h
}

/// The view of one scope, as the health of all of them reads it.
fn alone(scope: ScopeHealth) -> Health {
    Health {
        scopes: vec![scope],
    }
}

#[test]
fn the_age_counts_from_the_last_proof_and_shows_once_past_the_bound() {
    let now = Instant::now();
    assert_eq!(alone(scope(None, now)).stale_for(now), None);
    assert_eq!(alone(scope(Some(20), now)).stale_for(now), None);
    assert_eq!(
        alone(scope(Some(21), now)).stale_for(now),
        Some(Duration::from_secs(21))
    );
    // Whatever the state says: a failed reconnect does not make a proved view older.
    let mut down = scope(Some(3), now);
    down.state = WatchState::Reconnecting {
        error: "refused".into(),
    };
    assert_eq!(alone(down.clone()).stale_for(now), None);
    let health = Health {
        scopes: vec![scope(Some(5), now), scope(Some(40), now), down],
    };
    assert_eq!(health.stale_for(now), Some(Duration::from_secs(40)));
    assert_eq!(health.age(now), Some(Duration::from_secs(40)));
}
