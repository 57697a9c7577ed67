//! The watch loop's decisions, read from what it asks the API server next and when: after a
//! list, a watch, a refusal, a silence. A decision made "at once" is a request at the same
//! instant of tokio's paused clock; a backoff is a pause before it.

use std::time::Duration;

use opc_core::cluster::{Cache, Forbidden, Scope, WatchState, spawn_watches};

use crate::cluster_watch::{
    Answer, Seen, Server, event, initial_events_end, no_streaming, paged_at, pod, scripted_by_path,
    usual, watching,
};

/// The next `n` requests.
async fn requests(server: &mut Server, n: usize) -> Vec<Seen> {
    let mut seen = Vec::new();
    for _ in 0..n {
        seen.push(server.next().await);
    }
    seen
}

fn health(cache: &Cache) -> opc_core::cluster::ScopeHealth {
    cache.reader().health().scopes[0].clone()
}

/// A streaming list that ends its initial events at `version`, then closes.
fn synced_at(version: &str) -> Answer {
    Answer::events(&[initial_events_end(version)])
}

#[tokio::test(start_paused = true)]
async fn a_paged_list_goes_on_as_a_watch_from_its_version() {
    let (_cache, mut server) = watching(paged_at("10", []), &usual());
    let [_, listed, next] = &requests(&mut server, 3).await[..] else {
        unreachable!()
    };
    assert!(listed.is_paged_list_from("0"), "{listed:?}");
    assert!(next.is_watch_from("10"), "{next:?}");
    assert_eq!(next.at, listed.at, "at once");
}

/// Whether a server serves streaming lists is learnt for the whole cluster: scope `a` learns
/// that it does not, scope `b` then that it does, and `a`'s next relist streams again.
#[tokio::test(start_paused = true)]
async fn a_streaming_list_that_synced_goes_on_from_where_its_stream_ended_and_teaches_support() {
    let (a, b) = ("/api/v1/namespaces/a/pods", "/api/v1/namespaces/b/pods");
    let expired = serde_json::json!({"kind": "Status", "status": "Failure", "code": 410});
    let gone = format!("{}\n", event("ERROR", expired));
    let (client, mut server) = scripted_by_path(vec![
        (
            a,
            paged_at(
                "5",
                [Answer::body(200, "").then(Duration::from_secs(2), gone)],
            ),
        ),
        (
            b,
            vec![Answer::body(200, "").then(Duration::from_secs(1), synced_events("12"))],
        ),
    ]);
    let scopes = [Scope::Namespace("a".into()), Scope::Namespace("b".into())];
    drop(spawn_watches(&client, &scopes, &Cache::new(), &usual()));
    let mut seen = requests(&mut server, 6).await;
    seen.sort_by_key(|s| s.at);
    let of = |path: &str| -> Vec<&Seen> { seen.iter().filter(|s| s.uri.path() == path).collect() };
    let (a, b) = (of(a), of(b));
    let [b_list, b_watch] = &b[..] else {
        panic!("{b:?}")
    };
    assert!(b_list.is_streaming_list(), "{b_list:?}");
    assert!(b_watch.is_watch_from("12"), "{b_watch:?}");
    assert_eq!(b_watch.at, b_list.at + Duration::from_secs(1), "at once");
    let [_, _, a_watch, a_relist] = &a[..] else {
        panic!("{a:?}")
    };
    assert!(a_watch.is_watch_from("5"), "{a_watch:?}");
    assert!(a_relist.is_streaming_list(), "taught by b: {a_relist:?}");
    assert_eq!(a_relist.param("resourceVersion").as_deref(), Some("5"));
}

/// A streaming list's stream: the end of its initial events at `version`, then its close.
fn synced_events(version: &str) -> String {
    format!("{}\n", initial_events_end(version))
}

#[tokio::test(start_paused = true)]
async fn a_streaming_list_the_server_does_not_know_falls_back_to_pages_for_good() {
    let script = paged_at("20", [Answer::status(410, "too old resource version")]);
    let (_cache, mut server) = watching(script, &usual());
    let [streaming, paged, watch, relist] = &requests(&mut server, 4).await[..] else {
        unreachable!()
    };
    assert!(streaming.is_streaming_list(), "{streaming:?}");
    assert!(paged.is_paged_list_from("0"), "{paged:?}");
    assert_eq!(paged.at, streaming.at, "at once");
    // And the relist after a later 410 pages too.
    assert!(watch.is_watch_from("20"), "{watch:?}");
    assert!(relist.is_paged_list_from("20"), "{relist:?}");
    assert_eq!(
        relist.param("resourceVersionMatch").as_deref(),
        Some("NotOlderThan")
    );
}

/// A streaming list can close, go silent or fail before its initial events end: the loop
/// pages at once (after the silence itself, for a silence).
#[tokio::test(start_paused = true)]
async fn a_streaming_list_that_fails_unsynced_pages_at_once() {
    let quiet = usual().stale_after / 2;
    for (end, waited) in [
        (Answer::body(200, ""), Duration::ZERO),
        (Answer::body(200, "").open(), quiet),
        (Answer::status(500, "boom"), Duration::ZERO),
    ] {
        let (_cache, mut server) = watching(vec![end], &usual());
        let [streaming, next] = &requests(&mut server, 2).await[..] else {
            unreachable!()
        };
        assert!(streaming.is_streaming_list(), "{streaming:?}");
        assert!(next.is_paged_list_from("0"), "{next:?}");
        assert_eq!(next.at, streaming.at + waited);
    }
}

