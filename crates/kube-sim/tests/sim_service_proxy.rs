//! Services, their Endpoints, and the API server's service proxy, exercised through an
//! unchanged `kube::Client` as a product would reach an in-cluster worker.

// A test fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::AsyncBufReadExt;
use k8s_openapi::api::core::v1::{Endpoints, Pod, Service};
use kube::api::{Api, ListParams, PostParams};
use kube_sim::{SimCluster, SimServer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;

const NS: &str = "ops";
/// Where the worker pod "runs": pods in the simulator have no network, so a test says which
/// loopback backend stands for this address.
const WORKER_IP: &str = "10.0.0.5";
/// The service proxy's path prefix in the test namespace.
const SERVICES: &str = "/api/v1/namespaces/ops/services";
/// Long enough for a byte in flight on loopback to arrive: its absence then means a stall.
const QUIET: Duration = Duration::from_millis(300);

async fn start() -> (SimCluster, SimServer) {
    let cluster = SimCluster::new();
    let server = SimServer::start(cluster.clone())
        .await
        .expect("server starts");
    (cluster, server)
}

fn api_status(err: kube::Error) -> kube::core::Status {
    match err {
        kube::Error::Api(status) => *status,
        other => panic!("expected an API error, got {other}"),
    }
}

/// A Service with `ports` as (name, port, targetPort); an empty name is an unnamed port.
fn service(name: &str, ports: &[(&str, u16, u16)]) -> Service {
    let ports: Vec<Value> = ports
        .iter()
        .map(|(port_name, port, target)| {
            let mut p = json!({ "port": port, "targetPort": target, "protocol": "TCP" });
            if !port_name.is_empty() {
                p["name"] = json!(port_name);
            }
            p
        })
        .collect();
    serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": NS },
        "spec": { "selector": { "app": name }, "ports": ports },
    }))
    .expect("valid service")
}

/// Endpoints for `name`: one address `ip` backed by pod `pod`, ready or not, on `ports` as
/// (name, port).
fn endpoints(name: &str, ip: &str, pod: &str, ready: bool, ports: &[(&str, u16)]) -> Endpoints {
    let address = json!({
        "ip": ip,
        "targetRef": { "kind": "Pod", "namespace": NS, "name": pod },
    });
    let which = if ready {
        "addresses"
    } else {
        "notReadyAddresses"
    };
    let ports: Vec<Value> = ports
        .iter()
        .map(|(port_name, port)| {
            let mut p = json!({ "port": port, "protocol": "TCP" });
            if !port_name.is_empty() {
                p["name"] = json!(port_name);
            }
            p
        })
        .collect();
    serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": NS },
        "subsets": [{ which: [address], "ports": ports }],
    }))
    .expect("valid endpoints")
}

#[tokio::test]
async fn services_and_endpoints_are_stored_listed_and_denied_like_other_objects() {
    let (cluster, server) = start().await;
    let services: Api<Service> = Api::namespaced(server.client(), NS);
    let all_endpoints: Api<Endpoints> = Api::namespaced(server.client(), NS);
    let pp = PostParams::default();
    services
        .create(&pp, &service("worker", &[("http", 9090, 9090)]))
        .await
        .unwrap();
    all_endpoints
        .create(
            &pp,
            &endpoints("worker", "10.0.0.5", "worker-0", true, &[("http", 9090)]),
        )
        .await
        .unwrap();

    let got = services.get("worker").await.unwrap();
    assert_eq!(got.spec.unwrap().ports.unwrap()[0].port, 9090);
    let listed = all_endpoints.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    let address = &listed.items[0].subsets.as_ref().unwrap()[0]
        .addresses
        .as_ref()
        .unwrap()[0];
    assert_eq!(address.ip, "10.0.0.5");

    cluster.faults().deny("list", "services", Some(NS));
    let denied = api_status(services.list(&ListParams::default()).await.unwrap_err());
    assert_eq!(denied.code, 403);
    assert_eq!(
        denied.message,
        format!(
            "services is forbidden: User \"{}\" cannot list resource \"services\" in API group \"\" in the namespace \"{NS}\"",
            kube_sim::USER
        )
    );
    let missing = api_status(services.get("nope").await.unwrap_err());
    assert_eq!(
        (missing.code, missing.message.as_str()),
        (404, "services \"nope\" not found")
    );
}

