//! A large transient (a worker's snapshot of 5,000 rows, decoded and folded) is freed at once;
//! whether and how its pages go back to the system is the allocator's business, which the
//! binary owns. The core only says when a burst ended.

use std::sync::OnceLock;

static GIVE_BACK: OnceLock<fn()> = OnceLock::new();

/// How freed memory goes back to the system after a burst: set once, by the binary.
pub fn on_burst_end(give_back: fn()) {
    let _ = GIVE_BACK.set(give_back);
}

/// A burst of allocations was just freed: give the memory back, if the binary said how.
pub fn burst_ended() {
    if let Some(give_back) = GIVE_BACK.get() {
        give_back();
    }
}
