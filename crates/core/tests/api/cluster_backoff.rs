//! The watch loop's backoff, read from the pauses between the requests it makes against an API
//! server that keeps failing them, on tokio's paused clock.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::cluster_watch::{Answer, Server, no_streaming, settings, watching};

fn failed() -> Answer {
    Answer::status(500, "boom")
}

/// The pauses before each of the next `n` requests after the first.
async fn pauses(server: &mut Server, n: usize) -> Vec<Duration> {
    let mut last = server.next().await.at;
    let mut pauses = Vec::new();
    for _ in 0..n {
        let at = server.next().await.at;
        pauses.push(at - last);
        last = at;
    }
    pauses
}

#[tokio::test(start_paused = true)]
async fn doubles_up_to_the_cap_with_jitter_and_resets() {
    let (min, max) = (Duration::from_millis(100), Duration::from_millis(800));
    // Six failed lists, one that loads, and a failed watch.
    let mut script = vec![no_streaming()];
    script.extend(std::iter::repeat_with(failed).take(6));
    script.extend([Answer::list("1", &[]), failed()]);
    let (_cache, mut server) = watching(script, &settings(Duration::from_secs(20), min, max));
    server.next().await;
    let pauses = pauses(&mut server, 8).await;
    for (pause, step) in pauses.iter().zip([100, 200, 400, 800, 800, 800]) {
        let step = Duration::from_millis(step);
        assert!(
            *pause >= step / 2 && *pause <= step,
            "{pause:?} for {step:?}"
        );
    }
    assert_eq!(
        pauses[6],
        Duration::ZERO,
        "the list loaded: a watch at once"
    );
    assert!(pauses[7] <= min, "{:?} after the reset", pauses[7]);
}

#[tokio::test(start_paused = true)]
async fn jitter_spreads() {
    let d = Duration::from_secs(10);
    let mut script = vec![no_streaming()];
    script.extend(std::iter::repeat_with(failed).take(20));
    let (_cache, mut server) = watching(script, &settings(Duration::from_secs(20), d, d));
    server.next().await;
    let seen: BTreeSet<Duration> = pauses(&mut server, 20).await.into_iter().collect();
    assert!(seen.len() > 10, "{seen:?}");
}
