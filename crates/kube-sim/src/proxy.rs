//! The API server's service proxy: `…/services/{id}/proxy[/{path}]` forwarded to a ready
//! endpoint of the Service, and its response streamed back frame by frame as it comes, with
//! no deadline of the simulator's own (kube-apiserver serves these as long-running requests).

use std::io;
use std::net::{IpAddr, SocketAddr};

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::cluster::SimCluster;
use super::reply::{Body, error_response};
use super::router::{self, ProxyTarget, RequestInfo};
use super::services::{self, ServiceId};
use super::status::{ApiError, ApiResult};

impl SimCluster {
    /// Say where endpoint address `ip:port` really listens: `to`, a backend on loopback, since
    /// pods in the simulator have no network. The proxy dials `to` for it; an address with no
    /// registration refuses connections, as one nothing listens on.
    pub fn serve_endpoint(&self, ip: IpAddr, port: u16, to: SocketAddr) {
        self.read(|s| s.backends.insert(SocketAddr::new(ip, port), to));
    }

    /// Forget where `ip:port` listens: it refuses connections from now on.
    pub fn unserve_endpoint(&self, ip: IpAddr, port: u16) {
        self.read(|s| s.backends.remove(&SocketAddr::new(ip, port)));
    }
}

/// Serve one proxy request: every failure is the Status the real server answers.
pub async fn serve<B>(
    cluster: SimCluster,
    shutdown: watch::Receiver<bool>,
    server_address: String,
    target: ProxyTarget,
    req: Request<B>,
) -> Response<Body>
where
    B: hyper::body::Body,
    B::Error: std::fmt::Display,
{
    // The API server's own refusals come in the format the client asked for, as any other.
    let protobuf = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(crate::proto::wanted);
    let forwarded = forward(&cluster, &server_address, &target, req).await;
    match forwarded {
        Ok(Forwarded::Redirect(location)) => redirect(&location),
        Ok(Forwarded::Answer(response)) => relay(cluster, shutdown, response),
        Err(err) => error_response(&err, protobuf),
    }
}

/// What forwarding came to, short of a failure.
enum Forwarded {
    /// GET of the bare `…/proxy`: the real server sends the client to `…/proxy/`.
    Redirect(String),
    Answer(Response<Incoming>),
}

async fn forward<B>(
    cluster: &SimCluster,
    server_address: &str,
    target: &ProxyTarget,
    req: Request<B>,
) -> ApiResult<Forwarded>
where
    B: hyper::body::Body,
    B::Error: std::fmt::Display,
{
    let (parts, body) = req.into_parts();
    let info = RequestInfo {
        verb: rbac_verb(&parts.method).to_string(),
        group: String::new(),
        plural: "services".into(),
        sub: Some("proxy".into()),
        namespace: Some(target.namespace.clone()),
        name: Some(target.id.clone()),
    };
    cluster.read(|s| s.faults.authorize(&info))?;
    let id = ServiceId::parse(&target.id)?;
    let (endpoint, listener) = cluster.read(|s| {
        let endpoint = services::locate(s, &target.namespace, &id)?;
        Ok::<_, ApiError>((endpoint, s.backends.get(&endpoint).copied()))
    })?;
    if target.path.is_empty() && matches!(parts.method, Method::GET | Method::HEAD) {
        let query = parts.uri.query().map_or(String::new(), |q| format!("?{q}"));
        return Ok(Forwarded::Redirect(format!("{}/{query}", parts.uri.path())));
    }
    let body = body
        .collect()
        .await
        .map_err(|e| ApiError::bad_request(format!("reading body: {e}")))?
        .to_bytes();
    let request = backend_request(parts, &target.path, body, server_address)?;
    let stream = dial(endpoint, listener).await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(unreachable)?;
    // Drives the backend connection; it ends when the response does or the backend goes.
    tokio::spawn(connection);
    let response = sender.send_request(request).await.map_err(unreachable)?;
    Ok(Forwarded::Answer(response))
}

/// The verb RBAC checks on `services/proxy`: the request's own (a GET needs `get`).
fn rbac_verb(method: &Method) -> &'static str {
    match *method {
        Method::HEAD => "get",
        ref other => router::verb(other, true, false),
    }
}

/// Connect to the backend standing for `endpoint`, failing as Go's dialer words it.
async fn dial(endpoint: SocketAddr, listener: Option<SocketAddr>) -> ApiResult<TcpStream> {
    let refused = || format!("dial tcp {endpoint}: connect: connection refused");
    let Some(listener) = listener else {
        return Err(unreachable(refused()));
    };
    TcpStream::connect(listener).await.map_err(|e| {
        let why = match e.kind() {
            io::ErrorKind::ConnectionRefused => refused(),
            _ => format!("dial tcp {endpoint}: connect: {e}"),
        };
        unreachable(why)
    })
}

/// The real server's answer when the backend cannot be reached (its proxy transport's words).
fn unreachable(why: impl std::fmt::Display) -> ApiError {
    ApiError::service_unavailable(format!("error trying to reach service: {why}"))
}

