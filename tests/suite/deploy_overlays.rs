//! The kustomize layout under `assets/deploy` keeps its promises: every path a kustomization
//! names exists and every manifest is part of an install; each install (the first one in dry
//! run, live, the CronJob) keeps the least-privilege RBAC and the hardened pod; going live
//! changes only `--dry-run`; the PodDisruptionBudget and the NetworkPolicy select the worker;
//! the monitoring components name only metrics `/metrics` exports; the image is built without
//! the simulator from a context that holds no secrets.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::metrics::METRIC_NAMES;
use crate::support::rbac::CLUSTER_PERMISSIONS;
use clap::CommandFactory;
use opc_core::actions::DEFAULT_NAMESPACE;
use ops_pod_cleaner::cli::Cli;
use serde_json::Value;

use crate::deploy::{
    INSTALLS, config_of, grants, install, kind, listen_port, named, role, strings, triples,
    unnamed, worker_pod,
};
use crate::support::kustomize::{build_with, deploy_dir, kustomization, list};

/// The manifests no kustomization installs on purpose: the finalizer role is for people, and
/// whoever wants it binds it (the README applies it on its own).
const APPLIED_ALONE: [&str; 1] = ["rbac-finalizers.yaml"];

/// Every file and directory a kustomization names, resolved against its directory.
fn named_paths(dir: &Path, k: &Value) -> Vec<PathBuf> {
    let mut names = list(k, "resources");
    names.extend(list(k, "components"));
    for patch in k["patches"].as_array().into_iter().flatten() {
        names.push(patch["path"].as_str().unwrap().to_string());
    }
    for generator in k["configMapGenerator"].as_array().into_iter().flatten() {
        names.extend(list(generator, "files"));
    }
    names.into_iter().map(|n| dir.join(n)).collect()
}

/// Every directory under `dir`, itself included.
fn directories(dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![dir.to_path_buf()];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(directories(&path));
        }
    }
    found
}

#[test]
fn every_path_a_kustomization_names_exists_and_every_manifest_is_installed() {
    let mut used = BTreeSet::new();
    let mut kustomizations = 0;
    for dir in directories(&deploy_dir()) {
        if !dir.join("kustomization.yaml").exists() {
            continue;
        }
        kustomizations += 1;
        let k = kustomization(&dir);
        for component in list(&k, "components") {
            assert_eq!(kustomization(&dir.join(component))["kind"], "Component");
        }
        for path in named_paths(&dir, &k) {
            assert!(path.exists(), "{} names {}", dir.display(), path.display());
            if path.is_dir() {
                assert!(
                    path.join("kustomization.yaml").exists(),
                    "{}",
                    path.display()
                );
            }
            used.insert(path.canonicalize().unwrap());
        }
    }
    // The default, base, statefulset, live, cronjob, and the two components.
    assert!(kustomizations >= 7, "found {kustomizations}");
    for dir in directories(&deploy_dir()) {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap();
            let manifest = name.ends_with(".yaml") || name.ends_with(".json");
            if !manifest || name == "kustomization.yaml" || APPLIED_ALONE.contains(&name) {
                continue;
            }
            assert!(
                used.contains(&path.canonicalize().unwrap()),
                "no kustomization installs {}",
                path.display()
            );
        }
    }
}

const CLUSTER_SCOPED: [&str; 3] = ["Namespace", "ClusterRole", "ClusterRoleBinding"];

#[test]
fn every_install_grants_exactly_the_codes_permissions_in_one_namespace() {
    for dir in INSTALLS {
        let objects = install(dir);
        let count = |k: &str| objects.iter().filter(|o| o["kind"] == k).count();
        // One of each: the optional finalizer role is never installed with the worker.
        for role_kind in ["ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"] {
            assert_eq!(count(role_kind), 1, "{dir}: {role_kind}");
        }
        assert_eq!(
            unnamed(kind(&objects, "ClusterRole")),
            triples(CLUSTER_PERMISSIONS),
            "{dir}"
        );
        assert_eq!(grants(kind(&objects, "Role")), grants(&role()), "{dir}");
        let account = &kind(&objects, "ServiceAccount")["metadata"]["name"];
        assert_eq!(worker_pod(&objects)["spec"]["serviceAccountName"], *account);
        assert_eq!(
            kind(&objects, "Namespace")["metadata"]["name"],
            DEFAULT_NAMESPACE
        );
        for object in &objects {
            if !CLUSTER_SCOPED.contains(&object["kind"].as_str().unwrap()) {
                assert_eq!(
                    object["metadata"]["namespace"], DEFAULT_NAMESPACE,
                    "{object}"
                );
            }
        }
    }
}

