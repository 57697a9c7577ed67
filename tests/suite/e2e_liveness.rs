//! Leader election end to end, as it runs in the cluster: two `headless` replicas of the
//! binary against the simulated cluster always and against `OPC_E2E_KUBECONFIG` with `--ignored`
//! (it needs get/create/update on leases in its test namespace). Exactly one leads; SIGTERM
//! on the leader releases the lease, and the other takes over without waiting for expiry.
//! The faults a real cluster cannot be asked for (silence, hangs, partitions) are in
//! `tests/liveness.rs` and `tests/headless.rs`, on the simulator.

use crate::support;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use support::e2e::Target;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_leader_and_a_clean_hand_over_simulated() {
    let dir = tempfile::tempdir().unwrap();
    hand_over(&Target::simulated(dir.path()).await, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real cluster: OPC_E2E_KUBECONFIG=<kubeconfig> cargo test --test suite e2e_liveness:: -- --ignored"]
async fn one_leader_and_a_clean_hand_over_on_a_real_cluster() {
    let target = Target::real().await;
    let dir = tempfile::tempdir().unwrap();
    hand_over(&target, dir.path()).await;
}

/// One `headless` process; killed when dropped.
struct Replica {
    name: &'static str,
    port: u16,
    child: Child,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Replica {
    fn start(target: &Target, ns: &str, name: &'static str, scratch: &Path) -> Replica {
        let port = free_port();
        let config = scratch.join(format!("{name}.yaml"));
        let audit = scratch.join(format!("{name}-audit.jsonl"));
        std::fs::write(&config, format!("audit:\n  path: {}\n", audit.display())).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
            .args(["headless", "-n", ns, "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["--findings-listen", "127.0.0.1:0"])
            .arg("--kubeconfig")
            .arg(&target.kubeconfig)
            .arg("--config")
            .arg(&config)
            .env("POD_NAMESPACE", ns)
            .env("HOSTNAME", name)
            .env_remove("OPS_POD_CLEANER_CONFIG")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary runs");
        Replica { name, port, child }
    }

    /// `opc_leader` from `/metrics`, once it answers.
    async fn leads(&self) -> Option<bool> {
        let url = format!("http://127.0.0.1:{}/metrics", self.port);
        let text = reqwest::get(url).await.ok()?.text().await.ok()?;
        let line = text.lines().find(|l| l.starts_with("opc_leader "))?;
        Some(line.ends_with(" 1"))
    }

    fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }
}

async fn hand_over(target: &Target, scratch: &Path) {
    target
        .in_namespaces(1, |names| async move {
            let ns = &names[0];
            let replicas = [
                Replica::start(target, ns, "replica-a", scratch),
                Replica::start(target, ns, "replica-b", scratch),
            ];
            let leader = target
                .wait_for("exactly one leader", || async {
                    let (a, b) = (replicas[0].leads().await?, replicas[1].leads().await?);
                    match (a, b) {
                        (true, false) => Some(0),
                        (false, true) => Some(1),
                        _ => None,
                    }
                })
                .await;
            let follower = 1 - leader;
            // Both stay what they are for a while: no flapping, never two leaders.
            for _ in 0..5 {
                tokio::time::sleep(Duration::from_millis(200)).await;
                assert_eq!(replicas[leader].leads().await, Some(true));
                assert_eq!(replicas[follower].leads().await, Some(false));
            }
            let leases: Api<Lease> = Api::namespaced(target.client.clone(), ns);
            let holder = |lease: Lease| lease.spec.and_then(|s| s.holder_identity);
            let held = holder(leases.get("ops-pod-cleaner").await.unwrap()).unwrap();
            assert!(held.starts_with(replicas[leader].name), "{held}");

            replicas[leader].terminate();
            // Released on the way out: taken well before the 15 s lease could expire.
            let started = tokio::time::Instant::now();
            target
                .wait_for("the other replica to lead", || async {
                    replicas[follower].leads().await.filter(|l| *l)
                })
                .await;
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "took over after {:?}",
                started.elapsed()
            );
            let held = holder(leases.get("ops-pod-cleaner").await.unwrap()).unwrap();
            assert!(held.starts_with(replicas[follower].name), "{held}");
        })
        .await;
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}