/// Headers that describe one hop, not the message: a proxy never passes them on.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Headers the real proxy strips from a backend's answer, so a backend cannot open the API
/// server to other origins.
const CORS: [&str; 4] = [
    "access-control-allow-credentials",
    "access-control-allow-headers",
    "access-control-allow-methods",
    "access-control-allow-origin",
];

fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::try_from(name.trim()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
}

/// The request the backend gets: the caller's method, headers and body for `path` and the
/// caller's query, without hop-by-hop headers or the caller's credentials (the API server
/// drops `Authorization` once it has authenticated the caller), with the `X-Forwarded-For`
/// and `X-Forwarded-Uri` kube-apiserver adds. It sets no `X-Forwarded-Host` or `-Proto`: the
/// URL a Go server sees has neither host nor scheme.
fn backend_request(
    parts: http::request::Parts,
    path: &str,
    body: Bytes,
    server_address: &str,
) -> ApiResult<Request<Full<Bytes>>> {
    let mut headers = parts.headers;
    strip_hop_by_hop(&mut headers);
    headers.remove(header::AUTHORIZATION);
    if !headers.contains_key(header::HOST) {
        headers.insert(header::HOST, header_value(server_address)?);
    }
    // Every client of the simulator is on loopback.
    let forwarded_for = match headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()) {
        Some(prior) => format!("{prior}, 127.0.0.1"),
        None => "127.0.0.1".to_string(),
    };
    headers.insert("x-forwarded-for", header_value(&forwarded_for)?);
    headers.insert("x-forwarded-uri", header_value(parts.uri.path())?);
    let path = if path.is_empty() { "/" } else { path };
    let uri = match parts.uri.query() {
        Some(query) => format!("{path}?{query}"),
        None => path.to_string(),
    };
    let mut request = Request::new(Full::new(body));
    *request.method_mut() = parts.method;
    *request.uri_mut() = uri
        .parse()
        .map_err(|e| ApiError::bad_request(format!("invalid proxy path {uri:?}: {e}")))?;
    *request.headers_mut() = headers;
    Ok(request)
}

fn header_value(text: &str) -> ApiResult<HeaderValue> {
    HeaderValue::from_str(text)
        .map_err(|e| ApiError::bad_request(format!("invalid header value {text:?}: {e}")))
}

fn redirect(location: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).map_err(|n| match n {}).boxed());
    *response.status_mut() = StatusCode::MOVED_PERMANENTLY;
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// The backend's answer as the client gets it: status and headers (less the hop-by-hop and
/// CORS ones), and the body passed on frame by frame as it arrives, held while proxies are
/// silenced and broken off when they are cut or the server stops.
fn relay(
    cluster: SimCluster,
    shutdown: watch::Receiver<bool>,
    response: Response<Incoming>,
) -> Response<Body> {
    let (mut parts, incoming) = response.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    for name in CORS {
        parts.headers.remove(name);
    }
    let relay = Relay {
        generation: cluster.read(|s| s.faults.proxy_cut_gen),
        changes: cluster.subscribe(),
        cluster,
        shutdown,
        incoming,
        ended: false,
    };
    let frames = futures::stream::unfold(relay, |mut relay| async move {
        let frame = relay.next().await?;
        Some((frame, relay))
    });
    Response::from_parts(parts, BodyExt::boxed(StreamBody::new(frames)))
}

/// One proxied body on its way to the client.
struct Relay {
    cluster: SimCluster,
    changes: watch::Receiver<u64>,
    shutdown: watch::Receiver<bool>,
    /// The cut generation this stream started in: a later one cuts it.
    generation: u64,
    incoming: Incoming,
    ended: bool,
}

impl Relay {
    /// The next frame for the client, None at the body's end, or an error that breaks the
    /// response off (the client sees a truncated stream, as when a backend dies mid-stream).
    async fn next(&mut self) -> Option<io::Result<Frame<Bytes>>> {
        if self.ended {
            return None;
        }
        // A frame taken from the backend but not yet passed on (Some(None): its end).
        let mut held: Option<Option<Result<Frame<Bytes>, hyper::Error>>> = None;
        loop {
            let (silent, cut) = self.cluster.read(|s| {
                let faults = &s.faults;
                (
                    faults.proxies_silent,
                    faults.proxy_cut_gen != self.generation,
                )
            });
            if cut || *self.shutdown.borrow() {
                return self.break_off("the proxied stream was cut");
            }
            if !silent && let Some(frame) = held.take() {
                return match frame {
                    None => {
                        self.ended = true;
                        None
                    }
                    Some(Ok(frame)) => Some(Ok(frame)),
                    Some(Err(e)) => self.break_off(&e.to_string()),
                };
            }
            tokio::select! {
                frame = self.incoming.frame(), if held.is_none() => held = Some(frame),
                changed = self.changes.changed() => if changed.is_err() {
                    return self.break_off("the simulated cluster is gone");
                },
                stopped = self.shutdown.changed() => if stopped.is_err() {
                    return self.break_off("the server stopped");
                },
            }
        }
    }

    fn break_off(&mut self, why: &str) -> Option<io::Result<Frame<Bytes>>> {
        self.ended = true;
        Some(Err(io::Error::other(why.to_string())))
    }
}
