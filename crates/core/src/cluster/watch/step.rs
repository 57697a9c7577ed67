//! The watch loop's decisions, apart from its I/O: where a scope stands between attempts, and
//! what the end of one attempt makes of it. Pure; tested through the requests it leads to.

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