/// What every install's worker pod must be, whichever workload runs it.
fn assert_hardened(template: &Value, dir: &str) {
    let pod = &template["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true, "{dir}");
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault",
        "{dir}"
    );
    for host in ["hostNetwork", "hostPID", "hostIPC"] {
        assert!(pod.get(host).is_none(), "{dir}: {host}");
    }
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1, "{dir}");
    let security = &containers[0]["securityContext"];
    assert_eq!(security["readOnlyRootFilesystem"], true, "{dir}");
    assert_eq!(security["allowPrivilegeEscalation"], false, "{dir}");
    assert_eq!(strings(&security["capabilities"]["drop"]), ["ALL"], "{dir}");
    assert!(security["capabilities"].get("add").is_none(), "{dir}");
    let resources = &containers[0]["resources"];
    assert!(resources["requests"]["memory"].is_string(), "{dir}");
    assert!(resources["limits"]["memory"].is_string(), "{dir}");
}

#[test]
fn every_installs_worker_pod_is_hardened() {
    for dir in INSTALLS {
        assert_hardened(&worker_pod(&install(dir)), dir);
    }
}

/// The worker's command line as the binary parses it.
fn parsed(template: &Value) -> clap::ArgMatches {
    let args = strings(&template["spec"]["containers"][0]["args"]);
    Cli::command()
        .try_get_matches_from(std::iter::once("ops-pod-cleaner".to_string()).chain(args))
        .unwrap_or_else(|e| panic!("the worker's args do not parse: {e}"))
}

fn args(objects: &[Value]) -> Vec<String> {
    strings(&worker_pod(objects)["spec"]["containers"][0]["args"])
}

#[test]
fn the_first_install_runs_in_dry_run_and_the_live_one_acts() {
    let first = install(".");
    let live = install("overlays/live");
    assert!(parsed(&worker_pod(&first)).get_flag("dry_run"));
    assert!(!parsed(&worker_pod(&live)).get_flag("dry_run"));
    assert_eq!(
        parsed(&worker_pod(&live)).subcommand_name(),
        Some("headless")
    );
    // Going live changes the worker's arguments and nothing else.
    let mut without = first.clone();
    let set = without
        .iter_mut()
        .find(|o| o["kind"] == "StatefulSet")
        .unwrap();
    let container = &mut set["spec"]["template"]["spec"]["containers"][0];
    let args = container["args"].as_array_mut().unwrap();
    let before = args.len();
    args.retain(|a| a != "--dry-run");
    assert_eq!(args.len(), before - 1);
    assert_eq!(without, live);
}

#[test]
fn the_cronjob_runs_one_pass_on_a_schedule_with_its_state_on_a_scratch_volume() {
    let objects = install("overlays/cronjob");
    for resident in ["StatefulSet", "Service", "PodDisruptionBudget"] {
        assert!(objects.iter().all(|o| o["kind"] != resident), "{resident}");
    }
    let job = kind(&objects, "CronJob");
    let template = worker_pod(&objects);
    assert_eq!(&args(&objects)[..2], ["headless", "--once"]);
    let matches = parsed(&template);
    let (command, headless) = matches.subcommand().unwrap();
    assert_eq!(command, "headless");
    assert!(headless.get_flag("once"));
    assert!(!matches.get_flag("dry_run"), "the CronJob acts like live");
    // One run at a time, each over before the next is due, none retried at once.
    assert_eq!(job["spec"]["concurrencyPolicy"], "Forbid");
    let schedule = job["spec"]["schedule"].as_str().unwrap();
    let minutes: u64 = schedule
        .strip_prefix("*/")
        .and_then(|s| s.split(' ').next())
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("every N minutes: {schedule}"));
    let spec = &job["spec"]["jobTemplate"]["spec"];
    assert!(spec["activeDeadlineSeconds"].as_u64().unwrap() < minutes * 60);
    assert_eq!(spec["backoffLimit"], 0);
    assert_eq!(template["spec"]["restartPolicy"], "Never");
    // Each run is its own Lease holder, in the product's namespace.
    let env = template["spec"]["containers"][0]["env"].as_array().unwrap();
    let from_field = |name: &str| {
        env.iter()
            .find(|v| v["name"] == name)
            .map(|v| v["valueFrom"]["fieldRef"]["fieldPath"].clone())
    };
    assert_eq!(from_field("HOSTNAME"), Some("metadata.name".into()));
    assert_eq!(
        from_field("POD_NAMESPACE"),
        Some("metadata.namespace".into())
    );
    // The root filesystem is read-only: the audit log, spool and state need a writable
    // volume, or headless refuses to start without its audit log.
    let config = config_of(&objects);
    let mounts = template["spec"]["containers"][0]["volumeMounts"]
        .as_array()
        .unwrap();
    let volumes = template["spec"]["volumes"].as_array().unwrap();
    let scratch = |path: &Path| {
        mounts.iter().any(|m| {
            path.starts_with(m["mountPath"].as_str().unwrap())
                && m["readOnly"] != true
                && volumes
                    .iter()
                    .any(|v| v["name"] == m["name"] && v.get("emptyDir").is_some())
        })
    };
    for path in [
        &config.audit.path,
        &config.report.spool_dir,
        &config.report.state_file,
    ] {
        assert!(scratch(path), "{} is not writable", path.display());
    }
}