/// A pod the proxy will follow: Running at `ip` (the real server checks that the endpoint's
/// target pod has that IP).
fn worker_pod(name: &str, ip: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": NS, "labels": { "app": "worker" } },
        "spec": { "nodeName": "sim-node-1",
                  "containers": [{ "name": "worker", "image": "worker:1" }] },
        "status": { "phase": "Running", "podIP": ip, "podIPs": [{ "ip": ip }],
                    "conditions": [{ "type": "Ready", "status": "True" }] },
    }))
    .expect("valid pod")
}

/// What a scripted backend does next on the response it holds open.
enum Say {
    Line(&'static str),
    /// Close the connection mid-stream, as a worker that restarts does.
    Drop,
}

/// A worker stand-in on loopback. It reports every request it gets (head and body, as
/// received) and either answers at once with that text (`echo`) or opens a chunked response
/// the test writes line by line (`scripted`).
struct Backend {
    addr: SocketAddr,
    requests: mpsc::UnboundedReceiver<String>,
    script: mpsc::UnboundedSender<Say>,
    listener: JoinHandle<()>,
}

impl Backend {
    async fn echo() -> Backend {
        Backend::start(true).await
    }

    async fn scripted() -> Backend {
        Backend::start(false).await
    }

    async fn start(echo: bool) -> Backend {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (report, requests) = mpsc::unbounded_channel();
        let (script, said) = mpsc::unbounded_channel();
        let said = Arc::new(Mutex::new(said));
        let listener = tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                tokio::spawn(answer(conn, echo, report.clone(), said.clone()));
            }
        });
        Backend {
            addr,
            requests,
            script,
            listener,
        }
    }

    fn say(&self, what: Say) {
        self.script.send(what).unwrap();
    }

    async fn next_request(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(5), self.requests.recv())
            .await
            .expect("the backend got a request")
            .expect("the backend is up")
    }

    /// Stop listening: new connections are refused, as while a worker restarts.
    fn stop_listening(&self) {
        self.listener.abort();
    }
}

async fn answer(
    mut conn: TcpStream,
    echo: bool,
    report: mpsc::UnboundedSender<String>,
    said: Arc<Mutex<mpsc::UnboundedReceiver<Say>>>,
) {
    let request = read_request(&mut conn).await;
    let _ = report.send(request.clone());
    if echo {
        let len = request.len();
        let head =
            format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {len}\r\n\r\n");
        let _ = conn.write_all((head + &request).as_bytes()).await;
        return;
    }
    let head =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    let _ = conn.write_all(head.as_bytes()).await;
    let mut said = said.lock().await;
    while let Some(say) = said.recv().await {
        match say {
            Say::Line(line) => {
                let chunk = format!("{:x}\r\n{line}\n\r\n", line.len() + 1);
                let _ = conn.write_all(chunk.as_bytes()).await;
            }
            Say::Drop => return,
        }
    }
}

/// One request's head and body (by its Content-Length), as text.
async fn read_request(conn: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let body_len = header(&text, "content-length").map_or(0, |v| v.parse().unwrap());
            if got.len() >= end + 4 + body_len {
                return text;
            }
        }
        match conn.read(&mut buf).await {
            Ok(0) | Err(_) => return String::from_utf8_lossy(&got).to_string(),
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// A header's value in a request's text, by case-insensitive name.
fn header<'a>(request: &'a str, name: &str) -> Option<&'a str> {
    let head = request.split("\r\n\r\n").next()?;
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// A Service `worker` (port `http` 9090 to 9090) in front of pod `worker-0` at [`WORKER_IP`],
/// its ready Endpoints, all made through the API, and `backend` listening for that address.
async fn expose(server: &SimServer, backend: &Backend) {
    server
        .cluster()
        .create_pod(worker_pod("worker-0", WORKER_IP));
    let pp = PostParams::default();
    let services: Api<Service> = Api::namespaced(server.client(), NS);
    services
        .create(&pp, &service("worker", &[("http", 9090, 9090)]))
        .await
        .unwrap();
    let all_endpoints: Api<Endpoints> = Api::namespaced(server.client(), NS);
    all_endpoints
        .create(
            &pp,
            &endpoints("worker", WORKER_IP, "worker-0", true, &[("http", 9090)]),
        )
        .await
        .unwrap();
    server.serve_endpoint(WORKER_IP.parse().unwrap(), 9090, backend.addr);
}

fn get(path: &str) -> http::Request<Vec<u8>> {
    http::Request::get(path).body(Vec::new()).unwrap()
}

/// The Status a proxied GET of `path` fails with.
async fn proxy_failure(client: &kube::Client, path: &str) -> kube::core::Status {
    api_status(client.request_text(get(path)).await.unwrap_err())
}

