//! One TUI frame at scale: 150,000 pods of which about 15,000 abnormal (SPEC §8: ≤ 2 ms),
//! beside what one cache change costs the screen (classify every pod, sort the findings).
//!
//! `cargo bench --bench frame [-- PODS]` (default 150,000).

use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::Utc;
use ops_pod_cleaner::cluster::{Cache, Scope};
use ops_pod_cleaner::config::UiConfig;
use ops_pod_cleaner::pod::{Interner, decode_pod};
use ops_pod_cleaner::rules::default_chain;
use ops_pod_cleaner::sim::generate::realistic_pod;
use ops_pod_cleaner::ui::{Event, Snapshot, State, WatchLine, draw, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn main() {
    let pods: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(150_000);
    let now = Utc::now();
    let mut interner = Interner::default();
    let records = (0..pods)
        .map(|i| {
            decode_pod(
                &serde_json::to_vec(&realistic_pod(i, now)).expect("json"),
                &mut interner,
            )
            .expect("pod")
        })
        .collect();
    let cache = Cache::new();
    cache.replace_scope(&Scope::All, records, now);
    let chain = default_chain();

    let (classify, findings) = best(5, || cache.findings(&chain, now));
    let abnormal = findings.len();
    let mut state = State::new(
        "bench",
        "all namespaces",
        chain.clone(),
        UiConfig::default(),
    );
    update(&mut state, Event::Resize { table_height: 48 });
    let snapshot = |findings| {
        Event::Snapshot(Snapshot {
            findings,
            total_pods: pods,
            watch: WatchLine::Synced,
            at: now,
        })
    };
    let (sort, _) = best(5, || update(&mut state, snapshot(findings.clone())));
    // The busiest category is the one on screen.
    update(
        &mut state,
        Event::Key(ops_pod_cleaner::config::KeyBinding::parse("3").expect("key")),
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
        "per cache change: classify all pods {:.1} ms, sort and filter findings {:.1} ms",
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
