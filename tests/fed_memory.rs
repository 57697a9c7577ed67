//! A cluster read through its worker costs the screen what its abnormal pods cost: each row is
//! kept once, compact, as the screen lists it, and what rows repeat is shared. A counting
//! allocator measures what a client keeps of a worker's snapshot of realistic rows, and what
//! the screen's copy of them adds.

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::Utc;
use kube_sim::generate::realistic_pod;
use opc_core::cluster::{Cache, ClusterName, Listed};
use opc_core::fleet::{Epoch, FindingRow, FleetView, Frame, Limits, LineReader, Publisher};
use opc_core::pod::WirePod;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call goes to the system allocator unchanged; only sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// One in ten realistic pods is abnormal.
const PODS: usize = 20_000;
/// Bytes a row may cost in the client's view: its own texts in one piece, what it shares with
/// other rows of its worker held once, the cause's words left with the worker. Before, a row
/// was held as the served row and again as the screen's, with its cause: 2,138 bytes; then
/// once, as a watch cache's record: 564.
const VIEW_BUDGET: usize = 260;
/// Bytes the screen's own list may add per row: a pointer to the shared row (72 when it
/// listed a watch cache's record).
const SCREEN_BUDGET: usize = 16;

#[test]
fn a_fed_row_is_kept_once_and_its_repeated_texts_are_shared() {
    let now = Utc::now();
    let cache = Cache::new();
    for i in 0..PODS {
        let wire: WirePod = serde_json::from_value(realistic_pod(i, now)).unwrap();
        cache.upsert(wire, now);
    }
    let rows: Vec<FindingRow> = (cache.findings().iter())
        .map(|found| FindingRow::of(found, now))
        .collect();
    let count = rows.len();
    assert!(
        count >= PODS / 20,
        "realistic pods are often abnormal: {count}"
    );
    let mut publisher = Publisher::new(Epoch(1), now);
    publisher.findings(rows);
    let mut line = serde_json::to_vec(&Frame::Snapshot(publisher.snapshot())).unwrap();
    line.push(b'\n');
    drop((publisher, cache));

    let before = live();
    let mut view = FleetView::new(ClusterName::new("east"), count);
    let mut reader = LineReader::new(Limits::default());
    for frame in reader.feed(&line).unwrap() {
        view.apply(frame).unwrap();
    }
    let kept = (live() - before) / count;
    assert_eq!(view.len(), count);

    let before = live();
    let screen: Vec<Listed> = view.findings().collect();
    let listed = (live() - before) / count;
    assert!(screen.iter().all(|a| a.cluster().as_str() == "east"));

    println!("{count} rows: {kept} bytes each in the view, {listed} more on screen");
    assert!(kept <= VIEW_BUDGET, "{kept} bytes a row in the view");
    assert!(listed <= SCREEN_BUDGET, "{listed} bytes a row on screen");
}
