//! One watch connection, read to its end: a plain watch from a version, or a streaming list
//! whose initial events replace the scope when their closing bookmark comes, after which the
//! same stream goes on as the watch. It records each proof that the view is current, and
//! ends itself once quiet so the next connection proves it again.

use std::collections::HashMap;
use std::time::Instant;

use futures::StreamExt;
use kube::core::params::WatchParams;
use kube::core::{Request, Status, WatchEvent};

use super::step::{Attempt, Ended};
use super::{INITIAL_EVENTS_END, Scoped};
use crate::cluster::WatchState;
use crate::cluster::explain::explain;
use crate::pod::{Interner, PodRecord, WirePod};

/// A streaming list's initial events, gathered until the bookmark that ends them.
struct Initial {
    /// By UID: a server that ignored `sendInitialEvents` streams changes to the same pods
    /// until its first bookmark tells; each must replace, not pile up.
    pods: HashMap<Box<str>, PodRecord>,
    interner: Interner,
}

/// One connection from `version`; a streaming list when `listing`.
pub(super) async fn connection(scoped: &Scoped, version: &str, listing: bool) -> Attempt {
    let settings = &scoped.settings;
    let (quiet, settle) = (settings.quiet(), settings.settle());
    let params = if listing {
        WatchParams::streaming_lists()
    } else {
        WatchParams::default()
    }
    .timeout(settings.watch_timeout.as_secs().clamp(1, u32::MAX as u64) as u32);
    // Bookmarks are what a quiet but healthy watch says where the server sends them.
    debug_assert!(params.bookmarks);
    let failed = |ended| Attempt {
        reached: None,
        ended,
    };
    let request = match Request::new(scoped.scope.pods_path()).watch(&params, version) {
        Ok(r) => r,
        Err(e) => return failed(Ended::Failed(e.to_string())),
    };
    let client = &scoped.client;
    let stream = match tokio::time::timeout(quiet, client.request_events::<WirePod>(request)).await
    {
        Err(_) => return failed(Ended::Silent(quiet)),
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return failed(classify_error(&e, scoped, listing)),
    };
    let mut stream = std::pin::pin!(stream);
    let mut reading = Reading {
        scoped,
        reached: None,
        proved: false,
        last: None,
        told: None,
    };
    let mut initial = listing.then(|| Initial {
        pods: HashMap::new(),
        interner: Interner::default(),
    });
    let clock = scoped.cache.clock();
    let mut last_word = clock.instant();
    loop {
        // Gathering, nothing more for `quiet` is a dead list; watching, a connection that
        // stays open for `settle` proves itself, and one quiet for `quiet` is ended to be
        // re-made: the new one proves the view again.
        let (wait, on_timeout) = match (&initial, reading.proved) {
            (Some(_), _) => (quiet, Timeout::Silent),
            (None, false) => (settle, Timeout::Proved),
            (None, true) => (quiet, Timeout::Quiet),
        };
        let wake = tokio::time::Instant::from_std(last_word + wait);
        let item = match tokio::time::timeout_at(wake, stream.next()).await {
            Err(_) => match on_timeout {
                Timeout::Silent => return reading.ended(Ended::Silent(quiet)),
                Timeout::Quiet => return reading.ended(Ended::Closed { proved: true }),
                Timeout::Proved => {
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
        let event = match item {
            Ok(WatchEvent::Error(status)) => return reading.ended(classify(&status, listing)),
            Ok(event) => event,
            Err(kube::Error::SerdeError(e)) => {
                tracing::warn!(scope = %scoped.scope, "skipping a pod that does not decode: {e}");
                continue;
            }
            Err(e) => return reading.ended(classify_error(&e, scoped, listing)),
        };
        if let Some(gathering) = &mut initial {
            match event {
                WatchEvent::Added(pod) | WatchEvent::Modified(pod) => {
                    let pod = pod.into_record(&mut gathering.interner);
                    gathering.pods.insert(pod.uid.clone(), pod);
                }
                WatchEvent::Deleted(pod) => {
                    gathering.pods.remove(&*pod.metadata.uid);
                }
                WatchEvent::Bookmark(mark) => {
                    let ended = mark
                        .metadata
                        .annotations
                        .get(INITIAL_EVENTS_END)
                        .is_some_and(|v| v == "true");
                    if !ended {
                        return reading.ended(Ended::Unsupported(
                            "the server ignored sendInitialEvents: a bookmark came before \
                             the end of the initial events"
                                .to_string(),
                        ));
                    }
                    let gathered = initial
                        .take()
                        .map(|g| g.pods.into_values().collect())
                        .unwrap_or_default();
                    scoped
                        .cache
                        .replace_scope(&scoped.scope, gathered, clock.now());
                    scoped
                        .cache
                        .update_health(&scoped.scope, |h| h.synced = true);
                    reading.heard(mark.metadata.resource_version);
                }
                WatchEvent::Error(_) => {}
            }
            continue;
        }
        match event {
            WatchEvent::Added(pod) | WatchEvent::Modified(pod) => {
                let version = pod.metadata.resource_version.clone();
                scoped.cache.upsert(pod, clock.now());
                reading.heard(version);
            }
            WatchEvent::Deleted(pod) => {
                scoped.cache.remove(&pod.metadata.uid);
                reading.heard(pod.metadata.resource_version);
            }
            WatchEvent::Bookmark(mark) => reading.heard(mark.metadata.resource_version),
            WatchEvent::Error(_) => {}
        }
    }
}

enum Timeout {
    Silent,
    Quiet,
    Proved,
}

/// What a connection has shown so far, and the proofs it told the cache.
struct Reading<'a> {
    scoped: &'a Scoped,
    reached: Option<String>,
    proved: bool,
    /// The last proof, and when one was last told to the cache: a busy watch tells it at
    /// most every `settings.tell_every()`, so it takes no extra lock per event.
    last: Option<Instant>,
    told: Option<Instant>,
}

impl Reading<'_> {
    /// An event or a bookmark at `version`: the view is current as of now.
    fn heard(&mut self, version: String) {
        self.reached = Some(version);
        self.prove();
    }

    fn prove(&mut self) {
        let (cache, scope) = (&self.scoped.cache, &self.scoped.scope);
        let now = cache.clock().instant();
        self.last = Some(now);
        if !self.proved {
            // The first proof of a connection clears any reconnecting state.
            self.proved = true;
            cache.update_health(scope, |h| {
                h.state = WatchState::Watching;
                h.proved = Some(now);
            });
            self.told = Some(now);
        } else if self
            .told
            .is_none_or(|told| now >= told + self.scoped.settings.tell_every())
        {
            cache.proved(scope, now);
            self.told = Some(now);
        }
    }

    fn ended(self, ended: Ended) -> Attempt {
        if let Some(last) = self.last.filter(|last| Some(*last) != self.told) {
            // The last proof exactly, whatever the throttle held back.
            self.scoped.cache.proved(&self.scoped.scope, last);
        }
        Attempt {
            reached: self.reached,
            ended,
        }
    }
}

/// Every error status, from an answer or an ERROR event, sorted in one place: what it says
/// about the version or the request, or a failure.
pub(super) fn classify(status: &Status, listing: bool) -> Ended {
    let said = || format!("{} ({})", status.message, status.code);
    match status.code {
        410 => Ended::Expired,
        504 if status.message.contains("Too large resource version") => Ended::Refused(said()),
        400 | 422 if listing => Ended::Unsupported(said()),
        _ => Ended::Failed(said()),
    }
}

fn classify_error(error: &kube::Error, scoped: &Scoped, listing: bool) -> Ended {
    match error {
        kube::Error::Api(status) => match classify(status, listing) {
            Ended::Failed(_) => Ended::Failed(explain(error, "watch", "pods", &scoped.scope)),
            other => other,
        },
        _ => Ended::Failed(explain(error, "watch", "pods", &scoped.scope)),
    }
}
