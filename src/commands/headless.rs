//! `headless`: watch, run the worker (master auto on) as the Lease's leader, send scheduled
//! reports, serve `/metrics`, `/healthz` and the findings under `/v1/`; `--once` runs one pass
//! and exits.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::targets::open_one;
use crate::Result;
use crate::cli::{GlobalArgs, HeadlessArgs};
use crate::headless::sizing;
use crate::headless::{FleetSettings, Listeners, Sources, bind, serve, shutdown_signal};
use opc_core::Usage;
use opc_core::actions::{ACTION_LOG, Audit};
use opc_core::clock::Clock;
use opc_core::cluster::{Cache, watch_settings};
use opc_core::config::ReportConfig;
use opc_core::lease::{self, Wiring};
use opc_core::lease::{Elector, LeaseSettings, Role};
use opc_core::policy::Policy;
use opc_core::report::{DeliveryPolicy, Reporter, live_report};
use opc_core::session::ClusterSession;
use opc_core::worker::{self, Standby, WorkerHandle, WorkerOptions};

const SYNC_TIMEOUT: Duration = Duration::from_secs(120);

pub(crate) async fn run(global: &GlobalArgs, mode: HeadlessArgs, clock: Clock) -> Result<ExitCode> {
    let config = super::load_config(global)?;
    let targets = open_one(global, &config, "headless").await?;
    // `open_one` opened exactly one.
    let Some(cluster) = targets.clusters.first() else {
        return Err(Usage::NoCluster.into());
    };
    let policy = Policy::new(global.flags(), &config);
    let session = ClusterSession::open(
        cluster.clone(),
        &targets.scopes,
        &watch_settings(&config.cluster)?,
        &policy,
        required_audit(&policy)?,
        clock,
    );
    // A sink whose optional Secret is not there yet: said once, at start.
    for absent in &config.report.left_out {
        tracing::warn!("report: {absent}; create its Secret to send the report there");
    }
    let reporter = (!config.report.sinks.is_empty())
        .then(|| Reporter::new(&config.report, DeliveryPolicy::default()).map(Arc::new))
        .transpose()?;
    let options = WorkerOptions {
        master_auto: true,
        standby: Some(Standby::Electing),
        report_schedule: (config.report.enabled).then(|| config.report.schedule.clone()),
        reporter,
        ..WorkerOptions::default()
    };
    tokio::spawn(say_memory_budget(session.cache.clone()));
    let lease = LeaseSettings::from_env();
    let scopes: Vec<String> = targets.scopes.iter().map(ToString::to_string).collect();
    let dry_run = if policy.dry_run() { " (dry run)" } else { "" };
    say(&format!(
        "headless: watching {} of cluster {}; auto-clean acts only while this process ({}) \
         holds the Lease {}/{}{dry_run}",
        scopes.join(", "),
        cluster.name,
        lease.identity,
        lease.namespace,
        lease.name,
    ));
    let elector = Elector::new(cluster.client.clone(), lease, session.cache.clock());
    if mode.once {
        once(&session, &policy, options, elector, mode.send).await
    } else {
        serve_until_signal(&session, &policy, options, elector, &mode, &config.report).await
    }
}

/// Unattended, a missing audit log is a start-up error, not a worker that never acts.
fn required_audit(policy: &Policy) -> Result<Audit> {
    match Audit::open(policy) {
        Audit::Unavailable { path, why } => Err(Usage::AuditLogUnavailable { path, why }.into()),
        audit => Ok(audit),
    }
}

/// `report`: the restart report as it stands, for `/v1/report`.
async fn serve_until_signal(
    session: &ClusterSession,
    policy: &Policy,
    options: WorkerOptions,
    elector: Elector,
    mode: &HeadlessArgs,
    report: &ReportConfig,
) -> Result<ExitCode> {
    let listeners = Listeners {
        probes: bind(mode.listen).await?,
        findings: bind(mode.findings_listen).await?,
    };
    if let Some(reporter) = options.reporter.clone() {
        // Reports spooled before a restart go out in the background: a slow or refusing sink
        // must not hold up /healthz or the worker. Their results count in /metrics.
        let counters = options.counters.clone();
        tokio::spawn(async move {
            for d in reporter.resend_spooled().await {
                counters.count_delivery(&d.sink, d.result.label());
            }
        });
    }
    let counters = options.counters.clone();
    let checking = session.executor.clone();
    tokio::spawn(async move { checking.resolve_interrupted().await });
    let max_stale = policy.safety().max_stale;
    let restarts = live_report(
        options.reporter.clone(),
        report,
        &session.name,
        session.cache.clone(),
    );
    let leading = Leading::start(session, policy, options, elector, None);
    let sources = Sources {
        cache: session.cache.reader(),
        max_stale,
        counters,
        worker: leading.handle.status.clone(),
        leader: leading.leader.clone(),
        started: session.cache.clock().now(),
        recent: leading.handle.recent.clone(),
        fleet: FleetSettings::default(),
        restarts: Some(restarts),
    };
    let server = tokio::spawn(serve(listeners, sources, leading.stop.subscribe()));
    tracing::info!(
        listen = %mode.listen,
        findings = %mode.findings_listen,
        "headless: serving /metrics, /healthz and /readyz, and the findings under /v1/ on their own port; auto-clean runs while this replica leads"
    );
    shutdown_signal().await;
    tracing::info!("shutting down: finishing the current action, then releasing the lease");
    leading.stop().await;
    let _ = server.await;
    Ok(ExitCode::SUCCESS)
}

