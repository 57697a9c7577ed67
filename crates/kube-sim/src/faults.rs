//! Fault injection: RBAC denials, throttling, errors, latency, watch trouble, and the faults
//! of a frozen server: watches that stay open and silent, requests that never answer.

use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

use super::cluster::SimCluster;
use super::resources::Res;
use super::status::ApiError;
use crate::json::Fields;

/// The identity the simulated server authenticates every request as.
pub const USER: &str = "system:serviceaccount:sim:tester";

/// What an injected failure answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Injected {
    /// 429 TooManyRequests with `Retry-After` and `details.retryAfterSeconds`.
    TooManyRequests { retry_after_secs: u32 },
    /// 500 InternalError.
    InternalError,
    /// 401 Unauthorized.
    Unauthorized,
}

#[derive(Clone, Debug)]
struct Denial {
    verb: String,
    /// `pods`, or `pods/eviction` for a subresource.
    resource: String,
    namespace: Option<String>,
}

/// Requests that get no answer while the hang is on (a frozen server, a dropped route).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Hang {
    verb: Option<String>,
    path_prefix: String,
}

impl Hang {
    fn matches(&self, verb: &str, path: &str) -> bool {
        self.verb.as_deref().is_none_or(|v| v == verb) && path.starts_with(&self.path_prefix)
    }
}

#[derive(Clone, Debug)]
struct Injection {
    method: Option<String>,
    path_prefix: String,
    remaining: u32,
    answer: Injected,
}

/// Fault state, kept inside the cluster lock.
#[derive(Default)]
pub struct FaultState {
    denials: Vec<Denial>,
    injections: Vec<Injection>,
    pub latency: Duration,
    pub unauthorized: bool,
    /// Answer JSON whatever the client asks, as an old or aggregated API server does.
    pub json_only: bool,
    /// Bumped to make every open watch drop its connection.
    pub watch_drop_gen: u64,
    pub watch_stalled: bool,
    /// Watches opened up to this one (counted by `watches_served`) send nothing at all, not
    /// even at their timeout: open, and silent. 0: none.
    pub silent_through: u64,
    /// Every watch ends as soon as it is answered: 200 and an empty stream.
    pub close_watches: bool,
    /// Proxied responses pass nothing on (open, silent) while set.
    pub proxies_silent: bool,
    /// Bumped to cut every open proxied response mid-stream.
    pub proxy_cut_gen: u64,
    hangs: Vec<Hang>,
    /// Requests held by a hang right now.
    pub hung_now: u32,
    pub expire_watches: u32,
    /// Added to every Lease's `renewTime` on GET: the holder's clock is off by this much.
    lease_skew: chrono::TimeDelta,
}

impl FaultState {
    /// Is `verb` on `resource` (maybe `res/sub`) in `namespace` denied?
    pub fn denied(&self, verb: &str, resource: &str, namespace: Option<&str>) -> bool {
        self.denials.iter().any(|d| {
            (d.verb == "*" || d.verb == verb)
                && (d.resource == "*" || d.resource == resource)
                && d.namespace
                    .as_deref()
                    .is_none_or(|ns| Some(ns) == namespace)
        })
    }

    /// 403 with the real server's message if a denial covers the request.
    pub fn authorize(&self, info: &super::router::RequestInfo) -> Result<(), ApiError> {
        if self.denied(&info.verb, &info.rbac_resource(), info.namespace.as_deref()) {
            Err(forbidden(info))
        } else {
            Ok(())
        }
    }

    /// Does a request for `verb` on `path` hang (get no answer) right now?
    pub fn hangs(&self, verb: &str, path: &str) -> bool {
        self.hangs.iter().any(|h| h.matches(verb, path))
    }

    /// A stored object as served: a Lease's `renewTime` moved by the clock skew.
    pub fn served(&self, res: Res, mut object: Value) -> Value {
        if res != Res::Lease || self.lease_skew.is_zero() {
            return object;
        }
        let renewed = object
            .pointer("/spec/renewTime")
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<DateTime<Utc>>().ok());
        if let Some(renewed) = renewed {
            let skewed = (renewed + self.lease_skew).to_rfc3339_opts(SecondsFormat::Micros, true);
            object.field("spec").set("renewTime", Value::String(skewed));
        }
        object
    }

    /// The injected failure for this request, consuming one use of it.
    pub fn take_injection(&mut self, method: &str, path: &str) -> Option<Injected> {
        let hit = self.injections.iter_mut().find(|i| {
            i.remaining > 0
                && i.method
                    .as_deref()
                    .is_none_or(|m| m.eq_ignore_ascii_case(method))
                && path.starts_with(&i.path_prefix)
        })?;
        hit.remaining -= 1;
        let answer = hit.answer;
        self.injections.retain(|i| i.remaining > 0);
        Some(answer)
    }
}