/// Whether `selector`'s matchLabels (never empty) all hold on `labels`.
fn selects(selector: &Value, labels: &Value) -> bool {
    let wanted = selector["matchLabels"].as_object().unwrap();
    !wanted.is_empty() && wanted.iter().all(|(k, v)| labels[k] == *v)
}

#[test]
fn the_disruption_budget_and_the_network_policy_select_the_worker() {
    for dir in INSTALLS {
        let objects = install(dir);
        let labels = &worker_pod(&objects)["metadata"]["labels"];
        let policy = kind(&objects, "NetworkPolicy");
        assert!(selects(&policy["spec"]["podSelector"], labels), "{dir}");
        let budgets: Vec<&Value> = objects
            .iter()
            .filter(|o| o["kind"] == "PodDisruptionBudget")
            .collect();
        let Some(set) = objects.iter().find(|o| o["kind"] == "StatefulSet") else {
            // A budget on a Job's pod could only hold a drain up.
            assert!(budgets.is_empty(), "{dir}");
            continue;
        };
        assert_eq!(budgets.len(), 1, "{dir}");
        let budget = budgets[0];
        assert!(selects(&budget["spec"]["selector"], labels), "{dir}");
        assert_eq!(budget["spec"]["selector"], set["spec"]["selector"], "{dir}");
        // A drain may take one replica, never both: the other takes the Lease over.
        assert_eq!(budget["spec"]["maxUnavailable"], 1, "{dir}");
        assert!(set["spec"]["replicas"].as_u64().unwrap() >= 2, "{dir}");
    }
    // The check itself: a selector of no labels, or of other labels, selects nothing here.
    let labels = serde_json::json!({"app": "ops-pod-cleaner"});
    assert!(!selects(&serde_json::json!({"matchLabels": {}}), &labels));
    assert!(!selects(
        &serde_json::json!({"matchLabels": {"app": "web"}}),
        &labels
    ));
}

/// The live install with both monitoring components, as a kustomization of one's own adds
/// them.
fn monitored() -> Vec<Value> {
    let components = ["components/servicemonitor", "components/grafana"];
    build_with(
        &deploy_dir().join("overlays/live"),
        &components.map(|c| deploy_dir().join(c)),
    )
}

#[test]
fn the_fleet_viewers_may_get_the_workers_proxy_and_nothing_else() {
    let objects = build_with(
        &deploy_dir().join("overlays/live"),
        &[deploy_dir().join("components/fleet-viewers")],
    );
    let viewer = objects
        .iter()
        .find(|o| o["metadata"]["name"] == "ops-pod-cleaner-fleet-viewer")
        .expect("the viewers' ClusterRole");
    let address = opc_core::fleet::WorkerAddress::default();
    let expected = serde_json::json!([{
        "apiGroups": [""], "resources": ["services/proxy"],
        "resourceNames": [address.segment()], "verbs": ["get"],
    }]);
    assert_eq!(viewer["rules"], expected);
    // The address the TUI asks for is the Service the install runs.
    let service = kind(&objects, "Service");
    assert_eq!(service["metadata"]["name"], address.service());
    assert_eq!(service["metadata"]["namespace"], address.namespace());
    let ports = service["spec"]["ports"].as_array().unwrap();
    assert!(
        ports
            .iter()
            .any(|p| p["port"] == address.port() && p["name"] == "findings"),
        "{ports:?}"
    );
    let binding = objects
        .iter()
        .find(|o| o["kind"] == "RoleBinding" && o["roleRef"]["name"] == viewer["metadata"]["name"])
        .expect("bound in one namespace");
    assert_eq!(binding["metadata"]["namespace"], address.namespace());
}

/// The `opc_…` names in a PromQL expression (or any text).
fn metrics_in(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with("opc_"))
        .map(String::from)
        .collect()
}

