//! HTTP front: faults, authorization and routing; `reply` makes the responses.

use std::convert::Infallible;

use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use tokio::sync::watch;

use super::cluster::SimCluster;
use super::query::Query;
use super::reply::{Body, Ctx, Reply, error_response, full, response_in, stream_response};
use super::router::{self, RequestInfo, Route};
use super::status::{ApiError, ApiResult};
use super::{discovery, extras, objects, proto};

pub async fn handle<B>(
    cluster: SimCluster,
    shutdown: watch::Receiver<bool>,
    server_address: String,
    req: Request<B>,
) -> Result<Response<Body>, Infallible>
where
    B: hyper::body::Body,
    B::Error: std::fmt::Display,
{
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    tracing::debug!(%method, uri = %req.uri(), "sim api request");
    let query = Query::parse(req.uri().query());
    let asked = (req.headers().get(header::ACCEPT))
        .and_then(|v| v.to_str().ok())
        .is_some_and(proto::wanted);
    let protobuf = cluster.mutate(|s| {
        s.protobuf_asked += u64::from(asked);
        asked && !s.faults.json_only
    });
    let error = |err: &ApiError| error_response(err, protobuf);
    let verb = request_verb(&method, &path, &query);
    if !wait_while_hung(&cluster, shutdown.clone(), verb, &path).await {
        return Ok(error(&ApiError::internal("the server is shutting down")));
    }
    let (latency, injected) = cluster.read(|s| {
        let injected = if s.faults.unauthorized {
            Some(ApiError::unauthorized())
        } else {
            s.faults
                .take_injection(method.as_str(), &path)
                .map(|i| i.to_error())
        };
        (s.faults.latency, injected)
    });
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    if let Some(err) = injected {
        return Ok(error(&err));
    }
    if let Err(err) = wait_for_watch_cache(&cluster, &method, &path, &query).await {
        return Ok(error(&err));
    }
    if let Some(Route::ServiceProxy(target)) = router::route(&path) {
        let proxied = super::proxy::serve(cluster, shutdown, server_address, target, req);
        return Ok(proxied.await);
    }
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = match req.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            return Ok(error(&ApiError::bad_request(format!("reading body: {e}"))));
        }
    };
    let ctx = Ctx {
        cluster,
        shutdown,
        method,
        query,
        content_type,
        protobuf,
        body,
        server_address,
    };
    let reply = match router::route(&path) {
        Some(route) => dispatch(&ctx, route),
        None => Err(ApiError::no_route()),
    };
    Ok(match reply {
        Ok(Reply::Json(code, value)) => response_in(code, &value, protobuf),
        Ok(Reply::Stream(body, content_type)) => stream_response(body, content_type),
        Ok(Reply::Text(text)) => {
            let mut resp = Response::new(full(text.into_bytes()));
            resp.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
            resp
        }
        Err(err) => error(&err),
    })
}

/// A list or streaming list that asks for a version the watch cache has not reached waits
/// for it, like kube-apiserver, and gets 504 "Too large resource version" if it does not come.
async fn wait_for_watch_cache(
    cluster: &SimCluster,
    method: &Method,
    path: &str,
    query: &Query,
) -> Result<(), ApiError> {
    let Some(Route::Object(target)) = router::route(path) else {
        return Ok(());
    };
    let watch = target.watch_path || query.is_watch();
    if method != Method::GET || target.name.is_some() {
        return Ok(());
    }
    let (wanted, wait) = cluster.read(|s| {
        let served = s.streaming_lists == super::cluster::StreamingLists::Served;
        let wanted = if watch && !served {
            None
        } else {
            super::list::min_version(query, watch, s.store.rv())
        };
        (wanted, s.too_large_wait)
    });
    let Some(wanted) = wanted else {
        return Ok(());
    };
    let mut changes = cluster.subscribe();
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let reached = cluster.read(|s| s.watch_cache_rv());
        if reached >= wanted {
            return Ok(());
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() {
                return Err(super::list::too_large(wanted, reached));
            },
            _ = tokio::time::sleep_until(deadline) => {
                return Err(super::list::too_large(wanted, reached));
            }
        }
    }
}

/// The Kubernetes verb of a request (`get`, `list`, `watch`, `update`, ...), as faults see it.
/// A streaming list (`watch=true&sendInitialEvents=true`) is the list it stands for, so a
/// fault on lists holds it too (RBAC still sees the `watch` it is).
fn request_verb(method: &Method, path: &str, query: &Query) -> &'static str {
    if method == Method::GET && query.is_watch() && query.flag("sendInitialEvents") {
        return "list";
    }
    let (named, watch) = match router::route(path) {
        Some(Route::Object(target)) => {
            let watch = target.watch_path || query.is_watch();
            (target.name.is_some() && !watch, watch)
        }
        Some(Route::EventsV1 { name, .. }) => (name.is_some(), query.is_watch()),
        Some(Route::Namespaces(name)) => (name.is_some(), false),
        _ => (true, false),
    };
    router::verb(method, named, watch)
}

