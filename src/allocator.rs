//! glibc's allocator, tuned for a process that holds many clusters' rows for weeks: the one
//! place with `unsafe`, in the binary. Other allocators (the static musl builds) are left as
//! they are: these calls do not exist there.

/// The size from which a block gets a mapping of its own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const LARGE_BLOCK: usize = 1 << 20;

/// Give every large block (a screen's list of every row, a snapshot's line) a mapping of its
/// own, returned to the system when freed: glibc otherwise raises that threshold to the first
/// large block freed, and carves later ones from heaps that keep their pages. A heap's free top
/// is given back at twice the block size, not at 128 KiB, which under churn would give back and
/// fault in the same pages at every change. Call once, before the threads that allocate start.
pub fn large_blocks_apart() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes tuning parameters of the allocator; called before the
    // threads that allocate are started.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE_BLOCK as libc::c_int);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 2 * LARGE_BLOCK as libc::c_int);
    }
}

/// Return the free pages of every heap to the system: glibc keeps the pages of freed blocks
/// inside its heaps, so a large transient stays resident long after it is freed. Costs a walk
/// of the heaps: for the end of a burst, not per event.
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it takes no pointer and may be called
    // from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
