//! Realistic pods in bulk, for benchmarks and large simulated clusters: 9–13 KB of JSON each,
//! with managedFields, several containers, env, volumes, probes, labels and owners, and a mix of
//! healthy and abnormal states like a big production cluster's.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use crate::json::Fields;

mod events;

pub use events::{event_list_pages, hostile_event_list_pages, pod_events, warning_events};

/// Which state a generated pod is in. About one pod in ten is abnormal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Healthy,
    Evicted,
    Terminating,
    ImagePull,
    CrashLoop,
    ConfigError,
    Pending,
    Failed,
    NodeLost,
}

impl Shape {
    /// The state of pod number `i`, spread evenly over the mix.
    pub fn of(i: usize) -> Shape {
        match i % 200 {
            0..=5 => Shape::ImagePull,
            6..=9 => Shape::CrashLoop,
            10..=11 => Shape::Evicted,
            12..=13 => Shape::Terminating,
            14..=15 => Shape::Pending,
            16 => Shape::ConfigError,
            17..=18 => Shape::Failed,
            19 => Shape::NodeLost,
            _ => Shape::Healthy,
        }
    }
}

/// Who pod number `i` is: what its Events refer to as well.
struct Ident {
    app: &'static str,
    namespace: String,
    hash: String,
    name: String,
    uid: String,
    node: String,
    created: DateTime<Utc>,
}

impl Ident {
    fn of(i: usize, now: DateTime<Utc>) -> Self {
        let app = APPS.get(i % APPS.len()).copied().unwrap_or("app");
        let hash = format!("{:010x}", (i / 3 * 2_654_435_761) % 0xff_ffff_ffff);
        Self {
            app,
            namespace: format!("team-{:02}", (i / 7) % 50),
            name: format!("{app}-{}-{}", &hash[..9], suffix(i)),
            hash,
            uid: format!(
                "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
                i,
                i % 0xffff,
                i % 0xfff,
                (i * 7) % 0xfff,
                i * 31
            ),
            node: format!("node-{:03}", i % 500),
            created: now - Duration::minutes(30 + (i % 10_000) as i64),
        }
    }

    fn image(&self) -> String {
        format!("registry.example.com/shop/{}:4.12.3", self.app)
    }
}

fn stamp(d: DateTime<Utc>) -> String {
    d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Pod number `i` of a generated cluster, as the API server would return it.
pub fn realistic_pod(i: usize, now: DateTime<Utc>) -> Value {
    let Ident {
        app,
        namespace,
        hash,
        name,
        uid,
        node,
        created,
    } = Ident::of(i, now);
    let mut pod = json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "generateName": format!("{app}-{}-", &hash[..9]),
            "namespace": namespace,
            "uid": uid,
            "resourceVersion": (1_000_000 + i).to_string(),
            "creationTimestamp": stamp(created),
            "labels": {
                "app": app, "app.kubernetes.io/name": app, "app.kubernetes.io/instance": format!("{app}-prod"),
                "app.kubernetes.io/version": "4.12.3", "pod-template-hash": &hash[..9], "team": namespace,
                "security.istio.io/tlsMode": "istio", "service.istio.io/canonical-name": app,
            },
            "annotations": {
                "prometheus.io/scrape": "true", "prometheus.io/port": "9090", "prometheus.io/path": "/metrics",
                "checksum/config": "8f14e45fceea167a5a36dedd4bea2543f3c5e0d27e0b9a4c1f0d7e6b3a2c1d0e",
                "kubectl.kubernetes.io/restartedAt": stamp(created),
                "sidecar.istio.io/status": "{\"initContainers\":[\"istio-init\"],\"containers\":[\"istio-proxy\"],\"volumes\":[\"istio-envoy\",\"istio-data\",\"istio-podinfo\",\"istio-token\",\"istiod-ca-cert\"]}",
            },
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{app}-{}", &hash[..9]),
                                 "uid": format!("rs-{:08x}", i / 3), "controller": true, "blockOwnerDeletion": true}],
            "managedFields": managed_fields(&stamp(created)),
        },
        "spec": spec(app, &node),
        "status": running_status(app, &node, i, &stamp(created)),
    });
    shape(&mut pod, Shape::of(i), now, i);
    pod
}