/// Hold a request that a hang covers until the hang is lifted (true) or the server stops (false).
async fn wait_while_hung(
    cluster: &SimCluster,
    mut shutdown: watch::Receiver<bool>,
    verb: &str,
    path: &str,
) -> bool {
    let mut changes = cluster.subscribe();
    if !cluster.read(|s| s.faults.hangs(verb, path)) {
        return true;
    }
    tracing::debug!(%verb, %path, "sim api request hangs");
    let _held = Held::new(cluster);
    loop {
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return false },
            _ = shutdown.changed() => return false,
        }
        if !cluster.read(|s| s.faults.hangs(verb, path)) {
            return true;
        }
    }
}

/// Counts a hung request while it is held, however it ends (a client that gives up drops it).
struct Held(SimCluster);

impl Held {
    fn new(cluster: &SimCluster) -> Held {
        cluster.read(|s| s.faults.hung_now += 1);
        Held(cluster.clone())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0
            .read(|s| s.faults.hung_now = s.faults.hung_now.saturating_sub(1));
    }
}

fn dispatch(ctx: &Ctx, route: Route) -> ApiResult<Reply> {
    let ok = |v: Value| Ok(Reply::Json(StatusCode::OK, v));
    let get_only = |v: Option<Value>| match (ctx.method == Method::GET, v) {
        (false, _) => Err(ApiError::method_not_allowed()),
        (true, Some(v)) => ok(v),
        (true, None) => Err(ApiError::no_route()),
    };
    match route {
        Route::Version => get_only(Some(discovery::version())),
        Route::Health => get_only(Some(Value::String("ok".into()))),
        Route::CoreVersions => get_only(Some(discovery::core_versions(&ctx.server_address))),
        Route::CoreResources => get_only(discovery::resources("", "v1")),
        Route::Groups => get_only(Some(discovery::groups())),
        Route::Group(g) => get_only(discovery::group(&g)),
        Route::GroupResources(g, v) => get_only(discovery::resources(&g, &v)),
        Route::Namespaces(name) => {
            let verb = router::verb(&ctx.method, name.is_some(), false);
            authorize(ctx, info(verb, "", "namespaces", None, None, name.clone()))?;
            match (&ctx.method, name.as_deref()) {
                (&Method::GET, name) => ok(ctx.cluster.read(|s| extras::namespaces(s, name))?),
                (&Method::POST, None) => {
                    let body = ctx.json()?;
                    let created = ctx.cluster.mutate(|s| extras::create_namespace(s, &body))?;
                    Ok(Reply::Json(StatusCode::CREATED, created))
                }
                (&Method::DELETE, Some(name)) => {
                    ok(ctx.cluster.mutate(|s| extras::delete_namespace(s, name))?)
                }
                _ => Err(ApiError::method_not_allowed()),
            }
        }
        Route::AccessReview => {
            if ctx.method != Method::POST {
                return Err(ApiError::method_not_allowed());
            }
            let body = ctx.json()?;
            let review = ctx.cluster.read(|s| extras::access_review(s, &body))?;
            Ok(Reply::Json(StatusCode::CREATED, review))
        }
        Route::EventsV1 { namespace, name } => {
            let verb = router::verb(&ctx.method, name.is_some(), ctx.query.is_watch());
            authorize(
                ctx,
                info(
                    verb,
                    "events.k8s.io",
                    "events",
                    None,
                    namespace.clone(),
                    name.clone(),
                ),
            )?;
            objects::events_v1(ctx, namespace.as_deref(), name.as_deref())
        }
        // Answered in `handle`: the backend's own status and headers, its body streamed.
        Route::ServiceProxy(_) => Err(ApiError::no_route()),
        Route::Object(target) => {
            let watch = target.watch_path || ctx.query.is_watch();
            let verb = router::verb(&ctx.method, target.name.is_some() && !watch, watch);
            let res = target.res;
            authorize(
                ctx,
                info(
                    verb,
                    res.group(),
                    res.plural(),
                    target.sub.clone(),
                    target.namespace.clone(),
                    target.name.clone(),
                ),
            )?;
            objects::handle(ctx, &target, watch)
        }
    }
}

fn info(
    verb: &str,
    group: &str,
    plural: &str,
    sub: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
) -> RequestInfo {
    RequestInfo {
        verb: verb.to_string(),
        group: group.to_string(),
        plural: plural.to_string(),
        sub,
        namespace,
        name,
    }
}

fn authorize(ctx: &Ctx, info: RequestInfo) -> ApiResult<()> {
    ctx.cluster.read(|s| s.faults.authorize(&info))
}
