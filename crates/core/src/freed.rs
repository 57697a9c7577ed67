//! Giving freed memory back to the system after a burst: glibc's allocator keeps the pages of
//! freed blocks inside its heaps, so a large transient (a worker's snapshot of 5,000 rows,
//! decoded and folded) stays resident long after it is freed.

/// Return the free pages of every heap to the system. Costs a walk of the heaps: call it
/// after a burst, not per event.
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it takes no pointer and may be called
    // from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
