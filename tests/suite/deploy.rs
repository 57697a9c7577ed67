//! The deployment files stay in step with the code: the ClusterRole and the namespaced Role
//! grant exactly the permissions the code calls, and the ClusterRole nothing that can change a
//! pod template or another component's objects; the ConfigMap is a valid config whose webhook
//! secrets come from the Secret the StatefulSet mounts; the StatefulSet is hardened, keeps its
//! state on a volume claim and has a liveness probe a slow API server cannot trip; a
//! NetworkPolicy lets only the scrape reach its port. All of it as `kubectl apply -k` installs
//! it: each install the kustomize layout offers is rendered (`support::kustomize`) and checked.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::support::kustomize::{build, deploy_dir, documents};

use crate::support::rbac::{
    CLUSTER_PERMISSIONS, FINALIZER_PERMISSIONS, LEASE_NAME, NAMESPACED_PERMISSIONS, PERSONAL_ONLY,
};
use chrono::Utc;
use opc_core::actions::{DEFAULT_NAMESPACE, FOLLOWED_OWNERS, PARKED_CONFIGMAP, WorkloadKind};
use opc_core::config::{Config, FixedEnvironment, SecretSource, Sink};
use opc_core::lease::LeaseSettings;
use opc_core::worker::WorkerStatus;
use ops_pod_cleaner::headless::metrics::{WORKER_STALL, healthz};
use serde_json::{Value, json};

/// (API group, resource, verb).
pub(crate) type Permission = (String, String, String);
/// (API group, resource, verb, the one name it is limited to).
pub(crate) type Named = (String, String, String, Option<String>);

/// A file under `assets/deploy`, as text.
fn read(file: &str) -> String {
    std::fs::read_to_string(deploy_dir().join(file)).unwrap()
}

/// What `kubectl apply -k assets/deploy` installs: the first install, in dry run.
fn installed() -> Vec<Value> {
    build(&deploy_dir())
}

/// Each directory `kubectl apply -k` installs from: the first install (in dry run), live, and
/// the CronJob.
pub(crate) const INSTALLS: [&str; 3] = [".", "overlays/live", "overlays/cronjob"];

/// What `kubectl apply -k assets/deploy/<dir>` installs.
pub(crate) fn install(dir: &str) -> Vec<Value> {
    build(&deploy_dir().join(dir))
}

/// The pod template of an install's one worker, a StatefulSet's or a CronJob's.
pub(crate) fn worker_pod(objects: &[Value]) -> Value {
    let templates: Vec<&Value> = objects
        .iter()
        .filter_map(|o| match o["kind"].as_str() {
            Some("StatefulSet") => Some(&o["spec"]["template"]),
            Some("CronJob") => Some(&o["spec"]["jobTemplate"]["spec"]["template"]),
            Some("Deployment" | "DaemonSet" | "Job" | "Pod" | "ReplicaSet") => {
                panic!("an unexpected workload: {o}")
            }
            _ => None,
        })
        .collect();
    assert_eq!(templates.len(), 1, "one worker per install");
    templates[0].clone()
}

/// The object of this kind and name.
pub(crate) fn named<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

pub(crate) fn kind<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}

pub(crate) fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// Every (group, resource, verb, name) a role's rules grant; no name: any object.
pub(crate) fn grants(role: &Value) -> BTreeSet<Named> {
    let mut set = BTreeSet::new();
    for rule in role["rules"].as_array().unwrap() {
        let names = strings(&rule["resourceNames"]);
        let names: Vec<Option<String>> = if names.is_empty() {
            vec![None]
        } else {
            names.into_iter().map(Some).collect()
        };
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    for name in &names {
                        set.insert((group.clone(), resource.clone(), verb.clone(), name.clone()));
                    }
                }
            }
        }
    }
    set
}

/// A cluster-wide role's grants; none of them may be limited by name.
pub(crate) fn unnamed(role: &Value) -> BTreeSet<Permission> {
    grants(role)
        .into_iter()
        .map(|(g, r, v, name)| {
            assert_eq!(name, None, "{g} {r} {v}: unexpected resourceNames");
            (g, r, v)
        })
        .collect()
}

