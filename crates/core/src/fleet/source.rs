//! Where a screen reads a cluster's findings from: its in-cluster worker, or a watch of its
//! pods from the laptop, chosen per context.

use std::fmt;

use super::{FeedError, FeedStatus};
use crate::config::Source;

/// Why a cluster is watched from here rather than read through its worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchWhy {
    /// The context's source is `watch`.
    Chosen,
    /// `auto`, and there is no worker to read: no Service, no ready endpoint, no permission.
    NoWorker(FeedError),
    /// `auto`, and the worker's findings are more than the feed carries.
    OverBound(FeedError),
}

impl fmt::Display for WatchWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchWhy::Chosen => f.write_str("source: watch"),
            WatchWhy::NoWorker(error) => write!(f, "no worker to read ({error})"),
            WatchWhy::OverBound(error) => write!(f, "{error}"),
        }
    }
}

/// Why a cluster of `source` is watched, given how the first attempt to read its worker went
/// (ignored for `watch`, which asks nothing); none where its worker feeds it. A worker that
/// exists but hiccups stays the source, shown failing or stale until it answers.
pub fn decide(source: Source, first: &Result<(), FeedError>) -> Option<WatchWhy> {
    match (source, first) {
        (Source::Watch, _) => Some(WatchWhy::Chosen),
        (Source::Auto, Err(error)) if error.means_no_worker() => {
            Some(WatchWhy::NoWorker(error.clone()))
        }
        (Source::Auto, Err(error)) if error.is_over_bound() => {
            Some(WatchWhy::OverBound(error.clone()))
        }
        (Source::Auto | Source::Worker, _) => None,
    }
}

/// What feeds a cluster of `source` that is read through its worker, now that the feed is
/// `status`: `auto` watches once the worker's findings outgrow the feed's bound (they may,
/// long after its first answer); any other trouble stays on the worker, shown as it is.
pub fn reconsider(source: Source, status: &FeedStatus) -> Option<WatchWhy> {
    let error = status.error()?;
    (source == Source::Auto && error.is_over_bound()).then(|| WatchWhy::OverBound(error.clone()))
}