/// The JSON bytes of `n` generated pods as list pages of `page` items, like a paginated LIST,
/// with kube-apiserver's key order (`kind`, `apiVersion`, `metadata`, `items`).
pub fn list_pages(n: usize, page: usize, now: DateTime<Utc>) -> Vec<Vec<u8>> {
    hostile_list_pages(n, page, now, 0, 0)
}

/// [`list_pages`] where the first `hostile` pods are a tenant's worst: each names a controller
/// of `owner_bytes` bytes (the API server takes any name in a reference) and fails to pull.
pub fn hostile_list_pages(
    n: usize,
    page: usize,
    now: DateTime<Utc>,
    hostile: usize,
    owner_bytes: usize,
) -> Vec<Vec<u8>> {
    let pages = n.div_ceil(page.max(1));
    let name = "x".repeat(owner_bytes);
    (0..pages)
        .map(|p| {
            let pods = (p * page..((p + 1) * page).min(n)).map(|i| {
                let mut pod = realistic_pod(i, now);
                if i < hostile {
                    pod.set_in("/metadata/ownerReferences/0", "name", json!(name));
                }
                pod
            });
            list_page("PodList", p, pages, pods)
        })
        .collect()
}

/// Page `p` of `pages` of a list of `kind`, continued by the token `page-{p + 1}`.
fn list_page(kind: &str, p: usize, pages: usize, items: impl Iterator<Item = Value>) -> Vec<u8> {
    let more = if p + 1 < pages {
        json!(format!("page-{}", p + 1))
    } else {
        Value::Null
    };
    let metadata = json!({"resourceVersion": "2000000", "continue": more});
    let mut out = format!(r#"{{"kind":"{kind}","apiVersion":"v1","metadata":{metadata},"items":["#)
        .into_bytes();
    for (k, item) in items.enumerate() {
        if k > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, &item).unwrap_or_default();
    }
    out.extend_from_slice(b"]}");
    out
}

/// The items of a page from [`list_pages`], without the brackets: what a server that ignores
/// `limit` joins with commas into one body.
pub fn page_items(page: &[u8]) -> &[u8] {
    const KEY: &[u8] = br#""items":["#;
    let start = page
        .windows(KEY.len())
        .position(|w| w == KEY)
        .map_or(page.len(), |at| at + KEY.len());
    page.get(start..page.len().saturating_sub(2).max(start))
        .unwrap_or_default()
}

/// One watch event line per generated pod (`MODIFIED`), newline-terminated, with `type` first
/// as the API server writes it (a decoder that meets `object` first has to buffer it).
pub fn watch_lines(n: usize, now: DateTime<Utc>) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut line = br#"{"type":"MODIFIED","object":"#.to_vec();
            line.extend(serde_json::to_vec(&realistic_pod(i, now)).unwrap_or_default());
            line.extend(b"}\n");
            line
        })
        .collect()
}

const APPS: [&str; 12] = [
    "checkout",
    "cart",
    "catalog",
    "search",
    "payments",
    "ledger",
    "auth",
    "gateway",
    "recommender",
    "inventory",
    "mailer",
    "media",
];

fn suffix(i: usize) -> String {
    let mut n = i * 2_654_435_761 + 12_345;
    (0..5)
        .map(|_| {
            let c = crate::meta::name_char(n as u64);
            n /= crate::meta::NAME_ALPHABET.len();
            c
        })
        .collect()
}

