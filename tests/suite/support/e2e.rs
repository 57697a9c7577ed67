//! What every end-to-end scenario needs: a target cluster (the simulated one, or the one named
//! by `OPC_E2E_KUBECONFIG`), throwaway namespaces that are always deleted, and the binary.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use futures::FutureExt;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube_sim::{SimCluster, SimServer};
use serde_json::json;

/// Never resolvable (RFC 2606), so every node fails to pull from it.
pub const BAD_IMAGE: &str = "registry.invalid/opc-e2e/web:1";
/// The scheduling gate that keeps seeded pods off every kubelet.
pub const GATE: &str = "ops-pod-cleaner.io/e2e";

pub struct Target {
    pub kubeconfig: PathBuf,
    pub client: kube::Client,
    /// How long a real kubelet may take to report a failed pull.
    pub patience: Duration,
    /// Keeps the simulated server up for the scenario.
    _server: Option<SimServer>,
    /// Reports on pods where no kubelet runs; stopped with the target.
    kubelet: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Target {
    fn drop(&mut self) {
        if let Some(kubelet) = &self.kubelet {
            kubelet.abort();
        }
    }
}

impl Target {
    pub async fn simulated(scratch: &Path) -> Target {
        let server = SimServer::start(SimCluster::new()).await.unwrap();
        let kubeconfig = scratch.join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).unwrap();
        Target {
            kubeconfig,
            client: server.client(),
            patience: Duration::from_secs(10),
            _server: Some(server),
            kubelet: None,
        }
    }

    /// The cluster named by `OPC_E2E_KUBECONFIG`. The real-cluster tests are `#[ignore]`d, so
    /// this runs only when asked for (`-- --ignored`); then a missing variable is a failure,
    /// never a pass that tested nothing.
    pub async fn real() -> Target {
        let path = std::env::var_os("OPC_E2E_KUBECONFIG").expect(
            "set OPC_E2E_KUBECONFIG to a kubeconfig to run the end-to-end suite on a real cluster",
        );
        let kubeconfig = PathBuf::from(path);
        let file = kube::config::Kubeconfig::read_from(&kubeconfig)
            .expect("OPC_E2E_KUBECONFIG must be a readable kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(file, &Default::default())
            .await
            .expect("a usable kubeconfig");
        let client = kube::Client::try_from(config).expect("a client for OPC_E2E_KUBECONFIG");
        client
            .apiserver_version()
            .await
            .expect("the cluster named by OPC_E2E_KUBECONFIG must answer");
        // A control plane without kubelets (../shared/realk8s) gets a stand-in that writes
        // what they would; where nodes report, the real ones do.
        let kubelet = match super::kubelet::has_ready_node(&client).await {
            true => None,
            false => {
                eprintln!("no node reports Ready: a stand-in writes pod status as kubelets would");
                Some(super::kubelet::stand_in(client.clone()))
            }
        };
        Target {
            kubeconfig,
            client,
            patience: Duration::from_secs(180),
            _server: None,
            kubelet,
        }
    }

    /// The simulated cluster behind this target, for faults a real one cannot be asked for.
    pub fn sim(&self) -> Option<&SimCluster> {
        self._server.as_ref().map(SimServer::cluster)
    }

    /// Create `count` namespaces `opc-e2e-<random>-<i>`, run `scenario` on them, and always
    /// delete them afterwards, even when the scenario fails.
    pub async fn in_namespaces<F, Fut>(&self, count: usize, scenario: F)
    where
        F: FnOnce(Vec<String>) -> Fut,
        Fut: Future<Output = ()>,
    {
        let base = format!("opc-e2e-{}", suffix());
        let names: Vec<String> = match count {
            1 => vec![base],
            n => (1..=n).map(|i| format!("{base}-{i}")).collect(),
        };
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        for ns in &names {
            let body: Namespace = serde_json::from_value(json!({"metadata": {"name": ns, "labels": {"app.kubernetes.io/created-by": "ops-pod-cleaner-e2e"}}})).unwrap();
            namespaces
                .create(&PostParams::default(), &body)
                .await
                .expect("create the test namespace");
        }
        let outcome = std::panic::AssertUnwindSafe(scenario(names.clone()))
            .catch_unwind()
            .await;
        for ns in &names {
            clean_up(&self.client, ns).await;
        }
        if let Err(panic) = outcome {
            std::panic::resume_unwind(panic);
        }
    }

    /// The binary with this target's kubeconfig and `config`; its Lease in `lease_ns`.
    /// The product as built with these tests, or `$OPC_BIN` (another build, for a before/after).
    pub fn binary(&self, config: &Path, lease_ns: &str, args: &[&str]) -> Output {
        let bin = std::env::var_os("OPC_BIN")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_ops-pod-cleaner").into());
        Command::new(bin)
            .args(args)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--config")
            .arg(config)
            .env("POD_NAMESPACE", lease_ns)
            .env_remove("OPS_POD_CLEANER_CONFIG")
            .output()
            .expect("the binary runs")
    }

    /// `headless --once` over `namespaces`; returns its exit code and what it printed.
    pub fn headless_once(&self, config: &Path, namespaces: &[String]) -> (Option<i32>, String) {
        let mut args = vec!["headless", "--once"];
        for ns in namespaces {
            args.extend(["-n", ns.as_str()]);
        }
        let out = self.binary(config, &namespaces[0], &args);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    pub async fn wait_for<T, F, Fut>(&self, what: &str, check: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Option<T>>,
    {
        wait_for(self.patience, what, check).await
    }
}

pub async fn wait_for<T, F, Fut>(patience: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {patience:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Let held pods go, then delete the namespace (a real cluster finishes that asynchronously).
async fn clean_up(client: &kube::Client, ns: &str) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    if let Ok(list) = pods.list(&ListParams::default()).await {
        for pod in list.items.iter().filter(|p| {
            p.metadata
                .finalizers
                .as_ref()
                .is_some_and(|f| !f.is_empty())
        }) {
            let name = pod.metadata.name.clone().unwrap_or_default();
            let release = json!({"metadata": {"finalizers": null}});
            if let Err(e) = pods
                .patch(&name, &PatchParams::default(), &Patch::Merge(&release))
                .await
            {
                eprintln!("cleanup: could not release {ns}/{name}: {e}");
            }
        }
    }
    let namespaces: Api<Namespace> = Api::all(client.clone());
    if let Err(e) = namespaces.delete(ns, &DeleteParams::default()).await {
        eprintln!("cleanup: could not delete namespace {ns}: {e}; delete it by hand");
    }
}

fn suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    format!("{:06x}", (nanos ^ std::process::id()) & 0xff_ffff)
}

/// A container of the pod waits on an image pull that failed.
pub fn pull_failing(pod: &Pod) -> bool {
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref());
    statuses.into_iter().flatten().any(|c| {
        let reason = c
            .state
            .as_ref()
            .and_then(|s| s.waiting.as_ref())
            .and_then(|w| w.reason.as_deref());
        matches!(reason, Some("ErrImagePull" | "ImagePullBackOff"))
    })
}
