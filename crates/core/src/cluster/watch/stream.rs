//! One watch connection, read to its end: a plain watch from a version, or a streaming list
//! whose initial events replace the scope when their closing bookmark comes, after which the
//! same stream goes on as the watch. It records each proof that the view is current, and
//! ends itself once quiet so the next connection proves it again.

use std::collections::HashMap;
use std::time::Instant;

use futures::{Stream, StreamExt};
use http::HeaderValue;
use kube::core::params::WatchParams;
use kube::core::{Request, Status, WatchEvent};

use super::Scoped;
use super::read::{self, Read};
use super::step::{Attempt, Ended};
use crate::cluster::explain::explain;
use crate::cluster::kind::Kind;
use crate::cluster::negotiate::send_answered;
use crate::cluster::{Forbidden, WatchState};
use crate::config::WireFormat;
use crate::pod::INITIAL_EVENTS_END;

/// A streaming list's initial events, gathered until the bookmark that ends them.
struct Initial<K: Kind> {
    /// By key: a server that ignored `sendInitialEvents` streams changes to the same objects
    /// until its first bookmark tells; each must replace, not pile up.
    records: HashMap<Box<str>, K::Record>,
    decoder: K::Decoder,
}

/// One connection from `version`; a streaming list when `listing`.
pub(super) async fn connection<K: Kind>(
    scoped: &Scoped<K>,
    version: &str,
    listing: bool,
) -> Attempt {
    let settings = &scoped.settings;
    let (quiet, settle) = (settings.quiet(), settings.settle());
    let stream = match open(scoped, version, listing).await {
        Ok(stream) => stream,
        Err(ended) => {
            return Attempt {
                reached: None,
                ended,
            };
        }
    };
    let mut stream = std::pin::pin!(stream);
    let mut reading = Reading {
        scoped,
        reached: None,
        proved: false,
        last: None,
        reported: None,
        initial: listing.then(|| Initial {
            records: HashMap::new(),
            decoder: K::Decoder::default(),
        }),
    };
    let clock = scoped.kind.clock();
    let mut last_word = clock.instant();
    loop {
        // Gathering, nothing more for `quiet` is a dead list; watching, a connection that
        // stays open for `settle` proves itself, and one quiet for `quiet` is ended to be
        // re-made: the new one proves the view again.
        let proving = reading.initial.is_none() && !reading.proved;
        let wait = if proving { settle } else { quiet };
        let wake = tokio::time::Instant::from_std(last_word + wait);
        let item = match tokio::time::timeout_at(wake, stream.next()).await {
            Err(_) => match (&reading.initial, reading.proved) {
                (Some(_), _) => return reading.ended(Ended::TimedOut(quiet)),
                (None, true) => return reading.ended(Ended::Closed { proved: true }),
                (None, false) => {
                    reading.prove();
                    last_word = clock.instant();
                    continue;
                }
            },
            Ok(None) => {
                let proved = reading.proved;
                return reading.ended(Ended::Closed { proved });
            }
            Ok(Some(item)) => item,
        };
        last_word = clock.instant();
        let ended = match item {
            Ok(Read::Event(WatchEvent::Error(status))) => Some(classify(&status, listing)),
            Ok(Read::Event(event)) => reading.apply(event),
            Ok(Read::Undecodable(e)) => {
                let (scope, what) = (&scoped.scope, K::RESOURCE);
                tracing::warn!(%scope, "skipping one of the {what} that does not decode: {e}");
                None
            }
            Err(e) => Some(classify_error(&e, scoped, listing)),
        };
        if let Some(ended) = ended {
            return reading.ended(ended);
        }
    }
}

/// The watch request, answered: its events as they come, or how it ended without any.
async fn open<K: Kind>(
    scoped: &Scoped<K>,
    version: &str,
    listing: bool,
) -> Result<impl Stream<Item = kube::Result<Read<K::Wire>>> + use<K>, Ended> {
    let settings = &scoped.settings;
    let params = if listing {
        WatchParams::streaming_lists()
    } else {
        WatchParams::default()
    }
    .timeout(settings.watch_timeout.as_secs().clamp(1, u32::MAX as u64) as u32);
    // Bookmarks are what a quiet but healthy watch says where the server sends them.
    debug_assert!(params.bookmarks);
    let mut request = Request::new(scoped.scope.path(K::RESOURCE))
        .watch(&params, version)
        .map_err(|e| Ended::Failed(e.to_string()))?;
    let asked = if K::PROTOBUF {
        settings.wire
    } else {
        WireFormat::Json
    };
    request.headers_mut().insert(
        http::header::ACCEPT,
        HeaderValue::from_static(asked.accept()),
    );
    let quiet = settings.quiet();
    match tokio::time::timeout(quiet, send_answered(&scoped.client, request)).await {
        Err(_) => Err(Ended::TimedOut(quiet)),
        Ok(Ok((format, body))) => {
            if K::PROTOBUF {
                scoped.health(|h| h.format = Some(format));
            }
            Ok(read::events::<K>(body, format))
        }
        Ok(Err(e)) => Err(classify_error(&e, scoped, listing)),
    }
}