impl Injected {
    pub fn to_error(self) -> ApiError {
        match self {
            Injected::TooManyRequests { retry_after_secs } => ApiError::too_many_requests(
                "Too many requests, please try again later.",
                retry_after_secs,
            ),
            Injected::InternalError => {
                ApiError::internal("Internal error occurred: injected fault")
            }
            Injected::Unauthorized => ApiError::unauthorized(),
        }
    }
}

/// Test-facing handle for fault injection; get it with [`SimCluster::faults`].
#[derive(Clone)]
pub struct Faults {
    cluster: SimCluster,
}

impl SimCluster {
    pub fn faults(&self) -> Faults {
        Faults {
            cluster: self.clone(),
        }
    }
}

impl Faults {
    /// Deny `verb` (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, or `*`) on a
    /// resource (`pods`, `deployments`, `pods/eviction`, `deployments/scale`, or `*`),
    /// in one namespace or (None) everywhere. Requests get 403 and access reviews say no.
    pub fn deny(&self, verb: &str, resource: &str, namespace: Option<&str>) {
        let d = Denial {
            verb: verb.to_string(),
            resource: resource.to_string(),
            namespace: namespace.map(String::from),
        };
        self.cluster.read(|s| s.faults.denials.push(d));
    }

    /// Remove every denial.
    pub fn allow_all(&self) {
        self.cluster.read(|s| s.faults.denials.clear());
    }

    /// The next `count` requests whose method matches (None = any) and whose path starts with
    /// `path_prefix` get `answer` instead of being served.
    pub fn fail_next(&self, count: u32, method: Option<&str>, path_prefix: &str, answer: Injected) {
        let i = Injection {
            method: method.map(String::from),
            path_prefix: path_prefix.to_string(),
            remaining: count,
            answer,
        };
        self.cluster.read(|s| s.faults.injections.push(i));
    }

    /// Shorthand: the next `count` matching requests get 429 with `Retry-After`.
    pub fn throttle_next(
        &self,
        count: u32,
        method: Option<&str>,
        path_prefix: &str,
        retry_after_secs: u32,
    ) {
        self.fail_next(
            count,
            method,
            path_prefix,
            Injected::TooManyRequests { retry_after_secs },
        );
    }

    /// Add latency before every request is served.
    pub fn set_latency(&self, latency: Duration) {
        self.cluster.read(|s| s.faults.latency = latency);
    }

    /// Answer JSON even to a client that asks for protobuf, as an old or aggregated API
    /// server does, until switched off.
    pub fn answer_json_only(&self, on: bool) {
        self.cluster.read(|s| s.faults.json_only = on);
    }

    /// Answer every request with 401 until switched off (expired credentials).
    pub fn set_unauthorized(&self, on: bool) {
        self.cluster.read(|s| s.faults.unauthorized = on);
    }

    /// Cut every open watch connection now.
    pub fn drop_watches(&self) {
        self.cluster.mutate(|s| s.faults.watch_drop_gen += 1);
    }

    /// Stop (true) or resume (false) sending anything on watches, keeping them open.
    pub fn stall_watches(&self, stalled: bool) {
        self.cluster.mutate(|s| s.faults.watch_stalled = stalled);
    }

    /// Keep every watch open now connected and completely silent (no events, no bookmarks, no
    /// close at its timeout) until switched off, as a load balancer that dropped the streams
    /// would; watches opened later are served as usual (a new connection gets through). Unlike
    /// [`Faults::stall_watches`], nothing ends the silent ones but the client, a
    /// [`Faults::drop_watches`] or the server's shutdown. Switched off, they carry on where they
    /// stopped.
    pub fn silence_watches(&self, silent: bool) {
        self.cluster
            .mutate(|s| s.faults.silent_through = if silent { s.watches_served } else { 0 });
    }

