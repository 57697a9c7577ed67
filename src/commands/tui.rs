//! The bare command: the interactive screen on one cluster, switchable to another context.

use std::process::ExitCode;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::watch;

use super::{Targets, open_targets};
use crate::Result;
use crate::cli::GlobalArgs;
use crate::ui::{Connector, RunOptions, Session};
use opc_core::actions::{ACTION_LOG, Audit};
use opc_core::clock::Clock;
use opc_core::cluster::{Cluster, ClusterName, Scope, WatchSettings, watch_settings};
use opc_core::config::Config;
use opc_core::fleet::{WatchWhy, worker_report};
use opc_core::lease;
use opc_core::policy::Policy;
use opc_core::report::{DeliveryPolicy, Reporter, live_report};
use opc_core::session::{ClusterSession, Feed, SourceChoice};
use opc_core::worker::{Standby, WorkerOptions};

pub(crate) async fn run(global: &GlobalArgs, clock: Clock) -> Result<ExitCode> {
    let config = Arc::new(super::load_config(global)?);
    let policy = Policy::new(global.flags(), &config);
    let watch = watch_settings(&config.cluster)?;
    let targets = open_targets(global, &config).await?;
    let scopes = targets.scopes.clone();
    let options = RunOptions {
        scope: scope_label(&scopes),
        flags: policy.flags(),
        chain: config.rules.clone(),
        keys: config.ui.clone(),
        export_dir: std::env::current_dir().unwrap_or_else(|_| ".".into()),
        scopes: scopes.clone(),
        report_sinks: !config.report.sinks.is_empty(),
        clock,
    };
    // One reporter builds the pane's report and, when sinks are configured, delivers it.
    let reporter = Reporter::new(&config.report, DeliveryPolicy::default())
        .inspect_err(|e| tracing::warn!("restart report delivery unavailable: {e}"))
        .ok()
        .map(Arc::new);
    let opener = Opener {
        global: global.clone(),
        audit: Audit::open(&policy),
        reporter,
        config,
        policy,
        watch,
        scopes,
        clock,
    };
    if targets.clusters.is_empty() {
        return Err(opc_core::Usage::NoCluster.into());
    }
    // One audit log for every cluster: said once, not once per cluster.
    if let Audit::Unavailable { path, why } = &opener.audit {
        tracing::error!(
            target: ACTION_LOG,
            "the audit log {} cannot be opened ({why}): nothing can act; fix it, or restart \
             with --no-audit",
            path.display()
        );
    }
    // `targets` keeps the simulated clusters of `--demo` up for as long as the screen runs.
    let opening =
        (targets.clusters.iter()).map(|cluster| opener.session(cluster.clone(), None, None));
    let sessions = futures::future::join_all(opening).await;
    crate::ui::run(sessions, Arc::new(opener), options).await?;
    drop(targets);
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

/// Opens sessions, all under the same policy and writing the same audit log.
#[derive(Clone)]
struct Opener {
    global: GlobalArgs,
    config: Arc<Config>,
    policy: Policy,
    /// Opened once: one writer and one id sequence for every cluster's records, so ids stay
    /// unique and a rotation never falls between another cluster's intent and outcome.
    audit: Audit,
    /// Shared like the audit log: one spool, resent by one round at a time.
    reporter: Option<Arc<Reporter>>,
    watch: WatchSettings,
    scopes: Vec<Scope>,
    clock: Clock,
}

/// What a session keeps alive: the simulated cluster in `--demo`, and the worker's part in
/// the Lease (which ends when `_closed` is dropped).
struct Running {
    targets: Option<Targets>,
    _closed: watch::Sender<()>,
}

impl Opener {
    /// `cluster`'s session, from the source its context names, or watched because `watched`.
    async fn session(
        &self,
        cluster: Cluster,
        targets: Option<Targets>,
        watched: Option<WatchWhy>,
    ) -> Session {
        let (scopes, watch, policy) = (&self.scopes, &self.watch, &self.policy);
        let (audit, clock) = (self.audit.clone(), self.clock);
        let opened = match watched {
            Some(why) => ClusterSession::open(cluster, scopes, watch, policy, audit, clock)
                .watched_because(why),
            None => {
                let context = cluster.name.as_str();
                let source =
                    (self.global.source).unwrap_or_else(|| self.config.cluster.source_for(context));
                let choice = SourceChoice::of(source);
                ClusterSession::open_as(cluster, &choice, scopes, watch, policy, audit, clock).await
            }
        };
        let checking = opened.executor.clone();
        tokio::spawn(async move {
            for line in checking.resolve_interrupted().await {
                tracing::warn!(target: ACTION_LOG, "{line}");
            }
        });
        // A fed cluster's cache holds none of its pods: its restart report is its worker's.
        let reporter = self.reporter.clone().filter(|_| !opened.is_fed());
        let sinks = !self.config.report.sinks.is_empty();
        // A worker that can change the cluster takes part in its Lease: one worker per cluster.
        // Dry-run and read-only change nothing, so they never keep the in-cluster one out.
        let elects = !self.policy.dry_run() && !self.policy.readonly();
        let (acting_tx, acting_until) = watch::channel(None);
        let options = WorkerOptions {
            master_auto: false,
            reporter: reporter.clone().filter(|_| sinks),
            report_schedule: (self.config.report.enabled && sinks)
                .then(|| self.config.report.schedule.clone()),
            standby: elects.then_some(Standby::WaitingForLease),
            acting_until: elects.then_some(acting_until),
            ..WorkerOptions::default()
        };
        let worker = opened.spawn_worker(&self.policy, options);
        let (closed_tx, closed) = watch::channel(());
        if elects {
            tokio::spawn(lease::while_master_on(
                opened.client.clone(),
                opened.cache.clock(),
                worker.clone(),
                acting_tx,
                closed,
            ));
        }
        let report = Some(match &opened.feed {
            Feed::WorkerFed(fed) => worker_report(
                opened.client.clone(),
                fed.address().clone(),
                &opened.name,
                opened.cache.clock(),
            ),
            Feed::Watched(_) => live_report(
                reporter,
                &self.config.report,
                &opened.name,
                opened.cache.clone(),
            ),
        });
        Session {
            cluster: opened,
            worker,
            report,
            _guard: Box::new(Running {
                targets,
                _closed: closed_tx,
            }),
        }
    }
}

impl Connector for Opener {
    fn contexts(&self) -> Result<Vec<ClusterName>> {
        let names = if self.global.demo {
            super::demo::contexts()
        } else {
            super::targets::kubeconfig_contexts(self.global.kubeconfig.as_deref())
                .map_err(opc_core::Error::Kubeconfig)?
        };
        Ok(names.iter().map(|name| ClusterName::new(name)).collect())
    }

    fn connect(&self, context: ClusterName) -> BoxFuture<'static, Result<Session>> {
        let context = context.to_string();
        let opener = self.clone();
        async move {
            let mut global = opener.global.clone();
            global.context = vec![context];
            global.all_contexts = false;
            let targets = open_targets(&global, &opener.config).await?;
            let Some(cluster) = targets.clusters.first().cloned() else {
                return Err(opc_core::Usage::NoCluster.into());
            };
            Ok(opener.session(cluster, Some(targets), None).await)
        }
        .boxed()
    }

    fn watch_instead(&self, session: &mut Session, why: WatchWhy) -> BoxFuture<'static, Session> {
        let cluster = Cluster {
            name: session.cluster.name.clone(),
            client: session.cluster.client.clone(),
        };
        let running = session._guard.downcast_mut::<Running>();
        let targets = running.and_then(|running| running.targets.take());
        let opener = self.clone();
        async move { opener.session(cluster, targets, Some(why)).await }.boxed()
    }
}