#[tokio::test]
async fn every_path_form_reaches_the_backend() {
    let (_cluster, server) = start().await;
    let mut backend = Backend::echo().await;
    expose(&server, &backend).await;
    // One unnamed port: the bare service name reaches it, as does its number.
    let pp = PostParams::default();
    Api::<Service>::namespaced(server.client(), NS)
        .create(&pp, &service("plain", &[("", 8080, 9090)]))
        .await
        .unwrap();
    Api::<Endpoints>::namespaced(server.client(), NS)
        .create(
            &pp,
            &endpoints("plain", WORKER_IP, "worker-0", true, &[("", 9090)]),
        )
        .await
        .unwrap();
    let client = server.client();
    let ids = [
        "worker:9090",
        "worker:http",
        "https:worker:9090",
        "http:worker:http",
        "plain",
        "plain:8080",
    ];
    for id in ids {
        let path = format!("{SERVICES}/{id}/proxy/v1/status");
        let echoed = client.request_text(get(&path)).await.unwrap();
        assert!(
            echoed.starts_with("GET /v1/status HTTP/1.1\r\n"),
            "{id}: {echoed}"
        );
        backend.next_request().await;
    }
    let trailing = client
        .request_text(get(&format!("{SERVICES}/worker:9090/proxy/")))
        .await
        .unwrap();
    assert!(trailing.starts_with("GET / HTTP/1.1\r\n"), "{trailing}");
}

/// The wording of these failures is kube-apiserver's, from
/// pkg/registry/core/service/storage/storage.go (ResourceLocation) and
/// staging/src/k8s.io/apimachinery/pkg/util/net/port_split.go.
#[tokio::test]
async fn unresolvable_services_and_ports_fail_as_the_real_server_says() {
    let (_cluster, server) = start().await;
    let backend = Backend::echo().await;
    expose(&server, &backend).await;
    let client = server.client();
    let cases = [
        // A port number is looked up in the Service first.
        ("nope:9090", 404, "NotFound", "services \"nope\" not found"),
        // Without a number only the Endpoints are read.
        ("nope", 404, "NotFound", "endpoints \"nope\" not found"),
        (
            "worker:9999",
            503,
            "ServiceUnavailable",
            "no service port 9999 found for service \"worker\"",
        ),
        // The port is named, so the bare name (the unnamed port) finds no address.
        (
            "worker",
            503,
            "ServiceUnavailable",
            "no endpoints available for service \"worker\"",
        ),
        (
            "ftp:worker:9090",
            400,
            "BadRequest",
            "invalid service request \"ftp:worker:9090\"",
        ),
    ];
    for (id, code, reason, message) in cases {
        let status = proxy_failure(&client, &format!("{SERVICES}/{id}/proxy/v1/status")).await;
        assert_eq!(
            (status.code, status.reason.as_str(), status.message.as_str()),
            (code, reason, message),
            "{id}"
        );
    }
}

/// The wording is kube-apiserver's, from pkg/registry/core/service/storage/storage.go: with
/// no subsets at all it names the service, otherwise the whole `name:port` asked for.
#[tokio::test]
async fn no_ready_endpoint_is_503_until_one_is_ready() {
    let (cluster, server) = start().await;
    let mut backend = Backend::echo().await;
    expose(&server, &backend).await;
    let client = server.client();
    let path = format!("{SERVICES}/worker:9090/proxy/v1/status");
    let all_endpoints: Api<Endpoints> = Api::namespaced(server.client(), NS);
    let pp = PostParams::default();

    assert!(cluster.set_endpoints_ready(NS, "worker", false));
    let not_ready = proxy_failure(&client, &path).await;
    assert_eq!(
        (
            not_ready.code,
            not_ready.reason.as_str(),
            not_ready.message.as_str()
        ),
        (
            503,
            "ServiceUnavailable",
            "no endpoints available for service \"worker:9090\""
        )
    );

    let mut empty = all_endpoints.get("worker").await.unwrap();
    empty.subsets = None;
    all_endpoints.replace("worker", &pp, &empty).await.unwrap();
    let none = proxy_failure(&client, &path).await;
    assert_eq!(
        (none.code, none.message.as_str()),
        (503, "no endpoints available for service \"worker\"")
    );

    // A ready address whose pod has another IP is not followed.
    let mut stale = endpoints("worker", "10.0.0.99", "worker-0", true, &[("http", 9090)]);
    stale.metadata.resource_version = all_endpoints
        .get("worker")
        .await
        .unwrap()
        .metadata
        .resource_version;
    all_endpoints.replace("worker", &pp, &stale).await.unwrap();
    assert_eq!(proxy_failure(&client, &path).await.code, 503);

    let mut ready = endpoints("worker", WORKER_IP, "worker-0", false, &[("http", 9090)]);
    ready.metadata.resource_version = all_endpoints
        .get("worker")
        .await
        .unwrap()
        .metadata
        .resource_version;
    all_endpoints.replace("worker", &pp, &ready).await.unwrap();
    assert!(cluster.set_endpoints_ready(NS, "worker", true));
    client.request_text(get(&path)).await.unwrap();
    backend.next_request().await;
}

