//! How much memory this process needs for the cluster it watches, against what it is given.
//!
//! The budget holds at every moment, the first list included (lists are decoded as they
//! stream in). A cgroup limit under it is said at start, before the OOM killer says it.

/// Fixed cost: runtime, HTTP and TLS stacks, allocator slack, one item being decoded.
const BASE: u64 = 40 * 1_000_000;
const PER_POD: u64 = 2_000;

/// The memory budget for `pods` pods, in bytes.
pub fn budget(pods: usize) -> u64 {
    BASE + PER_POD * pods as u64
}

/// The line said at start: the pods, the budget, the limit if any; whether the limit is short.
pub fn describe(pods: usize, limit: Option<u64>) -> (String, bool) {
    let need = budget(pods);
    let mb = |bytes: u64| bytes.div_ceil(1_000_000);
    let mut line = format!(
        "memory: {pods} pods watched; budget {} MB (2 KB per pod + 40 MB)",
        mb(need)
    );
    let short = limit.is_some_and(|limit| limit < need);
    match limit {
        Some(limit) if short => line.push_str(&format!(
            "; the memory limit is {} MB, under the budget: raise it to at least {} MB \
             (resources.limits.memory), or the process may be OOMKilled as the cluster grows",
            mb(limit),
            mb(need)
        )),
        Some(limit) => line.push_str(&format!("; memory limit {} MB", mb(limit))),
        None => line.push_str("; no memory limit"),
    }
    (line, short)
}

/// This process's memory limit from its cgroup (v2, then v1), if it has one.
pub(crate) fn cgroup_limit() -> Option<u64> {
    [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|path| std::fs::read_to_string(path).ok())
    .and_then(|text| text.trim().parse::<u64>().ok())
    // cgroup v1 says "no limit" with a huge number.
    .filter(|limit| *limit < 1 << 60)
}