    /// Hold every proxied response, open now or opened later (true), as a load balancer or
    /// backend that stops sending would: no bytes, no end, until switched off (false), when
    /// what was held is passed on.
    pub fn silence_proxies(&self, silent: bool) {
        self.cluster.mutate(|s| s.faults.proxies_silent = silent);
    }

    /// Cut every open proxied response now, mid-stream, as a backend that restarts does: the
    /// client sees its stream break, not end.
    pub fn drop_proxies(&self) {
        self.cluster.mutate(|s| s.faults.proxy_cut_gen += 1);
    }

    /// Answer every watch (true) with 200 and an empty stream that ends at once, as a
    /// misbehaving proxy might, until switched off.
    pub fn close_watches_at_once(&self, on: bool) {
        self.cluster.mutate(|s| s.faults.close_watches = on);
    }

    /// Requests for `verb` (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`;
    /// None = any) whose path starts with `path_prefix` get no answer at all until
    /// [`Faults::unhang`] lifts it: the connection stays open, nothing comes back. Once lifted,
    /// they are served as usual, as by a server that thaws.
    pub fn hang(&self, verb: Option<&str>, path_prefix: &str) {
        let hang = Hang {
            verb: verb.map(String::from),
            path_prefix: path_prefix.to_string(),
        };
        self.cluster.mutate(|s| s.faults.hangs.push(hang));
    }

    /// How many requests a hang holds right now (so a test knows a call is in flight).
    pub fn hung_requests(&self) -> u32 {
        self.cluster.read(|s| s.faults.hung_now)
    }

    /// Lift the hang set with the same verb and prefix.
    pub fn unhang(&self, verb: Option<&str>, path_prefix: &str) {
        self.cluster.mutate(|s| {
            s.faults
                .hangs
                .retain(|h| h.verb.as_deref() != verb || h.path_prefix != path_prefix)
        });
    }

    /// Serve every Lease with its `renewTime` moved by `skew` (negative: in the past), as if
    /// its holder's wall clock were off. Electors must not trust it: zero switches it off.
    pub fn skew_lease_clock(&self, skew: chrono::TimeDelta) {
        self.cluster.read(|s| s.faults.lease_skew = skew);
    }

    /// The whole server freezes (true) or thaws (false), as with SIGSTOP and SIGCONT on a
    /// kube-apiserver: open watches fall silent and every new request (watches too) hangs.
    pub fn freeze(&self, frozen: bool) {
        self.silence_watches(frozen);
        if frozen {
            self.hang(None, "/");
        } else {
            self.unhang(None, "/");
        }
    }

    /// Hang (true) or serve (false) every Lease request in `namespace` (GET and PUT alike):
    /// an API server that takes the renewal and never answers.
    pub fn hang_leases(&self, namespace: &str, hung: bool) {
        let prefix = lease_prefix(namespace);
        if hung {
            self.hang(None, &prefix);
        } else {
            self.unhang(None, &prefix);
        }
    }

    /// The next watch request gets the 410 Expired ERROR event at once.
    pub fn expire_next_watch(&self) {
        self.cluster.read(|s| s.faults.expire_watches += 1);
    }

    /// Compact history now: older resourceVersions answer 410.
    pub fn compact_history(&self) {
        self.cluster.compact();
    }

    /// Clear every fault (denials, injections, latency, 401, stall, silence, hangs).
    pub fn reset(&self) {
        self.cluster.mutate(|s| {
            let (generation, hung_now) = (s.faults.watch_drop_gen, s.faults.hung_now);
            let proxy_cut_gen = s.faults.proxy_cut_gen;
            s.faults = FaultState {
                watch_drop_gen: generation,
                proxy_cut_gen,
                hung_now,
                ..FaultState::default()
            };
        });
    }
}

fn lease_prefix(namespace: &str) -> String {
    format!("/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases")
}

/// The real server's Forbidden message for a request.
pub fn forbidden(info: &super::router::RequestInfo) -> ApiError {
    let resource = info.rbac_resource();
    let what = match &info.name {
        Some(name) => format!(
            "{} \"{name}\"",
            super::status::qualified(&info.group, &info.plural)
        ),
        None => super::status::qualified(&info.group, &info.plural),
    };
    let scope = match &info.namespace {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_string(),
    };
    let msg = format!(
        "{what} is forbidden: User \"{USER}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
        info.verb, info.group
    );
    ApiError::forbidden(msg).about(
        &info.group,
        &info.plural,
        info.name.as_deref().unwrap_or(""),
    )
}
