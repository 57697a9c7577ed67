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

/// The size from which a block gets a mapping of its own.
const LARGE_BLOCK: usize = 1 << 20;

/// Give every large block (a screen's list of every row, a snapshot's line) a mapping of its
/// own, returned to the system when freed. glibc otherwise raises that threshold to the size
/// of the first large block freed, and later ones are carved from heaps that keep their pages
/// for good. Fixing it also fixes when a heap's free top is given back: at twice the block
/// size, as glibc's own adjustment would set it, not at its first 128 KiB, which would give
/// back and fault in again the same pages at every change under churn. Call once, before the
/// work starts.
pub fn large_blocks_apart() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes tuning parameters of the allocator; called before the
    // threads that allocate are started.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE_BLOCK as libc::c_int);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 2 * LARGE_BLOCK as libc::c_int);
    }
}