fn container(name: &str, image: &str, port: u16) -> Value {
    let env: Vec<Value> = (0..14)
        .map(|k| json!({"name": format!("{}_SETTING_{k}", name.to_uppercase().replace('-', "_")), "value": format!("value-{k}-for-{name}")}))
        .chain([json!({"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}})])
        .collect();
    let probe = |path: &str| {
        json!({"httpGet": {"path": path, "port": port, "scheme": "HTTP"}, "initialDelaySeconds": 10,
        "timeoutSeconds": 2, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    };
    json!({
        "name": name, "image": image, "imagePullPolicy": "IfNotPresent",
        "args": ["--config=/etc/app/config.yaml", "--log-level=info", format!("--port={port}")],
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}, {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
        "env": env,
        "resources": {"limits": {"cpu": "1", "memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": true},
                         {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
        "livenessProbe": probe("/healthz"), "readinessProbe": probe("/ready"),
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "runAsNonRoot": true,
                            "capabilities": {"drop": ["ALL"]}},
    })
}

fn spec(app: &str, node: &str) -> Value {
    json!({
        "containers": [container(app, &format!("registry.example.com/shop/{app}:4.12.3"), 8080),
                       container("istio-proxy", "docker.io/istio/proxyv2:1.22.1", 15090)],
        "volumes": [
            {"name": "config", "configMap": {"name": format!("{app}-config"), "defaultMode": 420}},
            {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}},
        ],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": app, "serviceAccount": app, "nodeName": node, "securityContext": {"fsGroup": 2000},
        "schedulerName": "default-scheduler", "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority",
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
    })
}

fn running_status(app: &str, node: &str, i: usize, at: &str) -> Value {
    let condition = |kind: &str| json!({"type": kind, "status": "True", "lastProbeTime": null, "lastTransitionTime": at});
    let status = |name: &str, image: &str| {
        json!({
            "name": name, "ready": true, "started": true, "restartCount": 0, "image": image,
            "imageID": format!("{image}@sha256:{:064x}", i),
            "containerID": format!("containerd://{:064x}", i * 17 + name.len()),
            "state": {"running": {"startedAt": at}}, "lastState": {},
        })
    };
    let conditions = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    .map(condition);
    json!({
        "phase": "Running",
        "conditions": conditions,
        "hostIP": format!("10.0.{}.{}", i / 250 % 250, i % 250), "hostIPs": [{"ip": format!("10.0.{}.{}", i / 250 % 250, i % 250)}],
        "podIP": format!("10.244.{}.{}", i / 250 % 250, i % 250), "podIPs": [{"ip": format!("10.244.{}.{}", i / 250 % 250, i % 250)}],
        "startTime": at, "qosClass": "Burstable", "nominatedNodeName": null, "nodeName": node,
        "containerStatuses": [status(app, &format!("registry.example.com/shop/{app}:4.12.3")),
                              status("istio-proxy", "docker.io/istio/proxyv2:1.22.1")],
    })
}

/// Turn a healthy pod into `shape`, with times well past every default threshold.
fn shape(pod: &mut Value, shape: Shape, now: DateTime<Utc>, i: usize) {
    let long_ago = stamp(now - Duration::hours(2));
    let waiting =
        |reason: &str, message: &str| json!({"waiting": {"reason": reason, "message": message}});
    match shape {
        Shape::Healthy => {}
        // The kubelet's bare back-off message: the reason is in its Failed Event.
        Shape::ImagePull => stalled(
            pod,
            waiting(
                "ImagePullBackOff",
                &format!("Back-off pulling image \"{}\"", Ident::of(i, now).image()),
            ),
            "Pending",
            &long_ago,
        ),
        Shape::ConfigError => stalled(
            pod,
            waiting("CreateContainerConfigError", "secret \"db\" not found"),
            "Pending",
            &long_ago,
        ),
        Shape::CrashLoop => {
            stalled(
                pod,
                waiting("CrashLoopBackOff", &events::back_off_message(i, now)),
                "Running",
                &long_ago,
            );
            let first = "/status/containerStatuses/0";
            pod.set_in(first, "restartCount", json!(17));
            pod.set_in(first, "lastState", json!({"terminated": {"reason": "OOMKilled", "exitCode": 137, "finishedAt": long_ago}}));
        }
        Shape::Evicted => {
            pod["status"] = json!({"phase": "Failed", "reason": "Evicted", "startTime": long_ago,
                "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi."});
        }
        Shape::Terminating => {
            pod.field("metadata")
                .set("deletionTimestamp", json!(long_ago));
            pod.field("metadata")
                .set("deletionGracePeriodSeconds", json!(30));
        }
        Shape::Pending => {
            pod["status"] = json!({"phase": "Pending", "qosClass": "Burstable", "conditions": [{"type": "PodScheduled",
                "status": "False", "reason": "Unschedulable", "lastTransitionTime": long_ago,
                "message": events::SCHEDULER_VERDICT}]});
            pod.field("spec").set("nodeName", Value::Null);
        }
        Shape::Failed => {
            pod.field("status").set("phase", json!("Failed"));
            pod.set_in(
                "/status/containerStatuses/0",
                "state",
                json!({"terminated": {"reason": "Error", "exitCode": 1, "finishedAt": long_ago}}),
            );
        }
        Shape::NodeLost => {
            pod.field("status").set("reason", json!("NodeLost"));
            pod.field("status").set(
                "message",
                json!("Node which was running this pod is unresponsive"),
            );
            not_ready(pod.field("status"), &long_ago);
        }
    }
}

/// The first container stuck in `state`, the pod not ready since `since`.
fn stalled(pod: &mut Value, state: Value, phase: &str, since: &str) {
    let first = "/status/containerStatuses/0";
    pod.set_in(first, "ready", json!(false));
    pod.set_in(first, "started", json!(false));
    pod.set_in(first, "state", state);
    pod.field("status").set("phase", json!(phase));
    not_ready(&mut pod["status"], since);
}

fn not_ready(status: &mut Value, since: &str) {
    if let Some(conditions) = status["conditions"].as_array_mut() {
        for c in conditions
            .iter_mut()
            .filter(|c| c["type"] == "Ready" || c["type"] == "ContainersReady")
        {
            c["status"] = json!("False");
            c["reason"] = json!("ContainersNotReady");
            c["lastTransitionTime"] = json!(since);
        }
    }
}

/// What the kubelet, the scheduler and controllers write into managedFields: the bulk of a
/// real pod's bytes, and exactly what a lean cache must never keep.
fn managed_fields(at: &str) -> Value {
    let containers_fields = |name: &str| {
        json!({format!("k:{{\"name\":\"{name}\"}}"): {".": {}, "f:args": {}, "f:env": {".": {},
            "k:{\"name\":\"POD_NAME\"}": {".": {}, "f:name": {}, "f:valueFrom": {".": {}, "f:fieldRef": {}}}},
            "f:image": {}, "f:imagePullPolicy": {}, "f:livenessProbe": {".": {}, "f:failureThreshold": {}, "f:httpGet": {".": {},
            "f:path": {}, "f:port": {}, "f:scheme": {}}, "f:initialDelaySeconds": {}, "f:periodSeconds": {}, "f:successThreshold": {},
            "f:timeoutSeconds": {}}, "f:name": {}, "f:ports": {".": {}, "k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {".": {},
            "f:containerPort": {}, "f:name": {}, "f:protocol": {}}}, "f:readinessProbe": {".": {}, "f:failureThreshold": {},
            "f:httpGet": {".": {}, "f:path": {}, "f:port": {}, "f:scheme": {}}}, "f:resources": {".": {}, "f:limits": {".": {},
            "f:cpu": {}, "f:memory": {}}, "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}}}, "f:securityContext": {".": {},
            "f:allowPrivilegeEscalation": {}, "f:capabilities": {".": {}, "f:drop": {}}, "f:readOnlyRootFilesystem": {},
            "f:runAsNonRoot": {}}, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}, "f:volumeMounts": {".": {},
            "k:{\"mountPath\":\"/etc/app\"}": {".": {}, "f:mountPath": {}, "f:name": {}, "f:readOnly": {}}}}})
    };
    json!([
        {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": at, "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
            "f:ownerReferences": {".": {}, "k:{\"uid\":\"0\"}": {}}},
            "f:spec": {"f:containers": containers_fields("app"), "f:dnsPolicy": {}, "f:enableServiceLinks": {},
                       "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {".": {}, "f:fsGroup": {}},
                       "f:serviceAccount": {}, "f:serviceAccountName": {}, "f:terminationGracePeriodSeconds": {},
                       "f:volumes": {".": {}, "k:{\"name\":\"config\"}": {".": {}, "f:configMap": {".": {}, "f:defaultMode": {}, "f:name": {}},
                       "f:name": {}}}}}},
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": at, "fieldsType": "FieldsV1", "subresource": "status",
         "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"ContainersReady\"}": {".": {}, "f:lastProbeTime": {},
            "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}, "k:{\"type\":\"Initialized\"}": {".": {}, "f:lastProbeTime": {},
            "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}, "k:{\"type\":\"PodReadyToStartContainers\"}": {".": {},
            "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}, "k:{\"type\":\"Ready\"}": {".": {},
            "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}},
            "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {}, "f:podIP": {},
            "f:podIPs": {".": {}, "k:{\"ip\":\"10.244.0.1\"}": {".": {}, "f:ip": {}}}, "f:startTime": {}}}},
        {"manager": "istio-sidecar-injector", "operation": "Update", "apiVersion": "v1", "time": at, "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:annotations": {"f:sidecar.istio.io/status": {}}},
            "f:spec": {"f:containers": containers_fields("istio-proxy")}}},
    ])
}