/// How long SIGTERM waits for the action in flight (Kubernetes allows 30 s by default).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(15);

/// The worker steered by the election, as both modes run it: it acts only while this replica
/// leads, each action ends where the lease would, and stopping lets the lease go last.
struct Leading {
    handle: WorkerHandle,
    election: tokio::task::JoinHandle<Elector>,
    stop: watch::Sender<bool>,
    /// Whether this replica leads, for `/metrics`.
    leader: watch::Receiver<bool>,
}

impl Leading {
    /// `leading_since`: the round `--once` has just won (it acts at once, and restores what
    /// the previous holder sent); `None` waits for the election.
    fn start(
        session: &ClusterSession,
        policy: &Policy,
        mut options: WorkerOptions,
        mut elector: Elector,
        leading_since: Option<Instant>,
    ) -> Leading {
        let acting = leading_since.map(|since| since + elector.settings().renew_deadline);
        let (acting_tx, acting_until) = watch::channel(acting);
        options.acting_until = Some(acting_until);
        if leading_since.is_some() {
            options.inherited = elector.take_inherited().unwrap_or_default();
        }
        let handle = session.spawn_worker(policy, options);
        let (stop, stopped) = watch::channel(false);
        let (leader_tx, leader) = watch::channel(leading_since.is_some());
        let wiring = Wiring {
            worker: handle.commands.clone(),
            recent: handle.recent.clone(),
            leader: leader_tx,
            acting_until: acting_tx,
        };
        let election = tokio::spawn(lease::run(elector, wiring, stopped, leading_since));
        Leading {
            handle,
            election,
            stop,
            leader,
        }
    }

    /// Stop electing and acting, wait (bounded) for the action in flight and its audit
    /// record, then release the lease: no other replica may act while one of ours runs.
    async fn stop(self) {
        let _ = self.stop.send(true);
        let elector = self.election.await;
        if tokio::time::timeout(SHUTDOWN_GRACE, finish(self.handle))
            .await
            .is_err()
        {
            tracing::warn!("the action in flight did not finish within {SHUTDOWN_GRACE:?}");
        }
        if let Ok(elector) = elector {
            elector.release().await;
        }
    }
}

/// One pass (and one report with `send`) as the leader, or nothing if another replica leads.
/// The lease is renewed for the whole pass; an action never outlives it.
async fn once(
    session: &ClusterSession,
    policy: &Policy,
    mut options: WorkerOptions,
    mut elector: Elector,
    send: bool,
) -> Result<ExitCode> {
    let cache = &session.cache;
    wait_for_sync(cache).await?;
    let Some(won) = take_lease(&mut elector, cache.clock()).await? else {
        return Ok(ExitCode::SUCCESS);
    };
    // An action a crash interrupted is reported, checked and closed before new ones run.
    session.executor.resolve_interrupted().await;
    let (reporter, cluster) = (options.reporter.clone(), session.name.clone());
    options.standby = None;
    options.report_schedule = None;
    let leading = Leading::start(session, policy, options, elector, Some(won));
    let mut status = leading.handle.status.clone();
    // A pass counts once its actions have finished, so the counts below are true. SIGTERM
    // (a CronJob's deadline, a drain) stops it and lets the lease go rather than leave it held.
    let passed = tokio::select! {
        passed = status.wait_for(|s| s.passes > 0) => passed.is_ok(),
        _ = shutdown_signal() => false,
    };
    if !passed {
        say("stopped before the pass ended: letting the lease go");
        leading.stop().await;
        return Ok(ExitCode::from(super::EXIT_RUNTIME));
    }
    let mut delivered = true;
    if send {
        // Sent here, not through the worker, for the typed summary: it says whether every
        // sink took the report (spooled, dead-lettered, dropped or lost all count against it).
        match &reporter {
            Some(reporter) => {
                let pods = reporter.candidates(cache);
                let summary = reporter.send(&pods, &cluster, cache.clock().now()).await;
                say(&format!("report: {}", summary.describe()));
                delivered = summary.all_sent();
            }
            None => say("report: no report sinks are configured (report.sinks)"),
        }
    }
    let pass = status.borrow().clone();
    say(&summary(&pass));
    leading.stop().await;
    let failed = pass.rules.values().any(|r| r.failures > 0);
    Ok(if delivered && !failed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_RUNTIME)
    })
}

