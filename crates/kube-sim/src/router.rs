//! URL paths to routes, and the request attributes RBAC checks look at.

use super::resources::Res;

/// An object-level request target: `/apis/{g}/{v}/namespaces/{ns}/{plural}/{name}/{sub}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub res: Res,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub sub: Option<String>,
    /// The legacy `/watch/` path prefix was used.
    pub watch_path: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    Version,
    Health,
    CoreVersions,
    CoreResources,
    Groups,
    Group(String),
    GroupResources(String, String),
    Namespaces(Option<String>),
    AccessReview,
    /// `events.k8s.io/v1` events: stored as core events, converted on the way.
    EventsV1 {
        namespace: Option<String>,
        name: Option<String>,
    },
    Object(Target),
    /// `/api/v1/namespaces/{ns}/services/{id}/proxy[/{path}]`: forwarded to the service.
    ServiceProxy(ProxyTarget),
}

/// Where a service proxy request goes.
#[derive(Clone, Debug, PartialEq)]
pub struct ProxyTarget {
    pub namespace: String,
    /// The `{name}`, `{name}:{port}` or `{scheme}:{name}:{port}` path segment, as sent.
    pub id: String,
    /// What follows `proxy` in the request path: "" (nothing), "/" or "/v1/…".
    pub path: String,
}

pub fn route(path: &str) -> Option<Route> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        ["version"] => Some(Route::Version),
        ["healthz" | "readyz" | "livez"] => Some(Route::Health),
        ["api"] => Some(Route::CoreVersions),
        ["api", "v1"] => Some(Route::CoreResources),
        ["api", "v1", "namespaces", ns, "services", id, "proxy", ..] => {
            Some(service_proxy(path, ns, id))
        }
        ["api", "v1", rest @ ..] => objects("", "v1", rest),
        ["apis"] => Some(Route::Groups),
        ["apis", g] => Some(Route::Group(g.to_string())),
        ["apis", g, v] => Some(Route::GroupResources(g.to_string(), v.to_string())),
        [
            "apis",
            "authorization.k8s.io",
            "v1",
            "selfsubjectaccessreviews",
        ] => Some(Route::AccessReview),
        ["apis", g, v, rest @ ..] => objects(g, v, rest),
        _ => None,
    }
}

/// The seven segments up to `proxy` name the target; whatever follows, slashes included, is
/// the backend's path.
fn service_proxy(path: &str, namespace: &str, id: &str) -> Route {
    let after_proxy = path.trim_start_matches('/').splitn(8, '/').nth(7);
    Route::ServiceProxy(ProxyTarget {
        namespace: namespace.to_string(),
        id: id.to_string(),
        path: after_proxy.map_or(String::new(), |rest| format!("/{rest}")),
    })
}

fn objects(group: &str, version: &str, rest: &[&str]) -> Option<Route> {
    let (watch_path, rest) = match rest {
        ["watch", tail @ ..] => (true, tail),
        _ => (false, rest),
    };
    let (namespace, rest) = match rest {
        ["namespaces"] if group.is_empty() => return Some(Route::Namespaces(None)),
        ["namespaces", ns] if group.is_empty() => {
            return Some(Route::Namespaces(Some(ns.to_string())));
        }
        ["namespaces", ns, tail @ ..] => (Some(ns.to_string()), tail),
        _ => (None, rest),
    };
    let (plural, name, sub) = match rest {
        [p] => (*p, None, None),
        [p, n] => (*p, Some(n.to_string()), None),
        [p, n, s] => (*p, Some(n.to_string()), Some(s.to_string())),
        _ => return None,
    };
    if (group, version, plural) == ("events.k8s.io", "v1", "events") && sub.is_none() {
        return Some(Route::EventsV1 { namespace, name });
    }
    let res = Res::lookup(group, version, plural)?;
    let def = res.def();
    let scoped_ok = if def.namespaced {
        namespace.is_some() || name.is_none()
    } else {
        namespace.is_none()
    };
    let sub_ok = sub.as_deref().is_none_or(|s| def.subresources.contains(&s));
    (scoped_ok && sub_ok && !name.as_deref().is_some_and(str::is_empty)).then_some(Route::Object(
        Target {
            res,
            namespace,
            name,
            sub,
            watch_path,
        },
    ))
}

/// The attributes authorization decides on.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestInfo {
    pub verb: String,
    pub group: String,
    pub plural: String,
    pub sub: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

impl RequestInfo {
    /// `pods` or `pods/eviction`, as RBAC rules name it.
    pub fn rbac_resource(&self) -> String {
        match &self.sub {
            Some(sub) => format!("{}/{sub}", self.plural),
            None => self.plural.clone(),
        }
    }
}

/// The Kubernetes verb for an HTTP method on a target.
pub fn verb(method: &http::Method, has_name: bool, watch: bool) -> &'static str {
    match *method {
        http::Method::GET if watch => "watch",
        http::Method::GET if has_name => "get",
        http::Method::GET => "list",
        http::Method::POST => "create",
        http::Method::PUT => "update",
        http::Method::PATCH => "patch",
        http::Method::DELETE if has_name => "delete",
        http::Method::DELETE => "deletecollection",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_objects() {
        let r = route("/api/v1/namespaces/ns/pods/p/eviction");
        let Some(Route::Object(t)) = r else {
            panic!("no route")
        };
        assert_eq!((t.res, t.sub.as_deref()), (Res::Pod, Some("eviction")));
        assert!(matches!(
            route("/apis/apps/v1/deployments"),
            Some(Route::Object(_))
        ));
        assert_eq!(route("/api/v1/pods/x"), None);
        let proxied = |path: &str| match route(path) {
            Some(Route::ServiceProxy(t)) => (t.id, t.path),
            other => panic!("{path}: {other:?}"),
        };
        let svc = "/api/v1/namespaces/ops/services";
        assert_eq!(
            proxied(&format!("{svc}/w:9090/proxy")),
            ("w:9090".into(), "".into())
        );
        assert_eq!(
            proxied(&format!("{svc}/w/proxy/")),
            ("w".into(), "/".into())
        );
        assert_eq!(
            proxied(&format!("{svc}/https:w:1/proxy/v1/a/")),
            ("https:w:1".into(), "/v1/a/".into())
        );
        assert_eq!(route("/api/v1/namespaces/ns/pods/p/bogus"), None);
        assert_eq!(
            route("/apis/argoproj.io/v1alpha1/namespaces/a/widgets"),
            None
        );
    }
}
