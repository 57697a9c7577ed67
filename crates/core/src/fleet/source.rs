//! Where a screen reads a cluster's findings from: its in-cluster worker, or a watch of its
//! pods from the laptop, chosen per context.

use std::fmt;

use super::{FeedError, FeedStatus};
pub use crate::config::{BadSource, Source};

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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::fleet::StaleWhy;

    fn no_worker() -> FeedError {
        FeedError::NoWorker {
            namespace: "ops-pod-cleaner".into(),
            service: "ops-pod-cleaner".into(),
        }
    }

    fn forbidden() -> FeedError {
        FeedError::Forbidden {
            verb: "get",
            resource: "services/proxy",
            namespace: "ops-pod-cleaner".into(),
            name: "ops-pod-cleaner:9090".into(),
        }
    }

    fn not_ready() -> FeedError {
        FeedError::NotReady {
            namespace: "ops-pod-cleaner".into(),
            service: "ops-pod-cleaner".into(),
        }
    }

    fn hiccups() -> Vec<FeedError> {
        vec![
            FeedError::Unreachable {
                message: "error trying to reach service: dial tcp: refused".into(),
            },
            FeedError::Silent {
                after: Duration::from_secs(15),
            },
            FeedError::Transport("connection reset".into()),
            FeedError::Ended,
        ]
    }

    #[test]
    fn auto_falls_back_to_a_watch_only_where_there_is_no_worker_and_says_why() {
        for error in [no_worker(), not_ready(), forbidden()] {
            assert_eq!(
                decide(Source::Auto, &Err(error.clone())),
                Some(WatchWhy::NoWorker(error))
            );
        }
        assert_eq!(decide(Source::Auto, &Ok(())), None);
        for error in hiccups() {
            assert_eq!(decide(Source::Auto, &Err(error.clone())), None, "{error}");
        }
    }

    #[test]
    fn auto_watches_a_cluster_whose_worker_feed_is_over_the_bound() {
        let over = [
            FeedError::OverBound {
                message: "the findings are 70000000 bytes".into(),
            },
            FeedError::Protocol(crate::fleet::DecodeError::LineTooLong { max: 64 << 20 }),
            FeedError::TooManyRows { max: 20_000 },
        ];
        for error in over {
            assert_eq!(
                decide(Source::Auto, &Err(error.clone())),
                Some(WatchWhy::OverBound(error.clone()))
            );
            assert_eq!(decide(Source::Worker, &Err(error)), None);
        }
    }

    #[test]
    fn auto_reconsiders_a_feed_that_outgrew_its_bound_and_nothing_else() {
        let over = FeedError::TooManyRows { max: 20_000 };
        let since = std::time::Instant::now();
        let lost = |error: FeedError| FeedStatus::Stale {
            since,
            why: StaleWhy::Lost(error),
        };
        for status in [lost(over.clone()), FeedStatus::Failing(over.clone())] {
            assert_eq!(
                reconsider(Source::Auto, &status),
                Some(WatchWhy::OverBound(over.clone()))
            );
            assert_eq!(reconsider(Source::Worker, &status), None);
        }
        let stays = [
            FeedStatus::Live,
            FeedStatus::Connecting,
            lost(hiccups()[0].clone()),
            FeedStatus::Failing(no_worker()),
            FeedStatus::Stale {
                since,
                why: StaleWhy::WorkerStale,
            },
        ];
        for status in stays {
            assert_eq!(reconsider(Source::Auto, &status), None, "{status:?}");
        }
    }

    #[test]
    fn worker_stays_on_the_worker_and_watch_never_asks() {
        for outcome in [
            Err(no_worker()),
            Err(forbidden()),
            Err(hiccups()[0].clone()),
        ] {
            assert_eq!(decide(Source::Worker, &outcome), None);
        }
        for outcome in [Ok(()), Err(no_worker())] {
            assert_eq!(decide(Source::Watch, &outcome), Some(WatchWhy::Chosen));
        }
        assert!(!Source::Watch.asks_worker());
        assert!(Source::Auto.asks_worker() && Source::Worker.asks_worker());
    }

    #[test]
    fn sources_read_back_as_written_and_auto_is_the_default() {
        for name in Source::NAMES {
            let read = name.parse::<Source>().map(|s| s.to_string());
            assert_eq!(read, Ok(name.to_string()));
        }
        assert_eq!(" auto ".parse(), Ok(Source::Auto));
        assert_eq!("Auto".parse::<Source>(), Err(BadSource));
        assert_eq!(Source::default(), Source::Auto);
    }
}