/// Lead for one pass: at once when the lease is free or ours; else only if its holder has not
/// renewed for a whole lease duration, watched on this process's own clock (a `--once` run
/// killed while holding it must not keep every later run out). `None`: a live replica leads.
async fn take_lease(elector: &mut Elector, clock: Clock) -> Result<Option<Instant>> {
    let first_look = Instant::now();
    let settings = elector.settings().clone();
    let mut first_seen = None;
    loop {
        let holder = match elector.round(clock.now()).await {
            Ok(Role::Leader) => {
                say(&format!(
                    "leading: this process ({}) holds the Lease {}/{} for one pass",
                    settings.identity, settings.namespace, settings.name
                ));
                return Ok(Some(Instant::now()));
            }
            Ok(Role::Follower(holder)) => holder,
            Err(source) => {
                return Err(opc_core::Error::Lease {
                    lease: format!("{}/{}", settings.namespace, settings.name),
                    source,
                }
                .into());
            }
        };
        let seen = elector.record_unchanged_since();
        let renewed = first_seen.is_some_and(|first| seen != first);
        first_seen.get_or_insert(seen);
        // A holder that renews is alive; one that has not for longer than a lease (what the
        // record says, or ours) plus a round would have been taken over by now.
        let waited_out = first_look.elapsed() > settings.duration.max(LONGEST_LEASE) * 2;
        if renewed || waited_out {
            say(&format!(
                "another replica leads ({holder}); this pass does nothing"
            ));
            return Ok(None);
        }
        tokio::time::sleep(settings.retry_period).await;
    }
}

/// The longest lease `--once` waits out (a record may ask for more than ours).
const LONGEST_LEASE: Duration = Duration::from_secs(60);

fn summary(status: &worker::WorkerStatus) -> String {
    let taken: u64 = status.rules.values().map(|r| r.actions_taken).sum();
    let failed: u64 = status.rules.values().map(|r| r.failures).sum();
    let actions = if taken == 1 { "action" } else { "actions" };
    let mut line = format!("one pass: {taken} {actions} taken, {failed} failed");
    if status.dry_run {
        line.push_str(" (dry run: nothing was changed)");
    }
    if let Some(why) = &status.blocked {
        line.push_str(&format!("; blocked: {why}"));
    }
    for (rule, r) in &status.rules {
        for pause in &r.paused {
            line.push_str(&format!("; {rule} {pause}"));
        }
        if let Some(why) = &r.held_reason {
            line.push_str(&format!("; {rule} held {}: {why}", r.held));
        }
    }
    line
}

/// A line of headless's own output, in the action log, whatever `$OPS_POD_CLEANER_LOG` says.
fn say(line: &str) {
    tracing::info!(target: ACTION_LOG, "{line}");
}

/// Once the first list is in: the memory budget for this cluster against the container's limit.
async fn say_memory_budget(cache: Cache) {
    if !synced(&cache).await {
        return;
    }
    let (line, short) = sizing::describe(cache.len(), sizing::cgroup_limit());
    if short {
        tracing::warn!("{line}");
    } else {
        say(&line);
    }
}

async fn wait_for_sync(cache: &Cache) -> Result<()> {
    let synced = tokio::time::timeout(SYNC_TIMEOUT, synced(cache));
    synced.await.map(|_| ()).map_err(|_| {
        opc_core::Error::NotSynced {
            within: SYNC_TIMEOUT,
            last_error: cache.health().last_error(),
        }
        .into()
    })
}

/// Resolves once the first complete list is in; false if the cache is gone first.
async fn synced(cache: &Cache) -> bool {
    let mut changes = cache.subscribe();
    while !cache.health().synced() {
        if changes.changed().await.is_err() {
            return false;
        }
    }
    true
}

/// Stop the worker and wait for its current action: the status channel closes when it ends.
/// The audit log is fsynced per record and the spool per file, so nothing is left to flush.
async fn finish(handle: WorkerHandle) {
    let WorkerHandle {
        commands,
        mut status,
        ..
    } = handle;
    drop(commands);
    while status.changed().await.is_ok() {}
}
