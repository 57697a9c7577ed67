//! The watch loop's decisions, apart from its I/O: where a scope stands between attempts, and
//! what the end of one attempt makes of it. Pure, so every path is a unit test.

use std::time::Duration;

use super::super::Forbidden;
use super::super::list::ListFrom;

/// Where one scope stands between attempts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum State {
    /// Get a complete view: a streaming list (a watch that begins with the current state) when
    /// `stream`, else pages.
    List { from: ListFrom, stream: bool },
    /// In sync at `version`: watch from there.
    Watch { version: String },
}

/// What one attempt (a list, or one watch connection) came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Attempt {
    /// The version the scope is in sync at, if the attempt moved it: a list, a streaming
    /// list's closing bookmark, a watch event or bookmark.
    pub(super) reached: Option<String>,
    pub(super) ended: Ended,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ended {
    /// A paged list loaded the whole scope.
    Listed,
    /// A watch connection ended: closed by the server (its timeout, a proxy) or by us once
    /// quiet. `proved`: it showed the server serves it (it said something, or stayed open).
    Closed {
        proved: bool,
    },
    /// No answer, or nothing more, for this long: the server may be frozen.
    TimedOut(Duration),
    /// 410: the version has left the server's window.
    Expired,
    /// The server cannot serve that version yet (504 "Too large resource version").
    Refused(String),
    /// The server does not serve streaming lists: it refused the request (400/422), or its
    /// initial events did not end with the marked bookmark.
    Unsupported(String),
    Failed(String),
    /// 403: this identity may not make the request.
    Forbidden(Forbidden),
}

