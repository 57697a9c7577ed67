//! The bare command: the interactive screen on one cluster, switchable to another context.

use std::process::ExitCode;
use std::sync::Arc;

use chrono::Utc;
use futures::FutureExt;
use futures::future::BoxFuture;
use kube::config::Kubeconfig;
use tokio::task::JoinHandle;

use super::{Targets, open_targets};
use crate::actions::{AuditLog, Executor, ExecutorSettings};
use crate::cli::GlobalArgs;
use crate::cluster::{
    Cache, Cluster, ConnectOptions, Scope, WatchSettings, connect, spawn_watches,
};
use crate::config::Config;
use crate::report::RestartReport;
use crate::ui::{Connector, ReportSource, RunOptions, Session};
use crate::worker::{WorkerHandle, WorkerStatus};
use crate::{Error, Result};

pub async fn run(global: &GlobalArgs) -> Result<ExitCode> {
    let config = Arc::new(Config::load(global.config.as_deref())?);
    let targets = open_targets(global).await?;
    let scopes = targets.scopes.clone();
    let options = RunOptions {
        scope: scope_label(&scopes),
        readonly: global.readonly,
        dry_run: global.dry_run,
        chain: config.rules.clone(),
        keys: config.ui.clone(),
        export_dir: std::env::current_dir().unwrap_or_else(|_| ".".into()),
    };
    let opener = Opener {
        global: global.clone(),
        config,
        scopes,
    };
    let cluster = targets
        .clusters
        .first()
        .cloned()
        .ok_or_else(|| Error::Usage("no cluster to show".into()))?;
    let session = opener.session(cluster, Some(targets));
    crate::ui::run(session, Arc::new(opener), options).await?;
    Ok(ExitCode::SUCCESS)
}

fn scope_label(scopes: &[Scope]) -> String {
    match scopes {
        [Scope::All] | [] => "all namespaces".to_string(),
        [one] => one.to_string(),
        many => format!(
            "namespaces {}",
            many.iter()
                .map(|s| match s {
                    Scope::Namespace(n) => n.as_str(),
                    Scope::All => "*",
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Opens sessions: the first from the command line, later ones on a context switch.
struct Opener {
    global: GlobalArgs,
    config: Arc<Config>,
    scopes: Vec<Scope>,
}

/// What a session keeps alive: its watches, and the simulated cluster in `--demo`.
struct Running {
    watches: Vec<JoinHandle<()>>,
    _targets: Option<Targets>,
}

impl Drop for Running {
    fn drop(&mut self) {
        for watch in &self.watches {
            watch.abort();
        }
    }
}

impl Opener {
    fn session(&self, cluster: Cluster, targets: Option<Targets>) -> Session {
        let cache = Cache::new();
        let watches = spawn_watches(
            &cluster.client,
            &self.scopes,
            &cache,
            &WatchSettings::default(),
        );
        let audit = match AuditLog::open(&self.config.audit.path) {
            Ok(log) => Some(log),
            Err(e) => {
                tracing::warn!("audit log unavailable: {e}");
                None
            }
        };
        let settings = ExecutorSettings {
            cluster: cluster.name.clone(),
            dry_run: self.global.dry_run,
            events: self.config.audit.events,
            ..Default::default()
        };
        let executor = Arc::new(Executor::new(
            cluster.client.clone(),
            cache.clone(),
            self.config.rules.clone(),
            audit,
            settings,
        ));
        let worker = stand_in_worker(&self.config, self.global.dry_run);
        let title = self.config.report.title.clone();
        let name = cluster.name.clone();
        let report: ReportSource = Arc::new(move |_cache: &Cache| RestartReport {
            title: title.clone(),
            cluster: name.clone(),
            generated: Utc::now(),
            groups: Vec::new(),
        });
        Session {
            context: cluster.name.clone(),
            client: cluster.client,
            cache,
            executor,
            worker,
            report,
            guard: Box::new(Running {
                watches,
                _targets: targets,
            }),
        }
    }
}

/// Until the auto-clean worker is wired in: keeps the toggles and shows them, acts on nothing.
fn stand_in_worker(config: &Config, dry_run: bool) -> WorkerHandle {
    let (commands, mut rx) = tokio::sync::mpsc::channel(32);
    let status = WorkerStatus {
        dry_run,
        rules: config
            .rules
            .iter()
            .map(|r| {
                (
                    r.kind,
                    crate::worker::RuleStatus {
                        auto: r.auto,
                        ..Default::default()
                    },
                )
            })
            .collect(),
        ..Default::default()
    };
    let (tx, status) = tokio::sync::watch::channel(status);
    tokio::spawn(async move {
        while let Some(command) = rx.recv().await {
            tx.send_modify(|s| match command {
                crate::worker::WorkerCommand::SetAuto { rule, on } => {
                    s.rules.entry(rule).or_default().auto = on
                }
                crate::worker::WorkerCommand::SetMasterAuto(on) => s.master_auto = on,
                _ => {}
            });
        }
    });
    WorkerHandle { commands, status }
}

impl Connector for Opener {
    fn contexts(&self) -> std::result::Result<Vec<String>, String> {
        if self.global.demo {
            return Ok(vec!["demo".to_string()]);
        }
        let file = match &self.global.kubeconfig {
            Some(path) => Kubeconfig::read_from(path),
            None => Kubeconfig::read(),
        }
        .map_err(|e| format!("cannot read kubeconfig: {e}"))?;
        Ok(file.contexts.into_iter().map(|c| c.name).collect())
    }

    fn connect(&self, context: String) -> BoxFuture<'static, std::result::Result<Session, String>> {
        let opener = Opener {
            global: self.global.clone(),
            config: self.config.clone(),
            scopes: self.scopes.clone(),
        };
        async move {
            if opener.global.demo {
                let mut global = opener.global.clone();
                global.context.clear();
                let targets = open_targets(&global).await.map_err(|e| e.to_string())?;
                let cluster = targets.clusters[0].clone();
                return Ok(opener.session(cluster, Some(targets)));
            }
            let options = ConnectOptions {
                kubeconfig: opener.global.kubeconfig.clone(),
                context: Some(context),
            };
            let cluster = connect(&options).await.map_err(|e| e.to_string())?;
            Ok(opener.session(cluster, None))
        }
        .boxed()
    }
}