pub(crate) fn triples(list: &[(&str, &str, &str)]) -> BTreeSet<Permission> {
    list.iter()
        .map(|(g, r, v)| (g.to_string(), r.to_string(), v.to_string()))
        .collect()
}

fn cluster_role() -> Value {
    kind(&installed(), "ClusterRole").clone()
}

pub(crate) fn role() -> Value {
    kind(&installed(), "Role").clone()
}

#[test]
fn the_cluster_role_grants_exactly_the_cluster_wide_permissions() {
    assert_eq!(unnamed(&cluster_role()), triples(CLUSTER_PERMISSIONS));
}

#[test]
fn the_role_grants_exactly_the_namespaced_permissions_each_by_name() {
    let declared: BTreeSet<Named> = NAMESPACED_PERMISSIONS
        .iter()
        .map(|(g, r, v, n)| {
            (
                g.to_string(),
                r.to_string(),
                v.to_string(),
                n.map(String::from),
            )
        })
        .collect();
    let granted = grants(&role());
    assert_eq!(granted, declared);
    // Only `create` goes unnamed: RBAC cannot limit it by name.
    for (group, resource, verb, name) in &granted {
        assert!(
            name.is_some() || verb == "create",
            "{verb} {group}/{resource} must be limited by resourceNames"
        );
    }
    // The names are the code's: the Lease the replicas elect with, the parked ConfigMap.
    assert_eq!(LEASE_NAME, LeaseSettings::from_env().name);
    let names: BTreeSet<String> = granted.into_iter().filter_map(|g| g.3).collect();
    assert_eq!(
        names,
        BTreeSet::from([LEASE_NAME.to_string(), PARKED_CONFIGMAP.to_string()])
    );
}

/// What in a cluster-wide role could change a pod template or another component's objects.
fn too_much(role: &Value) -> BTreeSet<String> {
    // Creating or writing any of these runs whatever image and service account it names.
    const TEMPLATES: [&str; 10] = [
        "deployments",
        "statefulsets",
        "replicasets",
        "replicationcontrollers",
        "rollouts",
        "daemonsets",
        "jobs",
        "cronjobs",
        "podtemplates",
        "pods",
    ];
    let mut found = BTreeSet::new();
    for (group, resource, verb, _) in grants(role) {
        let what = format!("{verb} {group}/{resource}");
        let wildcard = [&group, &resource, &verb].iter().any(|s| s.contains('*'));
        let template_write = TEMPLATES.contains(&resource.as_str())
            && matches!(verb.as_str(), "create" | "update" | "patch");
        // The product's own objects are in its namespace; cluster-wide these would reach
        // control-plane leader leases, node heartbeats and every ConfigMap.
        let foreign = matches!(resource.as_str(), "leases" | "configmaps" | "secrets");
        let escalation = matches!(verb.as_str(), "escalate" | "bind" | "impersonate");
        if wildcard || template_write || foreign || escalation {
            found.insert(what);
        }
    }
    found
}