/// Why a scope is down, as its health shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Down {
    Failed(String),
    Forbidden(Forbidden),
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Then {
    /// At once, the backoff reset: the attempt did what it was for.
    Continue,
    /// At once, keeping the backoff: another way may work (pages after a streaming list).
    Retry,
    /// At once, after counting a relist: the version is gone.
    Relist,
    /// After the backoff's pause. `down` is the error to show; None for a failure that only
    /// the age of the view shows (a watch closed as soon as it was opened).
    Backoff { down: Option<Down> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Step {
    pub(super) state: State,
    pub(super) then: Then,
    /// What the attempt taught about the server: whether it serves streaming lists.
    pub(super) streams: Option<bool>,
}

/// The latest state, read from etcd: pages, since a streaming list is served by the watch
/// cache, which may be what lags.
fn quorum_read() -> State {
    State::List {
        from: ListFrom::MostRecent,
        stream: false,
    }
}

/// The next state after `attempt`. `may_stream`: whether a list on this server should be a
/// streaming one (not known to be unsupported).
pub(super) fn step(state: State, attempt: Attempt, may_stream: bool) -> Step {
    let streaming = matches!(state, State::List { stream: true, .. });
    let streams = match (&attempt.ended, &attempt.reached) {
        (Ended::Unsupported(_), _) => Some(false),
        (_, Some(_)) if streaming => Some(true),
        _ => None,
    };
    let may_stream = may_stream && streams != Some(false);
    // Once in sync, the scope goes on from the newest version it reached.
    let state = match attempt.reached {
        Some(version) => State::Watch { version },
        None => state,
    };
    let list = |from| State::List {
        from,
        stream: may_stream,
    };
    let (state, then) = match (state, attempt.ended) {
        (state, Ended::Listed) | (state @ State::Watch { .. }, Ended::Closed { proved: true }) => {
            (state, Then::Continue)
        }
        // Closed as soon as opened: reconnecting at once would spin.
        (state @ State::Watch { .. }, Ended::Closed { proved: false }) => {
            (state, Then::Backoff { down: None })
        }
        (State::Watch { version }, Ended::Expired) => {
            (list(ListFrom::NotOlderThan(version)), Then::Relist)
        }
        (State::Watch { .. }, Ended::Refused(_)) => (quorum_read(), Then::Relist),
        // A version the server should know was refused: only the latest state can be had.
        (State::List { .. }, Ended::Expired | Ended::Refused(_)) => (quorum_read(), Then::Retry),
        // Making progress beats waiting: pages this time.
        (State::List { from, .. }, Ended::Unsupported(_))
        | (
            State::List { from, stream: true },
            Ended::Closed { .. } | Ended::TimedOut(_) | Ended::Failed(_) | Ended::Forbidden(_),
        ) => (
            State::List {
                from,
                stream: false,
            },
            Then::Retry,
        ),
        (state, Ended::TimedOut(waited)) => (
            state,
            Then::Backoff {
                down: Some(Down::Failed(format!(
                    "nothing from the API server for {}s; reconnecting",
                    waited.as_secs_f64().round()
                ))),
            },
        ),
        (state, Ended::Failed(error) | Ended::Unsupported(error)) => (
            state,
            Then::Backoff {
                down: Some(Down::Failed(error)),
            },
        ),
        (state, Ended::Forbidden(forbidden)) => (
            state,
            Then::Backoff {
                down: Some(Down::Forbidden(forbidden)),
            },
        ),
        // A paged list does not close like a watch; if it ever did, it proved nothing.
        (state @ State::List { stream: false, .. }, Ended::Closed { .. }) => {
            (state, Then::Backoff { down: None })
        }
    };
    Step {
        state,
        then,
        streams,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(version: &str) -> State {
        State::Watch {
            version: version.into(),
        }
    }

    fn list(from: ListFrom, stream: bool) -> State {
        State::List { from, stream }
    }

    fn ended(ended: Ended) -> Attempt {
        Attempt {
            reached: None,
            ended,
        }
    }

    fn reached(version: &str, ended: Ended) -> Attempt {
        Attempt {
            reached: Some(version.into()),
            ended,
        }
    }

    fn go(state: State) -> Step {
        Step {
            state,
            then: Then::Continue,
            streams: None,
        }
    }

    #[test]
    fn a_paged_list_goes_on_as_a_watch_from_its_version() {
        let after = step(
            list(ListFrom::Any, false),
            reached("10", Ended::Listed),
            true,
        );
        assert_eq!(after, go(watch("10")));
    }

    #[test]
    fn a_streaming_list_that_synced_goes_on_from_where_its_stream_ended_and_teaches_support() {
        let after = step(
            list(ListFrom::Any, true),
            reached("12", Ended::Closed { proved: true }),
            true,
        );
        assert_eq!(
            after,
            Step {
                streams: Some(true),
                ..go(watch("12"))
            }
        );
    }

    #[test]
    fn a_streaming_list_the_server_does_not_know_falls_back_to_pages_for_good() {
        let after = step(
            list(ListFrom::Any, true),
            ended(Ended::Unsupported("422".into())),
            true,
        );
        assert_eq!(
            after,
            Step {
                state: list(ListFrom::Any, false),
                then: Then::Retry,
                streams: Some(false),
            }
        );
        // And the relist after a later 410 pages too.
        let later = step(watch("20"), ended(Ended::Expired), false);
        assert_eq!(
            later.state,
            list(ListFrom::NotOlderThan("20".into()), false)
        );
    }

    #[test]
    fn a_streaming_list_that_fails_unsynced_pages_at_once() {
        for end in [
            Ended::Closed { proved: true },
            Ended::TimedOut(Duration::from_secs(10)),
            Ended::Failed("boom".into()),
        ] {
            let after = step(list(ListFrom::Any, true), ended(end.clone()), true);
            assert_eq!(after.state, list(ListFrom::Any, false), "{end:?}");
            assert_eq!(after.then, Then::Retry, "{end:?}");
        }
    }

    #[test]
    fn a_watch_that_proved_itself_is_remade_at_once_from_the_newest_version() {
        assert_eq!(
            step(watch("5"), ended(Ended::Closed { proved: true }), true),
            go(watch("5"))
        );
        assert_eq!(
            step(
                watch("5"),
                reached("9", Ended::Closed { proved: true }),
                true
            ),
            go(watch("9"))
        );
    }

    #[test]
    fn a_watch_closed_at_once_backs_off_without_calling_the_scope_down() {
        let after = step(watch("5"), ended(Ended::Closed { proved: false }), true);
        assert_eq!(after.state, watch("5"));
        assert_eq!(after.then, Then::Backoff { down: None });
    }

    #[test]
    fn silence_and_failures_back_off_and_show_why() {
        let silent = step(
            watch("5"),
            ended(Ended::TimedOut(Duration::from_secs(10))),
            true,
        );
        assert_eq!(silent.state, watch("5"), "resumes from where it was");
        assert!(
            matches!(&silent.then, Then::Backoff { down: Some(Down::Failed(e)) } if e.contains("10s")),
            "{silent:?}"
        );
        let failed = step(
            list(ListFrom::Any, false),
            ended(Ended::Failed("refused".into())),
            true,
        );
        assert_eq!(failed.state, list(ListFrom::Any, false));
        assert_eq!(
            failed.then,
            Then::Backoff {
                down: Some(Down::Failed("refused".into()))
            }
        );
        // Forbidden is its own state: what the screen shows in place of the counts.
        let forbidden = Forbidden {
            verb: "list",
            resource: "pods",
            scope: crate::cluster::Scope::All,
            message: "pods is forbidden".into(),
        };
        let refused = step(
            list(ListFrom::Any, false),
            ended(Ended::Forbidden(forbidden.clone())),
            true,
        );
        assert_eq!(
            refused.then,
            Then::Backoff {
                down: Some(Down::Forbidden(forbidden))
            }
        );
    }

    #[test]
    fn an_expired_watch_relists_not_older_than_its_version() {
        let after = step(watch("7"), ended(Ended::Expired), true);
        assert_eq!(after.state, list(ListFrom::NotOlderThan("7".into()), true));
        assert_eq!(after.then, Then::Relist);
    }

    #[test]
    fn a_version_refused_by_a_list_falls_back_to_the_most_recent_in_pages() {
        for (stream, end) in [
            (false, Ended::Expired),
            (false, Ended::Refused("Too large".into())),
            (true, Ended::Refused("Too large".into())),
        ] {
            let after = step(
                list(ListFrom::NotOlderThan("7".into()), stream),
                ended(end.clone()),
                true,
            );
            assert_eq!(after.state, list(ListFrom::MostRecent, false), "{end:?}");
            assert_eq!(after.then, Then::Retry, "{end:?}");
        }
        let watched = step(watch("7"), ended(Ended::Refused("Too large".into())), true);
        assert_eq!(watched.state, list(ListFrom::MostRecent, false));
        assert_eq!(watched.then, Then::Relist);
    }
}