/// The names in `text` that `/metrics` does not export.
fn unknown_metrics(text: &str) -> BTreeSet<String> {
    metrics_in(text)
        .into_iter()
        .filter(|name| !METRIC_NAMES.contains(&name.as_str()))
        .collect()
}

#[test]
fn the_service_monitor_scrapes_the_workers_listen_port() {
    let objects = monitored();
    let monitor = kind(&objects, "ServiceMonitor");
    let service = kind(&objects, "Service");
    assert_eq!(
        monitor["metadata"]["namespace"],
        service["metadata"]["namespace"]
    );
    assert!(selects(
        &monitor["spec"]["selector"],
        &service["metadata"]["labels"]
    ));
    let set = kind(&objects, "StatefulSet");
    let endpoints = monitor["spec"]["endpoints"].as_array().unwrap();
    assert_eq!(endpoints.len(), 1);
    assert_eq!(endpoints[0]["path"], "/metrics");
    let port = service["spec"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == endpoints[0]["port"])
        .expect("the endpoint names a port of the Service");
    let container = &set["spec"]["template"]["spec"]["containers"][0];
    let target = container["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == port["targetPort"] || p["containerPort"] == port["targetPort"])
        .expect("the Service's port targets a container port");
    assert_eq!(target["containerPort"].as_u64(), Some(listen_port(set)));
}

#[test]
fn the_alerts_cover_the_four_failures_on_metrics_that_exist() {
    let objects = monitored();
    let rule = kind(&objects, "PrometheusRule");
    let mut alerts = BTreeSet::new();
    for group in rule["spec"]["groups"].as_array().unwrap() {
        for alert in group["rules"].as_array().unwrap() {
            let expr = alert["expr"].as_str().unwrap();
            assert!(!metrics_in(expr).is_empty(), "{expr}");
            assert_eq!(unknown_metrics(expr), BTreeSet::new(), "{expr}");
            alerts.insert((
                alert["alert"].as_str().unwrap().to_string(),
                metrics_in(expr),
            ));
        }
    }
    let expected = [
        ("OpsPodCleanerWorkerBlocked", "opc_worker_blocked"),
        ("OpsPodCleanerStaleView", "opc_watch_stale_seconds"),
        ("OpsPodCleanerRulePaused", "opc_rule_paused"),
        ("OpsPodCleanerAuditFailing", "opc_audit_failing"),
    ]
    .map(|(a, m)| (a.to_string(), BTreeSet::from([m.to_string()])));
    assert_eq!(alerts, BTreeSet::from(expected));
    // The check itself catches a name /metrics never had.
    assert_eq!(
        unknown_metrics("rate(opc_actions_failed_total[5m]) > 0"),
        BTreeSet::from(["opc_actions_failed_total".to_string()])
    );
}

/// Every string in a JSON document.
fn texts(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| texts(v, out)),
        Value::Object(map) => map.values().for_each(|v| texts(v, out)),
        _ => {}
    }
}

#[test]
fn the_grafana_dashboard_is_a_labelled_config_map_on_metrics_that_exist() {
    let objects = monitored();
    let map = named(&objects, "ConfigMap", "ops-pod-cleaner-dashboard");
    assert_eq!(map["metadata"]["labels"]["grafana_dashboard"], "1");
    let data = map["data"].as_object().unwrap();
    assert_eq!(data.len(), 1);
    let (file, text) = data.iter().next().unwrap();
    assert!(file.ends_with(".json"), "{file}");
    // kubectl apply keeps a copy in an annotation, which holds at most 256 KiB.
    assert!(text.as_str().unwrap().len() < 200_000);
    let dashboard: Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
    assert!(dashboard["uid"].is_string());
    let panels = dashboard["panels"].as_array().unwrap();
    let mut shown = BTreeSet::new();
    for panel in panels {
        let targets = panel["targets"].as_array().unwrap();
        assert!(!targets.is_empty(), "{}", panel["title"]);
        for target in targets {
            let expr = target["expr"].as_str().unwrap();
            assert!(!metrics_in(expr).is_empty(), "{expr}");
            shown.extend(metrics_in(expr));
        }
    }
    let mut all = Vec::new();
    texts(&dashboard, &mut all);
    for text in all {
        assert_eq!(unknown_metrics(&text), BTreeSet::new(), "{text}");
    }
    // What the alerts fire on can be looked at.
    for metric in [
        "opc_worker_blocked",
        "opc_watch_stale_seconds",
        "opc_rule_paused",
        "opc_audit_failing",
    ] {
        assert!(shown.contains(metric), "{metric}");
    }
}

