//! Several simulated clusters behind one kubeconfig, one context each, and the binary run
//! against them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kube_sim::SimServer;

/// A kubeconfig whose contexts are `(name, server)`; the first is the current one.
pub fn kubeconfig(contexts: &[(&str, &SimServer)]) -> String {
    let mut clusters = String::new();
    let mut named = String::new();
    for (name, server) in contexts {
        clusters.push_str(&format!(
            "- name: {name}\n  cluster:\n    server: {}\n",
            server.url()
        ));
        named.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: sim\n"
        ));
    }
    let current = contexts.first().map_or("none", |(name, _)| name);
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n{clusters}users:\n- name: sim\n  user: {{}}\n\
         contexts:\n{named}current-context: {current}\n"
    )
}

/// The binary with `args`, no config from the environment and no kubeconfig but `--kubeconfig`.
pub fn binary(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"));
    command
        .args(args)
        .env_remove("OPS_POD_CLEANER_CONFIG")
        .env_remove("POD_NAMESPACE")
        .env("KUBECONFIG", "/nonexistent/kubeconfig");
    command
}

/// Run the binary off the async runtime (the simulated servers live on it).
pub async fn run(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        binary(&args).output().expect("the binary runs")
    })
    .await
    .expect("the binary's thread")
}

/// A scratch directory with a kubeconfig for `contexts` and a config file holding `yaml`
/// (its audit log inside the directory).
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new(contexts: &[(&str, &SimServer)], yaml: &str) -> Scratch {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::write(dir.path().join("kubeconfig"), kubeconfig(contexts)).expect("kubeconfig");
        let audit = dir.path().join("audit.jsonl");
        let config = format!(
            "{yaml}audit:\n  path: {}\n  events: false\n",
            audit.display()
        );
        std::fs::write(dir.path().join("config.yaml"), config).expect("config");
        Scratch { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `--kubeconfig K --config C` followed by `args`.
    pub fn args(&self, args: &[&str]) -> Vec<String> {
        let mut all = vec![
            "--kubeconfig".to_string(),
            text(&self.path("kubeconfig")),
            "--config".to_string(),
            text(&self.path("config.yaml")),
        ];
        all.extend(args.iter().map(|a| a.to_string()));
        all
    }
}

fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