/// The wording is kube-apiserver's, from
/// staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go: the name is
/// the whole path segment, the resource `services/proxy`, the verb the request's.
#[tokio::test]
async fn a_forbidden_proxy_says_which_permission_is_missing() {
    let (cluster, server) = start().await;
    let mut backend = Backend::echo().await;
    expose(&server, &backend).await;
    cluster.faults().deny("get", "services/proxy", Some(NS));
    let client = server.client();
    let denied = proxy_failure(&client, &format!("{SERVICES}/worker:9090/proxy/v1/status")).await;
    assert_eq!((denied.code, denied.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        denied.message,
        format!(
            "services \"worker:9090\" is forbidden: User \"{}\" cannot get resource \"services/proxy\" in API group \"\" in the namespace \"{NS}\"",
            kube_sim::USER
        )
    );
    let details = denied.details.unwrap();
    assert_eq!(
        (details.name.as_str(), details.kind.as_str()),
        ("worker:9090", "services")
    );
    // Reading the Service itself is another permission, still granted.
    Api::<Service>::namespaced(client.clone(), NS)
        .get("worker")
        .await
        .unwrap();
    // A POST needs `create` on the subresource, which is not denied.
    let post = http::Request::post(format!("{SERVICES}/worker:9090/proxy/v1/rules"))
        .body(b"{}".to_vec())
        .unwrap();
    client.request_text(post).await.unwrap();
    assert!(
        backend
            .next_request()
            .await
            .starts_with("POST /v1/rules HTTP/1.1\r\n")
    );
}

#[tokio::test]
async fn path_query_and_body_pass_through_and_the_callers_credentials_do_not() {
    let (_cluster, server) = start().await;
    let mut backend = Backend::echo().await;
    expose(&server, &backend).await;
    let path = format!("{SERVICES}/worker:9090/proxy/v1/watch");
    let request = http::Request::post(format!("{path}?since=42&name=a%20b"))
        .header("Authorization", "Bearer engineer-token")
        .header("X-Trace", "kept")
        .header("Content-Type", "application/json")
        .body(br#"{"pause":"restarts"}"#.to_vec())
        .unwrap();
    server.client().request_text(request).await.unwrap();
    let got = backend.next_request().await;
    assert!(
        got.starts_with("POST /v1/watch?since=42&name=a%20b HTTP/1.1\r\n"),
        "{got}"
    );
    assert!(got.ends_with(r#"{"pause":"restarts"}"#), "{got}");
    assert_eq!(header(&got, "authorization"), None, "{got}");
    assert_eq!(header(&got, "x-trace"), Some("kept"));
    assert_eq!(header(&got, "x-forwarded-uri"), Some(path.as_str()));
    assert_eq!(header(&got, "x-forwarded-for"), Some("127.0.0.1"));
}

/// A proxied stream the client reads line by line.
type Lines = std::pin::Pin<Box<dyn futures::AsyncBufRead + Send>>;

/// A scripted backend behind `worker`, and the stream `client` opened to it through the proxy.
async fn open_stream(server: &SimServer, client: &kube::Client) -> (Backend, Lines) {
    let backend = Backend::scripted().await;
    expose(server, &backend).await;
    let path = format!("{SERVICES}/worker:9090/proxy/v1/watch");
    let opened = tokio::time::timeout(Duration::from_secs(5), client.request_stream(get(&path)));
    let lines = opened.await.expect("the headers come first").unwrap();
    (backend, Box::pin(lines))
}

/// Reads one line of a proxied stream, or None if nothing comes within [`QUIET`].
async fn line_within_quiet(lines: &mut Lines) -> Option<String> {
    let mut line = String::new();
    match tokio::time::timeout(QUIET, lines.read_line(&mut line)).await {
        Ok(read) => {
            read.unwrap();
            Some(line)
        }
        Err(_) => None,
    }
}

/// The backend writes `line` and the client reads it at once.
async fn passes_through(backend: &Backend, lines: &mut Lines, line: &'static str) {
    backend.say(Say::Line(line));
    let got = line_within_quiet(lines).await;
    assert_eq!(got, Some(format!("{line}\n")));
}

/// The stream breaks (an error), not ends cleanly, soon.
async fn breaks_off(lines: &mut Lines) {
    let mut rest = String::new();
    let ended = tokio::time::timeout(Duration::from_secs(5), lines.read_line(&mut rest))
        .await
        .expect("the stream ends");
    assert!(ended.is_err(), "cut, not a clean end: {ended:?} {rest:?}");
}

/// The first line arrives while the backend has not written the second.
async fn streams_line_by_line(server: &SimServer, client: kube::Client) {
    let (backend, mut lines) = open_stream(server, &client).await;
    passes_through(&backend, &mut lines, r#"{"seq":1}"#).await;
    let nothing_yet = line_within_quiet(&mut lines).await;
    assert_eq!(nothing_yet, None);
    passes_through(&backend, &mut lines, r#"{"seq":2}"#).await;
}

#[tokio::test]
async fn responses_stream_through_chunk_by_chunk_over_tcp() {
    let (_cluster, server) = start().await;
    streams_line_by_line(&server, server.client()).await;
}

#[tokio::test]
async fn responses_stream_through_chunk_by_chunk_in_process() {
    let (_cluster, server) = start().await;
    let (client, _link) = server.in_process_client();
    streams_line_by_line(&server, client).await;
}

/// The wording is kube-apiserver's, from
/// staging/src/k8s.io/apimachinery/pkg/util/proxy/transport.go, around Go's dial error.
#[tokio::test]
async fn an_unreachable_backend_is_503_error_trying_to_reach_service() {
    let (cluster, server) = start().await;
    let backend = Backend::echo().await;
    expose(&server, &backend).await;
    let client = server.client();
    let path = format!("{SERVICES}/worker:9090/proxy/v1/status");
    backend.stop_listening();
    let refused = proxy_failure(&client, &path).await;
    let expected =
        "error trying to reach service: dial tcp 10.0.0.5:9090: connect: connection refused";
    assert_eq!(
        (
            refused.code,
            refused.reason.as_str(),
            refused.message.as_str()
        ),
        (503, "ServiceUnavailable", expected)
    );
    // An address nothing was registered for is one nothing listens on.
    cluster.unserve_endpoint(WORKER_IP.parse().unwrap(), 9090);
    assert_eq!(proxy_failure(&client, &path).await.message, expected);
}

#[tokio::test]
async fn a_silenced_proxy_stream_stays_open_and_sends_nothing_until_it_speaks_again() {
    let (cluster, server) = start().await;
    let (backend, mut lines) = open_stream(&server, &server.client()).await;
    // A backend that says nothing holds the client: no deadline of the simulator's own.
    assert_eq!(line_within_quiet(&mut lines).await, None);
    passes_through(&backend, &mut lines, "one").await;

    cluster.faults().silence_proxies(true);
    backend.say(Say::Line("two"));
    assert_eq!(line_within_quiet(&mut lines).await, None, "silenced");
    cluster.faults().silence_proxies(false);
    let spoken = line_within_quiet(&mut lines).await;
    assert_eq!(spoken.as_deref(), Some("two\n"));
}

#[tokio::test]
async fn a_backend_that_closes_mid_stream_breaks_the_client_stream_off() {
    let (cluster, server) = start().await;
    let client = server.client();
    let (backend, mut lines) = open_stream(&server, &client).await;
    passes_through(&backend, &mut lines, "one").await;
    backend.say(Say::Drop);
    breaks_off(&mut lines).await;

    // The fault does the same to every open proxied stream.
    let path = format!("{SERVICES}/worker:9090/proxy/v1/watch");
    let mut again: Lines = Box::pin(client.request_stream(get(&path)).await.unwrap());
    passes_through(&backend, &mut again, "two").await;
    cluster.faults().drop_proxies();
    breaks_off(&mut again).await;
}

#[tokio::test]
async fn a_server_that_stops_breaks_its_open_proxy_streams_off() {
    let (_cluster, server) = start().await;
    let client = server.client();
    let (backend, mut lines) = open_stream(&server, &client).await;
    passes_through(&backend, &mut lines, "one").await;
    server.shutdown().await;
    breaks_off(&mut lines).await;
}