#[test]
fn the_cluster_role_cannot_change_a_pod_template_or_anothers_lease() {
    assert_eq!(too_much(&cluster_role()), BTreeSet::new());
    // The check itself catches what the old ClusterRole granted.
    let old = json!({"rules": [
        {"apiGroups": ["apps"], "resources": ["deployments", "deployments/scale"], "verbs": ["get", "patch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "patch"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
        {"apiGroups": ["batch"], "resources": ["*"], "verbs": ["get"]},
    ]});
    assert_eq!(
        too_much(&old),
        BTreeSet::from(
            [
                "patch apps/deployments",
                "patch /pods",
                "create coordination.k8s.io/leases",
                "get coordination.k8s.io/leases",
                "update coordination.k8s.io/leases",
                "get batch/*",
            ]
            .map(String::from)
        )
    );
}

#[test]
fn finalizer_removal_is_a_separate_optional_cluster_role() {
    let docs = documents(&deploy_dir().join("rbac-finalizers.yaml"));
    assert_eq!(docs.len(), 1, "the role only: whoever wants it binds it");
    let finalizers = kind(&docs, "ClusterRole");
    assert_eq!(unnamed(finalizers), triples(FINALIZER_PERMISSIONS));
    assert_ne!(
        finalizers["metadata"]["name"],
        cluster_role()["metadata"]["name"]
    );
    for (group, resource, verb) in triples(FINALIZER_PERMISSIONS) {
        assert!(
            !unnamed(&cluster_role()).contains(&(group, resource.clone(), verb.clone())),
            "the main ClusterRole grants {verb} {resource}"
        );
    }
}

/// Each `Needs { verb, resource }` in the core's `src/actions/`, read from the product source.
fn needs_in_actions() -> Vec<(String, String)> {
    let mut found = Vec::new();
    let dir = format!("{}/crates/core/src/actions", env!("CARGO_MANIFEST_DIR"));
    for file in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
        let mut verb = None;
        // A unit test's literal is not a call.
        let product = text.split("#[cfg(test)]").next().unwrap_or_default();
        for line in product.lines().map(str::trim) {
            if let Some(v) = line.strip_prefix("verb: \"") {
                verb = v.split('"').next().map(String::from);
            } else if let (Some(r), Some(v)) = (line.strip_prefix("resource: \""), verb.take()) {
                found.push((v, r.split('"').next().unwrap().to_string()));
            }
        }
    }
    found
}

/// The verbs the parked store sends on ConfigMaps: each `.call("verb", ...)` in parked.rs.
fn configmap_verbs() -> BTreeSet<String> {
    let text = std::fs::read_to_string(format!(
        "{}/crates/core/src/actions/parked.rs",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    text.split(".call(\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_string())
        .collect()
}

#[test]
fn every_call_the_code_makes_is_granted_or_named_personal() {
    let cluster = triples(CLUSTER_PERMISSIONS);
    let namespaced: BTreeSet<Permission> = NAMESPACED_PERMISSIONS
        .iter()
        .map(|(g, r, v, _)| (g.to_string(), r.to_string(), v.to_string()))
        .collect();
    let optional = triples(FINALIZER_PERMISSIONS);
    let personal = triples(PERSONAL_ONLY);
    let all: BTreeSet<&Permission> = cluster
        .iter()
        .chain(&namespaced)
        .chain(&optional)
        .chain(&personal)
        .collect();
    let covered =
        |verb: &str, resource: &str| all.iter().any(|(_, r, v)| r == resource && v == verb);
    let named = needs_in_actions();
    assert!(named.len() >= 5, "the source scan found {named:?}");
    for (verb, resource) in &named {
        assert!(
            covered(verb, resource),
            "{verb} {resource} is called but not declared"
        );
    }
    // The parked store: get and update granted in the namespace; create only for a person.
    let verbs = configmap_verbs();
    assert_eq!(
        verbs,
        BTreeSet::from(["get", "update", "create"].map(String::from))
    );
    for verb in verbs {
        let wanted = (String::new(), "configmaps".to_string(), verb.clone());
        assert!(
            namespaced.contains(&wanted) || personal.contains(&wanted),
            "{verb} configmaps"
        );
    }
    // Scale to zero and undo: the workload read, its scale subresource read and written; the
    // annotation fallback (patch on the workload) only with a person's own credentials.
    for kind in WorkloadKind::ALL {
        let group = kind.api_resource().group;
        let plural = kind.plural().to_string();
        let scale = format!("{plural}/scale");
        for wanted in [
            (group.clone(), plural.clone(), "get".to_string()),
            (group.clone(), scale.clone(), "get".to_string()),
            (group.clone(), scale, "patch".to_string()),
        ] {
            assert!(cluster.contains(&wanted), "{wanted:?} missing");
        }
        let patch = (group, plural, "patch".to_string());
        assert!(
            personal.contains(&patch) && !cluster.contains(&patch),
            "{patch:?}"
        );
    }
    // The opt-out check reads every owner kind it follows.
    for (group, kind, resource) in FOLLOWED_OWNERS {
        let wanted = (group.to_string(), resource.to_string(), "get".to_string());
        assert!(cluster.contains(&wanted), "get {resource} ({kind}) missing");
    }
    // The watch cache, Events, leader election, the manual finalizer removal.
    for (verb, resource) in [
        ("list", "pods"),
        ("watch", "pods"),
        ("create", "events"),
        ("list", "events"),
        ("watch", "events"),
        ("get", "leases"),
        ("create", "leases"),
        ("update", "leases"),
        ("patch", "pods"),
    ] {
        assert!(covered(verb, resource), "{verb} {resource}");
    }
    // Nothing is both granted and called personal-only.
    for p in &personal {
        assert!(!cluster.contains(p) && !namespaced.contains(p), "{p:?}");
    }
}

#[test]
fn the_bindings_name_the_service_account_the_statefulset_runs_as() {
    let rbac = installed();
    let account = kind(&rbac, "ServiceAccount");
    let namespace = &account["metadata"]["namespace"];
    for (binding, role) in [
        ("ClusterRoleBinding", "ClusterRole"),
        ("RoleBinding", "Role"),
    ] {
        let binding = kind(&rbac, binding);
        let subject = &binding["subjects"][0];
        assert_eq!(subject["name"], account["metadata"]["name"]);
        assert_eq!(subject["namespace"], *namespace);
        assert_eq!(binding["roleRef"]["kind"], role);
        assert_eq!(
            binding["roleRef"]["name"],
            kind(&rbac, role)["metadata"]["name"]
        );
    }
    // The Role, its binding, the parked ConfigMap and the workload share the namespace the
    // code falls back to without $POD_NAMESPACE.
    assert_eq!(*namespace, DEFAULT_NAMESPACE);
    assert_eq!(kind(&rbac, "Role")["metadata"]["namespace"], *namespace);
    assert_eq!(
        kind(&rbac, "RoleBinding")["metadata"]["namespace"],
        *namespace
    );
    let parked = named(&rbac, "ConfigMap", PARKED_CONFIGMAP).clone();
    assert_eq!(parked["metadata"]["namespace"], *namespace);
    let set = statefulset();
    assert_eq!(set["metadata"]["namespace"], *namespace);
    assert_eq!(
        set["spec"]["template"]["spec"]["serviceAccountName"],
        account["metadata"]["name"]
    );
}

#[test]
fn the_parked_config_map_ships_without_data_so_apply_keeps_its_entries() {
    let parked = named(&installed(), "ConfigMap", PARKED_CONFIGMAP).clone();
    assert!(parked.get("data").is_none(), "{parked}");
    // The Role grants no create on ConfigMaps: the manifest is what makes it exist.
    assert!(
        !grants(&role())
            .iter()
            .any(|(_, r, v, _)| r == "configmaps" && v == "create")
    );
}

fn statefulset() -> Value {
    kind(&installed(), "StatefulSet").clone()
}

#[test]
fn the_statefulset_is_hardened_and_probes_readyz_and_healthz() {
    let set = statefulset();
    let pod = &set["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    let container = &pod["containers"][0];
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(
        container["securityContext"]["allowPrivilegeEscalation"],
        false
    );
    assert_eq!(container["args"][0], "headless");
    assert!(container["resources"]["requests"]["memory"].is_string());
    // Readiness follows the cache; liveness only the worker loop (a restart cannot bring back
    // an API server).
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    assert!(
        args.windows(2).any(|w| w == ["--listen", "0.0.0.0:9090"]),
        "the metrics port is opened on purpose in the pod, not by default: {args:?}"
    );
    let service = kind(&installed(), "Service").clone();
    assert_eq!(set["spec"]["serviceName"], service["metadata"]["name"]);
}

#[test]
fn audit_log_spool_and_report_state_live_on_each_replicas_own_claim() {
    let set = statefulset();
    let config = deployed_config();
    let claims = set["spec"]["volumeClaimTemplates"].as_array().unwrap();
    let container = &set["spec"]["template"]["spec"]["containers"][0];
    let mounts = container["volumeMounts"].as_array().unwrap();
    let on_a_claim = |path: &std::path::Path| {
        mounts.iter().any(|m| {
            path.starts_with(m["mountPath"].as_str().unwrap())
                && claims.iter().any(|c| c["metadata"]["name"] == m["name"])
        })
    };
    for (what, path) in [
        ("the audit log", config.audit.path.clone()),
        ("the report spool", config.report.spool_dir.clone()),
        ("the report state", config.report.state_file.clone()),
    ] {
        assert!(
            on_a_claim(&path),
            "{what} ({}) is not on a volume claim",
            path.display()
        );
    }
    // Not also an emptyDir volume of the same name, which would shadow nothing but confuse.
    let volumes = set["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .unwrap();
    assert!(
        volumes.iter().all(|v| v.get("emptyDir").is_none()),
        "{volumes:?}"
    );
}

#[test]
fn a_slow_api_server_cannot_trip_the_liveness_probe() {
    let set = statefulset();
    let probe = &set["spec"]["template"]["spec"]["containers"][0]["livenessProbe"];
    let seconds = |key: &str, default: u64| probe[key].as_u64().unwrap_or(default);
    // A busy process (a relist after an outage) may answer slowly: not a reason to restart.
    assert!(seconds("timeoutSeconds", 1) >= 5, "{probe}");
    assert!(
        seconds("periodSeconds", 10) * seconds("failureThreshold", 3) >= 60,
        "a minute of failed probes at least: {probe}"
    );
    // The verdict never looks at the API server: a worker that passes recently is live
    // whatever the cache's state; only a stalled worker loop is not.
    let now = Utc::now();
    let worker = WorkerStatus {
        last_pass: Some(now - chrono::Duration::seconds(30)),
        ..WorkerStatus::default()
    };
    assert_eq!(healthz(&worker, now, WORKER_STALL, now).0, 200);
    let stalled = WorkerStatus {
        last_pass: Some(
            now - chrono::Duration::from_std(WORKER_STALL + Duration::from_secs(1)).unwrap(),
        ),
        ..WorkerStatus::default()
    };
    assert_eq!(healthz(&stalled, now, WORKER_STALL, now).0, 503);
}

/// A Secret key the StatefulSet hands to its container.
#[derive(Debug, PartialEq)]
pub(crate) struct SecretKey {
    secret: String,
    key: String,
}

/// What the container of `pod` (a pod spec) sees from Secrets: mounted items as files and `secretKeyRef`
/// variables, each holding a stand-in that parses as a URL (so as any secret too).
pub(crate) fn from_secrets(pod: &Value) -> (FixedEnvironment, Vec<SecretKey>) {
    const STAND_IN: &str = "https://stand-in.invalid/hook/from-a-secret";
    let container = &pod["containers"][0];
    let mut env = FixedEnvironment::default();
    let mut keys = Vec::new();
    for volume in pod["volumes"].as_array().unwrap() {
        let secret = &volume["secret"];
        let Some(name) = secret["secretName"].as_str() else {
            continue;
        };
        let mount = container["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == volume["name"])
            .unwrap_or_else(|| panic!("{volume} is not mounted"));
        let items = secret["items"]
            .as_array()
            .expect("Secret volumes list their items, so the keys they need are written down");
        for item in items {
            let path = format!(
                "{}/{}",
                mount["mountPath"].as_str().unwrap(),
                item["path"].as_str().unwrap()
            );
            env = env.with_file(path, STAND_IN);
            let key = item["key"].as_str().unwrap().to_string();
            keys.push(SecretKey {
                secret: name.into(),
                key,
            });
        }
    }
    for var in container["env"].as_array().unwrap() {
        let reference = &var["valueFrom"]["secretKeyRef"];
        if let (Some(secret), Some(key)) = (reference["name"].as_str(), reference["key"].as_str()) {
            env = env.with_var(var["name"].as_str().unwrap(), STAND_IN);
            keys.push(SecretKey {
                secret: secret.into(),
                key: key.into(),
            });
        }
    }
    (env, keys)
}

/// The ConfigMap's config, loaded as the StatefulSet's container would load it.
fn deployed_config() -> Config {
    config_of(&installed())
}

/// The config of an install, loaded as its worker's container would load it.
pub(crate) fn config_of(objects: &[Value]) -> Config {
    let map = named(objects, "ConfigMap", "ops-pod-cleaner");
    let text = map["data"]["config.yaml"].as_str().unwrap();
    let (env, _) = from_secrets(&worker_pod(objects)["spec"]);
    Config::from_yaml_in(text, "configmap.yaml", &env)
        .unwrap_or_else(|e| panic!("the ConfigMap must load with the worker's Secrets: {e}"))
}

#[test]
fn the_config_map_carries_a_valid_config() {
    let config = deployed_config();
    assert!(
        config.rules.iter().any(|r| r.auto),
        "something is switched on"
    );
}

#[test]
fn webhook_urls_and_secrets_come_from_a_secret_not_the_config_map() {
    let config = deployed_config();
    let sinks = &config.report.sinks;
    assert!(
        matches!(
            sinks.first(),
            Some(Sink::Feishu {
                secret: Some(_),
                ..
            })
        ),
        "a signed Feishu sink is wired up: {sinks:?}"
    );
    for sink in sinks {
        for secret in sink.secrets() {
            assert!(
                !matches!(secret.source(), SecretSource::Inline),
                "{sink:?} is written into the ConfigMap"
            );
        }
    }
}

/// Every install starts before its webhooks Secret exists: the volume is optional, and the
/// config loads without the Secret's files, leaving the report's sink out and saying why.
/// The pods once waited in ContainerCreating for a Secret no webhook needed.
#[test]
fn every_install_starts_without_the_webhooks_secret() {
    for dir in INSTALLS {
        let objects = install(dir);
        let pod = worker_pod(&objects);
        for volume in pod["spec"]["volumes"].as_array().unwrap() {
            if volume["secret"].is_object() {
                assert_eq!(volume["secret"]["optional"], true, "{dir}: {volume}");
            }
        }
        let map = named(&objects, "ConfigMap", "ops-pod-cleaner");
        let text = map["data"]["config.yaml"].as_str().unwrap();
        let config = Config::from_yaml_in(text, "configmap.yaml", &FixedEnvironment::default())
            .unwrap_or_else(|e| panic!("{dir}: the config must load without the Secret: {e}"));
        assert!(config.report.sinks.is_empty(), "{dir}");
        assert!(
            config.describe().contains("feishu sink left out"),
            "{dir}: {}",
            config.describe()
        );
    }
}

#[test]
fn the_readme_creates_the_secret_the_deployment_reads() {
    let readme =
        std::fs::read_to_string(format!("{}/README.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let (_, keys) = from_secrets(&statefulset()["spec"]["template"]["spec"]);
    assert!(!keys.is_empty(), "the Deployment reads a Secret");
    for SecretKey { secret, key } in &keys {
        let command = readme
            .split("kubectl create secret generic ")
            .skip(1)
            .find(|rest| rest.starts_with(&format!("{secret} ")))
            .unwrap_or_else(|| panic!("the README does not create the Secret {secret}"));
        let command = command.split("```").next().unwrap();
        assert!(
            command.contains(&format!("--from-literal={key}="))
                || command.contains(&format!("--from-file={key}=")),
            "the README's Secret {secret} lacks the key {key}"
        );
    }
}

/// The README leads with the one-command install in dry run, then going live and the CronJob;
/// nothing under the layout is applied file by file (that would skip the dry run).
#[test]
fn the_readme_installs_with_kustomize_dry_run_first() {
    let readme =
        std::fs::read_to_string(format!("{}/README.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let section = readme
        .split("## Running in the cluster")
        .nth(1)
        .expect("the README has a section on running in the cluster");
    let at = |command: &str| {
        section
            .find(command)
            .unwrap_or_else(|| panic!("the README does not run `{command}`"))
    };
    // Server-side: a second apply of the same files reports nothing changed.
    let first = at("kubectl apply --server-side -k assets/deploy\n");
    let live = at("kubectl apply --server-side -k assets/deploy/overlays/live");
    let cronjob = at("kubectl apply --server-side -k assets/deploy/overlays/cronjob");
    assert!(first < live && first < cronjob, "the dry run comes first");
    assert!(
        section.find("kubectl apply --server-side -k assets/deploy") == Some(first),
        "no other install before the dry run"
    );
    assert!(
        !section.contains("kubectl apply -k"),
        "every install is server-side"
    );
    // The uninstall keeps what holds the audit log and the undo state.
    at("kubectl delete -k assets/deploy/overlays/live -l '!ops-pod-cleaner.io/keep'");
    for (file, kind, name) in [
        ("base/namespace.yaml", "Namespace", "ops-pod-cleaner"),
        ("base/parked.yaml", "ConfigMap", "ops-pod-cleaner-parked"),
    ] {
        let kept = named(&installed(), kind, name).clone();
        assert!(
            kept["metadata"]["labels"]["ops-pod-cleaner.io/keep"].is_string(),
            "{file}: {kept}"
        );
    }
    // The one file outside every kustomization: the finalizer role, for people.
    at("kubectl apply -f assets/deploy/rbac-finalizers.yaml");
    assert_eq!(
        section.matches("kubectl apply -f assets/deploy").count(),
        1,
        "manifests are applied with -k"
    );
    // The manifests point at the README's section on undo state.
    assert!(read("base/parked.yaml").contains("\"Where undo state lives\""));
    assert!(readme.contains("### Where undo state lives"));
}

/// The port `--listen` opens in the worker's container.
pub(crate) fn listen_port(set: &Value) -> u64 {
    port_of(set, "--listen")
}

/// The port the StatefulSet's worker serves `flag` on.
fn port_of(set: &Value, flag: &str) -> u64 {
    let container = &set["spec"]["template"]["spec"]["containers"][0];
    let args = strings(&container["args"]);
    let at = args.iter().position(|a| a == flag).unwrap();
    let (_, port) = args[at + 1].rsplit_once(':').unwrap();
    port.parse().unwrap()
}

/// A NetworkPolicy port (a number, or the name of a container port) as a number.
fn policy_port(port: &Value, set: &Value) -> u64 {
    if let Some(number) = port.as_u64() {
        return number;
    }
    let container = &set["spec"]["template"]["spec"]["containers"][0];
    let named = container["ports"].as_array().unwrap().iter();
    named
        .clone()
        .find(|p| p["name"] == *port)
        .and_then(|p| p["containerPort"].as_u64())
        .unwrap_or_else(|| panic!("no container port named {port}"))
}

/// Anyone who can create a pod can reach the worker's ports; the policy narrows each to what
/// must reach it: the metrics port to the scraper's pods (the kubelet's probes come from the
/// node, which a policy always admits), the findings' port to an address block (the API
/// server's service proxy), never to pods by label.
#[test]
fn a_network_policy_admits_only_the_scrape_and_the_api_server_each_to_its_port() {
    let set = statefulset();
    let policy = kind(&installed(), "NetworkPolicy").clone();
    assert_eq!(
        policy["metadata"]["namespace"],
        set["metadata"]["namespace"]
    );
    let selected = policy["spec"]["podSelector"]["matchLabels"]
        .as_object()
        .unwrap();
    let labels = &set["spec"]["template"]["metadata"]["labels"];
    assert!(!selected.is_empty(), "a policy must not select every pod");
    for (key, value) in selected {
        assert_eq!(
            &labels[key], value,
            "the worker's pods are selected by {key}"
        );
    }
    assert_eq!(strings(&policy["spec"]["policyTypes"]), ["Ingress"]);
    let (metrics, findings) = (listen_port(&set), port_of(&set, "--findings-listen"));
    assert_ne!(metrics, findings, "the findings have their own door");
    let rules = policy["spec"]["ingress"].as_array().unwrap();
    let mut admitted = Vec::new();
    for rule in rules {
        let ports = rule["ports"].as_array().unwrap();
        assert!(
            !ports.is_empty(),
            "a rule without ports admits every port: {rule}"
        );
        let from = rule["from"].as_array().unwrap();
        assert!(
            !from.is_empty(),
            "a rule without peers admits everyone: {rule}"
        );
        for port in ports {
            assert_eq!(port["protocol"], "TCP", "{rule}");
            let port = policy_port(&port["port"], &set);
            admitted.push(port);
            for peer in from {
                if port == metrics {
                    assert!(
                        peer["podSelector"]["matchLabels"]
                            .as_object()
                            .is_some_and(|l| !l.is_empty()),
                        "only the scraper's pods, not every pod of a namespace: {peer}"
                    );
                } else {
                    assert_eq!(port, findings, "{rule}");
                    assert!(
                        peer["ipBlock"]["cidr"].is_string() && peer.get("podSelector").is_none(),
                        "the findings' port admits the API server's address alone: {peer}"
                    );
                }
            }
        }
    }
    admitted.sort_unstable();
    assert_eq!(admitted, [metrics, findings]);
}