#[tokio::test(start_paused = true)]
async fn a_watch_that_proved_itself_is_remade_at_once_from_the_newest_version() {
    // Open past the second that proves it, then closed by the server.
    let stayed = Duration::from_secs(2);
    let script = paged_at(
        "5",
        [
            Answer::body(200, "").then(stayed, ""),
            Answer::events(&[event("MODIFIED", pod("web", "u1", "9"))]),
        ],
    );
    let (_cache, mut server) = watching(script, &usual());
    let [.., first, second, third] = &requests(&mut server, 5).await[..] else {
        unreachable!()
    };
    assert!(first.is_watch_from("5"), "{first:?}");
    assert!(second.is_watch_from("5"), "{second:?}");
    assert_eq!(second.at, first.at + stayed, "at once");
    assert!(third.is_watch_from("9"), "{third:?}");
    assert_eq!(third.at, second.at, "at once");
}

#[tokio::test(start_paused = true)]
async fn a_watch_closed_at_once_backs_off_without_calling_the_scope_down() {
    let script = paged_at("5", [Answer::body(200, "")]);
    let (cache, mut server) = watching(script, &usual());
    let [.., closed, next] = &requests(&mut server, 4).await[..] else {
        unreachable!()
    };
    assert!(next.is_watch_from("5"), "{next:?}");
    assert!(next.at > closed.at, "a pause first");
    let health = health(&cache);
    assert_eq!(health.state, WatchState::Watching);
    assert_eq!(health.restarts, 0);
}

#[tokio::test(start_paused = true)]
async fn silence_and_failures_back_off_and_show_why() {
    // A watch never answered: nothing for the quiet half of the 20s bound.
    let (silent, mut server) = watching(paged_at("5", []), &usual());
    let [.., unanswered, next] = &requests(&mut server, 4).await[..] else {
        unreachable!()
    };
    assert!(
        next.is_watch_from("5"),
        "resumes from where it was: {next:?}"
    );
    assert!(next.at > unanswered.at + Duration::from_secs(10), "a pause");
    let error = silent.reader().health().last_error();
    assert!(
        error.as_ref().is_some_and(|e| e.contains("10s")),
        "{error:?}"
    );

    let script = vec![no_streaming(), Answer::status(500, "refused")];
    let (failed, mut server) = watching(script, &usual());
    let [_, paged, next] = &requests(&mut server, 3).await[..] else {
        unreachable!()
    };
    assert!(next.is_paged_list_from("0"), "{next:?}");
    assert!(next.at > paged.at, "a pause");
    let error = failed.reader().health().last_error();
    assert!(
        error.as_ref().is_some_and(|e| e.contains("refused")),
        "{error:?}"
    );

    // Forbidden is its own state: what the screen shows in place of the counts.
    let forbidden = Forbidden {
        verb: "list",
        resource: "pods",
        scope: Scope::All,
        message: "pods is forbidden".into(),
    };
    let script = vec![no_streaming(), Answer::status(403, "pods is forbidden")];
    let (refused, mut server) = watching(script, &usual());
    let [_, paged, next] = &requests(&mut server, 3).await[..] else {
        unreachable!()
    };
    assert!(next.at > paged.at, "a pause");
    assert_eq!(health(&refused).state, WatchState::Forbidden(forbidden));
}

#[tokio::test(start_paused = true)]
async fn an_expired_watch_relists_not_older_than_its_version() {
    let script = vec![
        synced_at("7"),
        Answer::status(410, "too old resource version"),
    ];
    let (cache, mut server) = watching(script, &usual());
    let [_, watch, relist] = &requests(&mut server, 3).await[..] else {
        unreachable!()
    };
    assert!(watch.is_watch_from("7"), "{watch:?}");
    assert!(relist.is_streaming_list(), "{relist:?}");
    assert_eq!(relist.param("resourceVersion").as_deref(), Some("7"));
    assert_eq!(
        relist.param("resourceVersionMatch").as_deref(),
        Some("NotOlderThan")
    );
    assert_eq!(relist.at, watch.at, "at once");
    let health = health(&cache);
    assert_eq!((health.relists, health.state), (1, WatchState::Relisting));
}

#[tokio::test(start_paused = true)]
async fn a_version_refused_by_a_list_falls_back_to_the_most_recent_in_pages() {
    let too_large = || Answer::status(504, "Too large resource version: 7, current: 3");
    let expired = || Answer::status(410, "too old resource version");
    // A paged list from 7, refused as gone or as too new; a streaming one, as too new.
    for script in [
        paged_at("7", [expired(), expired()]),
        paged_at("7", [expired(), too_large()]),
        vec![synced_at("7"), expired(), too_large()],
    ] {
        let streams = script.len() == 3;
        let (_cache, mut server) = watching(script.clone(), &usual());
        let seen = requests(&mut server, script.len() + 1).await;
        let [.., from_7, next] = &seen[..] else {
            unreachable!()
        };
        assert_eq!(from_7.is_streaming_list(), streams, "{from_7:?}");
        assert_eq!(from_7.param("resourceVersion").as_deref(), Some("7"));
        assert!(next.is_paged_list_from(""), "{next:?}");
        assert_eq!(next.at, from_7.at, "at once");
    }
    let (cache, mut server) = watching(vec![synced_at("7"), too_large()], &usual());
    let [_, watch, next] = &requests(&mut server, 3).await[..] else {
        unreachable!()
    };
    assert!(watch.is_watch_from("7"), "{watch:?}");
    assert!(next.is_paged_list_from(""), "{next:?}");
    assert_eq!(next.at, watch.at, "at once");
    assert_eq!(health(&cache).relists, 1);
}
