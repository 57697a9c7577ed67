//! A watch answer's events as they arrive, JSON lines or protobuf frames, read from what they
//! leave in the cache and from the request the watch loop makes after them.

use opc_core::cluster::{Cache, WatchState};
use opc_core::config::WireFormat;

use crate::cluster_watch::{Answer, Seen, Server, paged_at, usual, watching};
use crate::pod_proto::proto_build::{body, field, frame, message};

/// A watch from version 5 answered with `answer`, once a list has been had in pages; the
/// watch's request and the one after it.
async fn watched(answer: Answer) -> (Cache, Seen, Seen) {
    let settings = opc_core::cluster::WatchSettings {
        wire: WireFormat::Protobuf,
        ..usual()
    };
    let script = paged_at("5", [answer]);
    let (cache, mut server) = watching(script, &settings);
    let [watch, next] = last_two(&mut server, 4).await;
    assert!(watch.is_watch_from("5"), "{watch:?}");
    (cache, watch, next)
}

async fn last_two(server: &mut Server, n: usize) -> [Seen; 2] {
    let mut seen = Vec::new();
    for _ in 0..n {
        seen.push(server.next().await);
    }
    let next = seen.pop().unwrap();
    [seen.pop().unwrap(), next]
}

fn names(cache: &Cache) -> Vec<String> {
    cache.fold(Vec::new(), |mut names, pod| {
        names.push(pod.name.to_string());
        names
    })
}

fn pod_named(name: &str, version: &str) -> Vec<u8> {
    let meta = message(&[field(1, name.as_bytes()), field(6, version.as_bytes())]);
    body("Pod", &field(1, &meta))
}

#[tokio::test(start_paused = true)]
async fn frames_split_across_reads_are_put_together_and_a_bad_one_is_skipped() {
    let garbage = [&4u32.to_be_bytes()[..], &[0xff, 0xff, 0xff, 0xff]].concat();
    let stream = [
        frame("ADDED", &pod_named("web", "7")),
        garbage,
        frame("MODIFIED", &pod_named("web", "8")),
    ]
    .concat();
    let (cache, watch, next) = watched(Answer::frames(stream).in_pieces(3)).await;
    assert_eq!(names(&cache), ["web"]);
    // Read on past the bad frame to the last event's version, and closed as a watch that
    // proved itself: remade at once from there.
    assert!(next.is_watch_from("8"), "{next:?}");
    assert_eq!(next.at, watch.at);
}

#[tokio::test(start_paused = true)]
async fn a_frame_longer_than_any_object_breaks_the_stream() {
    let stream = [&u32::MAX.to_be_bytes()[..], b"rest"].concat();
    let (cache, watch, next) = watched(Answer::frames(stream)).await;
    let health = cache.reader().health();
    assert!(
        matches!(&health.scopes[0].state, WatchState::Reconnecting { error } if error.contains("broken")),
        "{health:?}"
    );
    assert!(next.is_watch_from("5") && next.at > watch.at, "{next:?}");
}

#[tokio::test(start_paused = true)]
async fn json_lines_give_events_skip_what_does_not_decode_and_read_an_error_status_at_the_end() {
    let lines = concat!(
        r#"{"type":"ADDED","object":{"metadata":{"name":"web","resourceVersion":"7"}}}"#,
        "\n\n",
        r#"{"type":"ADDED","object":{"metadata":{"name":7}}}"#,
        "\n",
        r#"{"kind":"Status","status":"Failure","reason":"Expired","code":410}"#,
    );
    let (cache, watch, next) = watched(Answer::body(200, lines)).await;
    assert_eq!(names(&cache), ["web"]);
    // The 410 at the end: a relist from the version the event brought, at once.
    assert!(next.is_paged_list_from("7"), "{next:?}");
    assert_eq!(next.at, watch.at);
    assert_eq!(cache.reader().health().scopes[0].relists, 1);
}

#[tokio::test(start_paused = true)]
async fn a_stream_ending_inside_an_event_ends_without_it() {
    let whole = frame("ADDED", &pod_named("web", "7"));
    let half = whole[..whole.len() / 2].to_vec();
    let (cache, watch, next) = watched(Answer::frames(half).in_pieces(5)).await;
    assert!(names(&cache).is_empty());
    // Closed with nothing said: no error, and a pause before the next watch.
    assert_eq!(cache.reader().health().last_error(), None);
    assert!(next.is_watch_from("5") && next.at > watch.at, "{next:?}");
}
