//! A server whose watch cache cannot page answers the first list (`resourceVersion=0`) with
//! every pod in one body: 1.6 GB of JSON at 150,000 pods. The watch loop must decode it as it
//! arrives, never holding the body, and must not cut it for taking long. A counting allocator
//! measures the whole process's peak heap while a loopback server streams a body several times
//! larger than the budget.

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use chrono::Utc;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use kube_sim::generate::realistic_pod;
use opc_core::cluster::{
    Cache, Deadlines, Scope, WatchSettings, client_with_deadlines, list_pods, spawn_watches,
};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call goes to the system allocator unchanged; only sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const PODS: usize = 4_000;
/// The product's memory budget, 2 KB per pod, plus room for the runtime, the client and one item under way.
const BUDGET: usize = PODS * 2048 + 4 * 1024 * 1024;

type Body = BoxBody<Bytes, Infallible>;

/// Serves `PODS` realistic pods as kube-apiserver v1.24 does: no streaming lists (422), a list
/// at `resourceVersion=0` in one body whatever the limit, generated item by item so the server
/// holds none of it; a watch that stays open and quiet.
async fn answer(req: Request<Incoming>, served: Arc<AtomicUsize>) -> Response<Body> {
    let query = req.uri().query().unwrap_or("").to_string();
    let json = |code: u16, body: Body| {
        Response::builder()
            .status(code)
            .header("content-type", "application/json")
            .body(body)
            .expect("a response")
    };
    if query.contains("sendInitialEvents=true") {
        let refusal = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled","reason":"Invalid","code":422}"#;
        return json(422, Full::new(Bytes::from_static(refusal)).boxed());
    }
    if query.contains("watch=true") {
        let quiet = StreamBody::new(futures::stream::pending::<Result<Frame<Bytes>, Infallible>>());
        return json(200, quiet.boxed());
    }
    assert!(
        query.contains("resourceVersion=0"),
        "the first list asks the watch cache: {query}"
    );
    let now = Utc::now();
    let head =
        br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":["#;
    let items = (0..PODS).map(move |i| {
        let mut item = if i == 0 { Vec::new() } else { vec![b','] };
        serde_json::to_writer(&mut item, &realistic_pod(i, now)).expect("a pod serializes");
        item
    });
    let chunks = std::iter::once(head.to_vec())
        .chain(items)
        .chain(std::iter::once(b"]}".to_vec()))
        .map(move |chunk| {
            served.fetch_add(chunk.len(), Ordering::Relaxed);
            Ok::<_, Infallible>(Frame::data(Bytes::from(chunk)))
        });
    json(200, StreamBody::new(futures::stream::iter(chunks)).boxed())
}

/// Twenty small pods, one every `gap`; before the eleventh, a further `stall`.
async fn answer_slowly(gap: Duration, stall: Duration) -> Response<Body> {
    let head =
        br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":["#;
    let items = (0..20).map(|i| {
        let comma = if i == 0 { "" } else { "," };
        format!(r#"{comma}{{"metadata":{{"name":"p{i}","namespace":"a","uid":"u{i}"}}}}"#)
            .into_bytes()
    });
    let chunks = std::iter::once(head.to_vec())
        .chain(items)
        .chain(std::iter::once(b"]}".to_vec()))
        .enumerate();
    let paced = futures::StreamExt::then(
        futures::stream::iter(chunks),
        move |(i, chunk)| async move {
            tokio::time::sleep(if i == 11 { gap + stall } else { gap }).await;
            Ok::<_, Infallible>(Frame::data(Bytes::from(chunk)))
        },
    );
    Response::builder()
        .header("content-type", "application/json")
        .body(StreamBody::new(paced).boxed())
        .expect("a response")
}

/// A list of 150,000 pods in one body takes longer than any fixed request deadline: the
/// deadline bounds each wait for the next piece of the body, not the whole body.
#[tokio::test]
async fn a_list_body_that_keeps_coming_is_not_cut_and_one_that_stalls_is() {
    let deadlines = Deadlines {
        connect: Duration::from_secs(1),
        request: Duration::from_millis(300),
    };
    let client = |url: String| {
        let config = kube::Config::new(url.parse().expect("a URL"));
        client_with_deadlines(config, deadlines).expect("a client")
    };
    let slowly = |gap: Duration, stall: Duration| serve(move |_| answer_slowly(gap, stall));
    let flowing = client(slowly(Duration::from_millis(60), Duration::ZERO).await);
    let started = std::time::Instant::now();
    let listed = list_pods(
        &flowing,
        &Scope::All,
        500,
        opc_core::config::WireFormat::default(),
    )
    .await
    .expect("the whole list");
    assert_eq!(listed.pods.len(), 20);
    assert!(
        started.elapsed() > Duration::from_secs(1),
        "longer than the deadline"
    );

    let stalling = client(slowly(Duration::from_millis(60), Duration::from_millis(600)).await);
    let error = list_pods(
        &stalling,
        &Scope::All,
        500,
        opc_core::config::WireFormat::default(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(error.contains("did not answer within 0.3s"), "{error}");
}

/// A loopback HTTP/1.1 server answering every request with `answer`; its URL.
async fn serve<F, Fut>(answer: F) -> String
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response<Body>> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let reply = answer(req);
                    async move { Ok::<_, Infallible>(reply.await) }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_body_first_list_is_decoded_without_holding_the_body() {
    let served = Arc::new(AtomicUsize::new(0));
    let counting = served.clone();
    let url = serve(move |req| answer(req, counting.clone())).await;
    let mut config = kube::Config::new(url.parse().expect("a URL"));
    config.default_retry = false;
    let client = kube::Client::try_from(config).expect("a client");
    let settings = WatchSettings {
        page_size: 500,
        stale_after: Duration::from_secs(30),
        ..WatchSettings::default()
    };
    let cache = Cache::new();
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);

    let watches = spawn_watches(&client, &[Scope::All], &cache, &settings);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !cache.health().synced() {
        assert!(tokio::time::Instant::now() < deadline, "never synced");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let peak = PEAK.load(Ordering::Relaxed) - before;
    let body = served.load(Ordering::Relaxed);
    watches.iter().for_each(|w| w.abort());
    eprintln!(
        "{PODS} pods, one body of {body} bytes: peak heap {peak} bytes ({} per pod)",
        peak / PODS
    );

    assert_eq!(cache.len(), PODS, "every pod of the one-body list");
    assert!(
        body > 3 * BUDGET,
        "the body ({body} bytes) must dwarf the budget ({BUDGET}) for this to prove anything"
    );
    assert!(
        peak <= BUDGET,
        "peak heap while listing {PODS} pods in one {} MB body: {:.1} MB ({} bytes per pod), \
         budget {:.1} MB",
        body / 1_000_000,
        peak as f64 / 1e6,
        peak / PODS,
        BUDGET as f64 / 1e6
    );
}