fn repository_file(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn the_image_is_built_without_the_simulator_from_bases_pinned_by_digest() {
    let file = std::fs::read_to_string(deploy_dir().join("Containerfile")).unwrap();
    let builds: Vec<&str> = file
        .lines()
        .filter(|l| l.starts_with("RUN") && l.contains("cargo build"))
        .collect();
    assert_eq!(builds.len(), 1, "{file}");
    for flag in ["--no-default-features", "--locked", "--release"] {
        assert!(builds[0].contains(flag), "{flag}: {}", builds[0]);
    }
    let bases: Vec<&str> = file.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(bases.len(), 2, "{file}");
    for base in bases {
        let digest = base
            .split_once("@sha256:")
            .map(|(_, rest)| rest.split(' ').next().unwrap())
            .unwrap_or_else(|| panic!("not pinned by digest: {base}"));
        assert!(
            digest.len() == 64 && digest.chars().all(|c| c.is_ascii_hexdigit()),
            "{base}"
        );
    }
}

/// The build context is the repository's root: whatever is there and not ignored is sent to
/// the builder and may end up in a layer.
#[test]
fn the_build_context_leaves_out_target_git_and_secrets() {
    let ignore = repository_file(".containerignore");
    assert_eq!(
        repository_file(".dockerignore"),
        ignore,
        "docker reads .dockerignore, podman and buildah .containerignore"
    );
    let patterns: BTreeSet<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    for wanted in [
        "target",
        ".git",
        "**/*kubeconfig*",
        "**/.kube",
        "**/*.pem",
        "**/*.key",
        "**/.env",
        "**/.env.*",
        "**/secrets",
    ] {
        assert!(patterns.contains(wanted), "{wanted} is not ignored");
    }
    // Nothing is let back in, and no source file is left out (a `kubeconfig.rs` would be).
    assert!(patterns.iter().all(|p| !p.starts_with('!')), "{patterns:?}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = Vec::new();
    for top in [
        "src", "crates", "tests", "benches", "examples", "scripts", "assets",
    ] {
        files_under(&root.join(top), &mut sources);
    }
    assert!(sources.len() > 100, "found {}", sources.len());
    sources.extend(["Cargo.toml", "Cargo.lock", "build.rs"].map(|f| root.join(f)));
    for source in sources {
        let path = source.strip_prefix(root).unwrap().to_str().unwrap();
        let hits: Vec<&&str> = patterns.iter().filter(|p| ignores(p, path)).collect();
        assert!(hits.is_empty(), "{path} is left out by {hits:?}");
    }
    // The matcher itself.
    assert!(ignores("**/*kubeconfig*", "deploy/prod-kubeconfig.yaml"));
    assert!(ignores("target", "target/release/ops-pod-cleaner"));
    assert!(!ignores("target", "crates/core/src/target.rs"));
}

/// Files under `dir`, without build output.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && !path.ends_with("target") {
            files_under(&path, out);
        } else if path.is_file() {
            out.push(path);
        }
    }
}

/// Whether an ignore file's `pattern` leaves out `path` (relative to the context), for the
/// forms used here: `name` at the root, `**/name` at any depth, `*` within a name.
fn ignores(pattern: &str, path: &str) -> bool {
    let mut parts = path.split('/');
    match pattern.strip_prefix("**/") {
        Some(name) => parts.any(|part| glob(name, part)),
        None => parts.next().is_some_and(|first| glob(pattern, first)),
    }
}

/// `*` matches any run of characters; everything else itself.
fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.starts_with(head)
                && (0..=name.len() - head.len()).any(|skip| glob(tail, &name[head.len() + skip..]))
        }
    }
}

/// Every install runs the image the release workflow publishes for this version: the
/// repository's name on ghcr.io (no placeholder registry), tagged with the version, and the
/// workflow states its digest for those who pin it.
#[test]
fn every_install_runs_the_image_the_release_publishes() {
    let repository = env!("CARGO_PKG_REPOSITORY")
        .strip_prefix("https://github.com/")
        .unwrap();
    let image = format!("ghcr.io/{repository}:{}", env!("CARGO_PKG_VERSION"));
    for dir in INSTALLS {
        let pod = worker_pod(&install(dir));
        assert_eq!(
            pod["spec"]["containers"][0]["image"].as_str(),
            Some(image.as_str()),
            "{dir}"
        );
    }
    let workflow = repository_file(".github/workflows/release.yml");
    for step in [
        "-f assets/deploy/Containerfile",
        "ghcr.io/${{ github.repository }}",
        "packages: write",
        "needs.image.outputs.digest",
    ] {
        assert!(workflow.contains(step), "release.yml lacks {step}");
    }
}
