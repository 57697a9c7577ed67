//! The deployment files stay in step with the code: the ClusterRole grants exactly the
//! permissions the code calls, the ConfigMap is a valid config whose webhook secrets come from
//! the Secret the Deployment mounts, the Deployment is hardened.

use std::collections::BTreeSet;

use ops_pod_cleaner::actions::{FOLLOWED_OWNERS, WorkloadKind};
use ops_pod_cleaner::config::{Config, FixedEnvironment, SecretSource, Sink};
use ops_pod_cleaner::headless::rbac::PERMISSIONS;
use serde_json::Value;

type Permission = (String, String, String);

fn documents(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!(
        "{}/assets/deploy/{file}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    text.split("\n---\n")
        .map(|doc| serde_saphyr::from_str::<Value>(doc).unwrap_or_else(|e| panic!("{file}: {e}")))
        .collect()
}

fn kind<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn granted() -> BTreeSet<Permission> {
    let docs = documents("rbac.yaml");
    let mut set = BTreeSet::new();
    for rule in kind(&docs, "ClusterRole")["rules"].as_array().unwrap() {
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    set.insert((group.clone(), resource.clone(), verb));
                }
            }
        }
    }
    set
}

fn declared() -> BTreeSet<Permission> {
    PERMISSIONS
        .iter()
        .map(|(g, r, v)| (g.to_string(), r.to_string(), v.to_string()))
        .collect()
}

#[test]
fn the_cluster_role_grants_exactly_the_declared_permissions() {
    assert_eq!(granted(), declared());
}

/// Every `Needs { verb, resource }` the actions name, read from their source.
fn named_in_actions() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for file in ["execute.rs", "owner.rs"] {
        let text =
            std::fs::read_to_string(format!("{}/src/actions/{file}", env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        let mut verb = None;
        for line in text.lines().map(str::trim) {
            if let Some(v) = line.strip_prefix("verb: \"") {
                verb = v.split('"').next().map(String::from);
            } else if let (Some(r), Some(v)) = (line.strip_prefix("resource: \""), verb.take()) {
                found.push((v, r.split('"').next().unwrap().to_string()));
            }
        }
    }
    found
}

#[test]
fn every_call_the_code_makes_is_declared() {
    let declared = declared();
    let covered =
        |verb: &str, resource: &str| declared.iter().any(|(_, r, v)| r == resource && v == verb);
    let named = named_in_actions();
    assert!(named.len() >= 4, "the source scan found {named:?}");
    for (verb, resource) in &named {
        assert!(
            covered(verb, resource),
            "{verb} {resource} is called but not declared"
        );
    }
    // Scale to zero and undo: get and patch on each workload and its scale subresource.
    let kinds = [
        WorkloadKind::Deployment,
        WorkloadKind::Rollout,
        WorkloadKind::StatefulSet,
        WorkloadKind::ReplicaSet,
        WorkloadKind::ReplicationController,
    ];
    for kind in kinds {
        let group = kind.api_resource().group;
        for resource in [
            kind.plural().to_string(),
            format!("{}/scale", kind.plural()),
        ] {
            for verb in ["get", "patch"] {
                let wanted = (group.clone(), resource.clone(), verb.to_string());
                assert!(declared.contains(&wanted), "{wanted:?} missing");
            }
        }
    }
    // The opt-out check reads every owner kind it follows.
    for (group, kind, resource) in FOLLOWED_OWNERS {
        let wanted = (group.to_string(), resource.to_string(), "get".to_string());
        assert!(
            declared.contains(&wanted),
            "get {resource} ({kind}) missing"
        );
    }
    // The watch cache and leader election.
    for (verb, resource) in [
        ("list", "pods"),
        ("watch", "pods"),
        ("create", "events"),
        ("update", "leases"),
    ] {
        assert!(covered(verb, resource), "{verb} {resource}");
    }
}

#[test]
fn the_binding_names_the_service_account_the_deployment_runs_as() {
    let rbac = documents("rbac.yaml");
    let subject = &kind(&rbac, "ClusterRoleBinding")["subjects"][0];
    let account = kind(&rbac, "ServiceAccount");
    assert_eq!(subject["name"], account["metadata"]["name"]);
    assert_eq!(subject["namespace"], account["metadata"]["namespace"]);
    let deployment = &documents("deployment.yaml")[0];
    assert_eq!(
        deployment["spec"]["template"]["spec"]["serviceAccountName"],
        account["metadata"]["name"]
    );
}

#[test]
fn the_deployment_is_hardened_and_probes_readyz_and_healthz() {
    let deployment = &documents("deployment.yaml")[0];
    let pod = &deployment["spec"]["template"]["spec"];
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
}

/// A Secret key the Deployment hands to its container.
#[derive(Debug, PartialEq)]
struct SecretKey {
    secret: String,
    key: String,
}

/// What the container sees from Secrets: mounted items as files and `secretKeyRef`
/// variables, each holding a stand-in that parses as a URL (so as any secret too).
fn from_secrets(deployment: &Value) -> (FixedEnvironment, Vec<SecretKey>) {
    const STAND_IN: &str = "https://stand-in.invalid/hook/from-a-secret";
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let mut env = FixedEnvironment::new();
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

/// The ConfigMap's config, loaded as the Deployment's container would load it.
fn deployed_config() -> Config {
    let map = &documents("configmap.yaml")[0];
    let text = map["data"]["config.yaml"].as_str().unwrap();
    let (env, _) = from_secrets(&documents("deployment.yaml")[0]);
    Config::from_yaml_in(text, "configmap.yaml", &env)
        .unwrap_or_else(|e| panic!("the ConfigMap must load with the Deployment's Secrets: {e}"))
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

#[test]
fn the_readme_creates_the_secret_the_deployment_reads() {
    let readme =
        std::fs::read_to_string(format!("{}/README.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let (_, keys) = from_secrets(&documents("deployment.yaml")[0]);
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
