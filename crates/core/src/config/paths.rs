//! Default file locations, and `~/` expansion for paths written in the config.

use std::path::{Path, PathBuf};

/// `<data dir>/ops-pod-cleaner/<name>` (e.g. `~/.local/share/ops-pod-cleaner/audit.jsonl`),
/// or `./ops-pod-cleaner-<name>` when the platform has no data dir (containers without HOME).
pub(crate) fn data_file(name: &str) -> PathBuf {
    match dirs::data_dir() {
        Some(dir) => dir.join("ops-pod-cleaner").join(name),
        None => PathBuf::from(format!("ops-pod-cleaner-{name}")),
    }
}

/// A path from the config: `~/x` is under the home dir; relative paths stay relative to the
/// working directory (where the process runs, as the seed's `config.yml` was).
pub(crate) fn expand(text: &str) -> PathBuf {
    match (text.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => Path::new(text).to_path_buf(),
    }
}
