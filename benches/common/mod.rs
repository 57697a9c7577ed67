//! What the bench binaries share: reading a process's CPU and memory from `/proc`, and a
//! loopback API server.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

/// The TUI at `bin` reading `config`, in a home of its own under `dir` (so nothing of the
/// user's is read or written), its three streams on the pseudo-terminal `slave`.
pub fn tui_command(
    bin: &std::path::Path,
    dir: &std::path::Path,
    config: &std::path::Path,
    slave: std::fs::File,
) -> std::process::Command {
    use std::process::Stdio;
    let home = dir.join("tui-home");
    std::fs::create_dir_all(&home).expect("home");
    let mut command = std::process::Command::new(bin);
    command
        .env("OPS_POD_CLEANER_CONFIG", config)
        .env("HOME", &home)
        .env("XDG_DATA_HOME", &home)
        .env("XDG_CONFIG_HOME", &home)
        .env("TERM", "xterm-256color")
        .current_dir(&home)
        .stdin(Stdio::from(slave.try_clone().expect("pty")))
        .stdout(Stdio::from(slave.try_clone().expect("pty")))
        .stderr(Stdio::from(slave));
    command
}

pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1048576.0
}

/// A `/proc/PID/status` field in kB (`VmRSS:`, `VmHWM:`), as bytes.
pub fn proc_status(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib: Option<u64> = status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse().ok());
    kib.unwrap_or(0) * 1024
}

/// utime + stime of a process, in clock ticks.
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may contain spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A loopback HTTP/1.1 server answering every request with `answer`; returns its base URL.
pub async fn serve<S, F>(state: S, answer: fn(Request<Incoming>, S) -> F) -> String
where
    S: Clone + Send + Sync + 'static,
    F: Future<Output = Response<BoxBody<Bytes, Infallible>>> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let state = state.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| {
                    let reply = answer(req, state.clone());
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

/// A pod list as the bench servers answer it, from pages made by `kube_sim`'s `list_pages`:
/// the page a `continue=page-N` token names; or, at `resourceVersion=0` (the watch cache),
/// unless `paged_cache`, every pod in one body whatever the `limit`, as every server whose watch
/// cache cannot page answers (a 150,000-pod list is 1.7 GB of JSON). The body streams from the
/// pages without a copy; `bytes_per_sec` above 0 paces it like a real API server.
pub fn list_body(
    pages: &[Bytes],
    query: &str,
    paged_cache: bool,
    bytes_per_sec: u64,
) -> BoxBody<Bytes, Infallible> {
    use futures::StreamExt;
    use http_body_util::{BodyExt, StreamBody};
    let whole = !paged_cache && query.split('&').any(|kv| kv == "resourceVersion=0");
    let chunks: Vec<Bytes> = if whole {
        let head = br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"2000000"},"items":["#;
        let mut chunks = vec![Bytes::from_static(head)];
        for (i, page) in pages.iter().enumerate() {
            if i > 0 {
                chunks.push(Bytes::from_static(b","));
            }
            let items = kube_sim::generate::page_items(page);
            let start = items.as_ptr() as usize - page.as_ptr() as usize;
            chunks.push(page.slice(start..start + items.len()));
        }
        chunks.push(Bytes::from_static(b"]}"));
        chunks
    } else {
        let index = query
            .split('&')
            .find_map(|kv| kv.strip_prefix("continue=page-"))
            .and_then(|n| n.parse::<usize>().ok());
        vec![pages.get(index.unwrap_or(0)).cloned().unwrap_or_default()]
    };
    let paced = futures::stream::iter(chunks).then(move |chunk| async move {
        if bytes_per_sec > 0 {
            let secs = chunk.len() as f64 / bytes_per_sec as f64;
            tokio::time::sleep(std::time::Duration::from_secs_f64(secs)).await;
        }
        Ok::<_, Infallible>(hyper::body::Frame::data(chunk))
    });
    BodyExt::boxed(StreamBody::new(paced))
}

/// kube-apiserver's answer to a streaming list (`sendInitialEvents`) with the WatchList gate
/// off, as on v1.24 and on 1.27–1.33 by default: the product then lists.
pub fn no_streaming_lists() -> Response<BoxBody<Bytes, Infallible>> {
    use http_body_util::{BodyExt, Full};
    Response::builder()
        .status(422)
        .header("content-type", "application/json")
        .body(
            Full::new(Bytes::from_static(
                br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled","reason":"Invalid","code":422}"#,
            ))
            .boxed(),
        )
        .expect("response")
}

/// A quiet loopback API server's answer: its version, every pod from `pods` (in one body from
/// the watch cache, as `list_body` says), Warning Events from `events` (always paged: an API
/// server keeps no watch cache for them), and watches that stay open and say nothing.
#[allow(dead_code)] // Not the churn bench's: its watches carry the churn.
pub fn answer_quiet(
    req: &Request<Incoming>,
    pods: &[Bytes],
    events: &[Bytes],
    bytes_per_sec: u64,
) -> Response<BoxBody<Bytes, Infallible>> {
    use http_body_util::{BodyExt, Full, StreamBody};
    let json = |body: BoxBody<Bytes, Infallible>| {
        Response::builder()
            .header("content-type", "application/json")
            .body(body)
            .expect("response")
    };
    let query = req.uri().query().unwrap_or("");
    match req.uri().path() {
        "/version" => json(
            Full::new(Bytes::from_static(
                br#"{"major":"1","minor":"33","gitVersion":"v1.33.0"}"#,
            ))
            .boxed(),
        ),
        "/api/v1/pods" if query.contains("sendInitialEvents=true") => no_streaming_lists(),
        "/api/v1/pods" | "/api/v1/events" if query.contains("watch=true") => json(
            StreamBody::new(futures::stream::pending::<
                Result<hyper::body::Frame<Bytes>, Infallible>,
            >())
            .boxed(),
        ),
        "/api/v1/pods" => json(list_body(pods, query, false, bytes_per_sec)),
        "/api/v1/events" => json(list_body(events, query, true, bytes_per_sec)),
        _ => Response::builder()
            .status(404)
            .body(Full::new(Bytes::new()).boxed())
            .expect("response"),
    }
}
