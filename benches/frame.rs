//! One TUI frame at scale: 150,000 pods of which about 15,000 abnormal (budget: 2 ms, so the
//! screen keeps up with keys and changes), beside what one cache change costs the screen: the
//! findings read from the cache (copied out of the index the TUI's cache keeps, beside
//! classifying every pod as a cache without the index does), then sorted and filtered by the
//! screen.
//!
//! `cargo bench --bench frame [-- PODS]` (default 150,000).

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use opc_core::cluster::ClusterName;
use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::Utc;
use kube_sim::generate::realistic_pod;
use opc_core::clock::Clock;
use opc_core::cluster::{Cache, Scope};
use opc_core::config::UiConfig;
use opc_core::pod::{Interner, decode_pod};
use opc_core::rules::{self, default_chain};
use ops_pod_cleaner::ui::{ClusterLine, Event, Snapshot, State, WatchLine, draw, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn main() {
    let pods: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(150_000);
    let now = Utc::now();
    let mut interner = Interner::default();
    let records: Vec<_> = (0..pods)
        .map(|i| {
            decode_pod(
                &serde_json::to_vec(&realistic_pod(i, now)).expect("json"),
                &mut interner,
            )
            .expect("pod")
        })
        .collect();
    let chain = default_chain();
    // The TUI's cache keeps the findings indexed under its chain; without the index, every
    // pod would be classified per frame.
    let indexed = Cache::for_cluster(
        ClusterName::default(),
        chain.clone(),
        Clock::starting_at(now),
    );
    indexed.replace_scope(&Scope::All, records, now);

    let (classify, _) = best(5, || {
        indexed.fold(0usize, |n, pod| {
            n + usize::from(rules::classify(pod, &chain, now).is_some())
        })
    });
    // As the TUI lists them: each row shares the cache's record.
    let (read, findings) = best(5, || indexed.listed());
    let abnormal = findings.len();
    let mut state = State::new(
        &ClusterName::new("bench"),
        "all namespaces",
        chain.clone(),
        UiConfig::default(),
    );
    update(&mut state, Event::Resize { table_height: 48 });
    let snapshot = |findings| {
        Event::Snapshot(Snapshot {
            findings,
            total_pods: pods,
            clusters: vec![ClusterLine {
                watch: WatchLine::Synced,
                pods,
                ..ClusterLine::listing(&ClusterName::new("bench"))
            }],
            at: now,
            // As the TUI reads one cluster: straight from its index.
            in_default_order: true,
        })
    };
    let (sort, _) = best(5, || update(&mut state, snapshot(findings.clone())));
    // The busiest category is the one on screen.
    update(
        &mut state,
        Event::Key(opc_core::config::KeyBinding::parse("3").expect("key")),
    );

    let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
    let frames = 500;
    let mut slowest = Duration::ZERO;
    let start = Instant::now();
    for _ in 0..frames {
        let one = Instant::now();
        terminal.draw(|f| draw(&state, f)).expect("draw");
        slowest = slowest.max(one.elapsed());
    }
    let mean = start.elapsed() / frames;
    black_box(terminal.backend().buffer());
    println!("{pods} pods, {abnormal} abnormal; frame 200x60 over {frames} frames");
    println!(
        "frame: mean {:.3} ms, slowest {:.3} ms",
        ms(mean),
        ms(slowest)
    );
    println!(
        "per cache change: findings from the index {:.1} ms (classifying all pods instead: {:.1} ms), sort and filter findings {:.1} ms",
        ms(read),
        ms(classify),
        ms(sort)
    );
}

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut fastest = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let value = f();
        fastest = fastest.min(start.elapsed());
        last = Some(value);
    }
    (fastest, last.expect("at least one run"))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