/// What a connection has shown so far, and the proofs it reported to the store.
struct Reading<'a, K: Kind> {
    scoped: &'a Scoped<K>,
    reached: Option<String>,
    proved: bool,
    /// The last proof, and when one was last reported to the store: a busy watch reports at
    /// most every `settings.tell_every()`, so it takes no extra lock per event.
    last: Option<Instant>,
    reported: Option<Instant>,
    /// A streaming list's initial events, until their closing bookmark.
    initial: Option<Initial<K>>,
}

impl<K: Kind> Reading<'_, K> {
    /// Apply one event; how the connection ended, if this event ends it.
    fn apply(&mut self, event: WatchEvent<K::Wire>) -> Option<Ended> {
        if self.initial.is_some() {
            return self.gather(event);
        }
        let kind = &self.scoped.kind;
        match event {
            WatchEvent::Added(wire) | WatchEvent::Modified(wire) => {
                let version = K::wire_version(&wire).to_string();
                kind.upsert(wire);
                self.heard(version);
            }
            WatchEvent::Deleted(wire) => {
                let version = K::wire_version(&wire).to_string();
                kind.remove(wire);
                self.heard(version);
            }
            WatchEvent::Bookmark(mark) => self.heard(mark.metadata.resource_version),
            WatchEvent::Error(_) => {}
        }
        None
    }

    /// One of a streaming list's initial events, kept until the bookmark that ends them.
    fn gather(&mut self, event: WatchEvent<K::Wire>) -> Option<Ended> {
        let gathering = self.initial.as_mut()?;
        match event {
            WatchEvent::Added(wire) | WatchEvent::Modified(wire) => {
                let key = K::wire_key(&wire).into();
                let record = K::record(wire, &mut gathering.decoder);
                gathering.records.insert(key, record);
            }
            WatchEvent::Deleted(wire) => {
                gathering.records.remove(K::wire_key(&wire));
            }
            WatchEvent::Bookmark(mark) => {
                let ended = mark
                    .metadata
                    .annotations
                    .get(INITIAL_EVENTS_END)
                    .is_some_and(|v| v == "true");
                if !ended {
                    return Some(Ended::Unsupported(
                        "the server ignored sendInitialEvents: a bookmark came before the end \
                         of the initial events"
                            .to_string(),
                    ));
                }
                let gathered = self
                    .initial
                    .take()
                    .map(|g| g.records.into_values().collect())
                    .unwrap_or_default();
                let scoped = self.scoped;
                scoped.kind.replace(&scoped.scope, gathered);
                scoped.health(|h| h.synced = true);
                self.heard(mark.metadata.resource_version);
            }
            WatchEvent::Error(_) => {}
        }
        None
    }

    /// An event or a bookmark at `version`: the view is current as of now.
    fn heard(&mut self, version: String) {
        self.reached = Some(version);
        self.prove();
    }

    fn prove(&mut self) {
        let scoped = self.scoped;
        let now = scoped.kind.clock().instant();
        self.last = Some(now);
        if !self.proved {
            // The first proof of a connection clears any reconnecting state.
            self.proved = true;
            scoped.health(|h| {
                h.state = WatchState::Watching;
                h.proved = Some(now);
            });
            self.reported = Some(now);
        } else if self
            .reported
            .is_none_or(|reported| now >= reported + scoped.settings.tell_every())
        {
            scoped.kind.proved(&scoped.scope, now);
            self.reported = Some(now);
        }
    }

    fn ended(self, ended: Ended) -> Attempt {
        if let Some(last) = self.last.filter(|last| Some(*last) != self.reported) {
            // The last proof exactly, whatever the throttle held back.
            self.scoped.kind.proved(&self.scoped.scope, last);
        }
        Attempt {
            reached: self.reached,
            ended,
        }
    }
}

/// Every error status, from an answer or an ERROR event, sorted in one place.
pub(super) fn classify(status: &Status, listing: bool) -> Ended {
    let said = || format!("{} ({})", status.message, status.code);
    match status.code {
        410 => Ended::Expired,
        504 if status.message.contains("Too large resource version") => Ended::Refused(said()),
        400 | 422 if listing => Ended::Unsupported(said()),
        _ => Ended::Failed(said()),
    }
}

fn classify_error<K: Kind>(error: &kube::Error, scoped: &Scoped<K>, listing: bool) -> Ended {
    let failed = || Ended::Failed(explain(error, "watch", K::RESOURCE, &scoped.scope, None));
    match error {
        kube::Error::Api(status) if status.code == 403 => Ended::Forbidden(Forbidden {
            verb: "watch",
            resource: K::RESOURCE,
            scope: scoped.scope.clone(),
            message: status.message.clone(),
        }),
        kube::Error::Api(status) => match classify(status, listing) {
            Ended::Failed(_) => failed(),
            other => other,
        },
        _ => failed(),
    }
}
