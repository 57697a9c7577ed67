//! The UI task: one loop that waits for keys, cache changes, worker status, results of API
//! calls, a one-second tick and signals; feeds them to `update`; carries out the effects; draws.
//! No busy loop: it sleeps in `select!` until one of those arrives.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use crossterm::event::{Event as TermEvent, EventStream};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Event as KubeEvent, Pod};
use kube::api::{Api, ListParams};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use super::details::PodDetails;
use super::event::{Effect, Event, Snapshot, key_from_crossterm};
use super::logging::ACTION_TARGET;
use super::session::{Connector, Session};
use super::state::{State, WatchLine};
use super::terminal::TerminalGuard;
use super::update::update;
use super::view::{draw, table_height};
use crate::actions::{Executor, Origin, PodRef, Resolution, WorkloadRef};
use crate::cluster::Health;
use crate::config::UiConfig;
use crate::rules::RuleSpec;
use crate::{Error, Result};

/// Cache changes arriving within this window are classified together.
const SETTLE: Duration = Duration::from_millis(250);
/// How long quitting waits for confirmed actions still running.
const FINISH_IN_FLIGHT: Duration = Duration::from_secs(10);

/// Counts one batch of confirmed actions as running until it is dropped.
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn start(count: &Arc<AtomicUsize>) -> InFlight {
        count.fetch_add(1, Ordering::SeqCst);
        InFlight(count.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What does not change with the context.
pub struct RunOptions {
    pub scope: String,
    pub readonly: bool,
    pub dry_run: bool,
    /// `--no-audit`: shown as a badge.
    pub no_audit: bool,
    pub chain: Vec<RuleSpec>,
    pub keys: UiConfig,
    /// Where exported reports are written.
    pub export_dir: PathBuf,
}

pub async fn run(
    session: Session,
    connector: Arc<dyn Connector>,
    options: RunOptions,
) -> Result<()> {
    let mut state = State::new(
        &session.context,
        &options.scope,
        options.chain.clone(),
        options.keys.clone(),
    );
    state.readonly = options.readonly;
    state.dry_run = options.dry_run;
    state.no_audit = options.no_audit;
    let mut guard = TerminalGuard::enter()
        .map_err(|e| Error::Usage(format!("cannot set up the terminal: {e}")))?;
    let mut runtime = Runtime::new(session, connector, options);
    let result = runtime.run(&mut state, &mut guard).await;
    runtime.finish_in_flight(&mut state, &mut guard).await;
    drop(guard);
    result
}

struct Runtime {
    session: Session,
    connector: Arc<dyn Connector>,
    options: RunOptions,
    events: mpsc::UnboundedSender<Event>,
    inbox: mpsc::UnboundedReceiver<Event>,
    sessions: mpsc::UnboundedSender<Result<Session, String>>,
    new_sessions: mpsc::UnboundedReceiver<Result<Session, String>>,
    /// Workloads found for confirmation dialogs, by pod UID: what a scale changed.
    resolved: HashMap<String, WorkloadRef>,
    /// Confirmed actions still running: quitting waits for them and their audit records.
    in_flight: Arc<AtomicUsize>,
}

impl Runtime {
    fn new(session: Session, connector: Arc<dyn Connector>, options: RunOptions) -> Runtime {
        let (events, inbox) = mpsc::unbounded_channel();
        let (sessions, new_sessions) = mpsc::unbounded_channel();
        Runtime {
            session,
            connector,
            options,
            events,
            inbox,
            sessions,
            new_sessions,
            resolved: HashMap::new(),
            in_flight: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Quitting while an action runs: wait, bounded and on screen, for it and its records.
    async fn finish_in_flight(&self, state: &mut State, guard: &mut TerminalGuard) {
        let deadline = tokio::time::Instant::now() + FINISH_IN_FLIGHT;
        loop {
            let running = self.in_flight.load(Ordering::SeqCst);
            if running == 0 {
                return;
            }
            if tokio::time::Instant::now() >= deadline {
                tracing::warn!(
                    "quit with {running} action(s) still running; the audit log has their intent"
                );
                return;
            }
            state.status = Some(super::state::StatusLine {
                text: format!(
                    "finishing {running} action(s) in flight and their audit records (up to {} s)…",
                    FINISH_IN_FLIGHT.as_secs()
                ),
                error: false,
            });
            let _ = guard.terminal.draw(|f| draw(state, f));
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn run(&mut self, state: &mut State, guard: &mut TerminalGuard) -> Result<()> {
        let io = |e: std::io::Error| Error::Usage(format!("terminal: {e}"));
        let mut keys = EventStream::new();
        let mut cache_changes = self.session.cache.subscribe();
        let mut worker = self.session.worker.status.clone();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut sigterm = signal(SignalKind::terminate()).map_err(io)?;
        let mut sighup = signal(SignalKind::hangup()).map_err(io)?;
        let mut sigint = signal(SignalKind::interrupt()).map_err(io)?;
        let mut settle: Option<tokio::time::Instant> = Some(tokio::time::Instant::now());
        let size = guard.terminal.size().map_err(io)?;
        update(
            state,
            Event::Resize {
                table_height: table_height(size.into(), state),
            },
        );
        update(state, Event::Worker(worker.borrow().clone()));
        // Drawn after an event reached `update`, not on every wake-up: a busy cluster wakes the
        // loop for each cache change, and those only arm the settle timer.
        let mut dirty = true;
        loop {
            if std::mem::take(&mut dirty) {
                guard.terminal.draw(|f| draw(state, f)).map_err(io)?;
            }
            let event = tokio::select! {
                key = keys.next() => match key {
                    Some(Ok(TermEvent::Key(key))) => match key_from_crossterm(&key) {
                        Some(binding) => Event::Key(binding),
                        None => continue,
                    },
                    Some(Ok(TermEvent::Resize(w, h))) => Event::Resize {
                        table_height: table_height(ratatui::layout::Rect::new(0, 0, w, h), state),
                    },
                    Some(Ok(_)) => continue,
                    Some(Err(_)) | None => break,
                },
                Ok(()) = cache_changes.changed() => {
                    settle.get_or_insert_with(|| tokio::time::Instant::now() + SETTLE);
                    continue;
                }
                () = sleep_until(settle), if settle.is_some() => {
                    settle = None;
                    if state.bottom == super::state::BottomPane::Report || state.report.is_none() {
                        let report = (self.session.report)(&self.session.cache);
                        update(state, Event::Report(report));
                    }
                    Event::Snapshot(self.snapshot(state))
                }
                Ok(()) = worker.changed() => Event::Worker(worker.borrow_and_update().clone()),
                _ = tick.tick() => {
                    // Rules that mature with time show up without a pod event.
                    self.session.cache.promote(Utc::now());
                    Event::Tick {
                        now: Utc::now(),
                        watch: watch_line(&self.session.cache.health(), Instant::now()),
                    }
                }
                Some(event) = self.inbox.recv() => self.observe(event),
                Some(result) = self.new_sessions.recv() => match result {
                    Ok(session) => {
                        let name = session.context.clone();
                        // Dropping the old session stops its watches and worker.
                        self.session = session;
                        self.resolved.clear();
                        cache_changes = self.session.cache.subscribe();
                        worker = self.session.worker.status.clone();
                        settle = Some(tokio::time::Instant::now());
                        Event::Switched(Ok(name))
                    }
                    Err(e) => Event::Switched(Err(e)),
                },
                _ = sigterm.recv() => break,
                _ = sighup.recv() => break,
                _ = sigint.recv() => break,
            };
            dirty = true;
            for effect in update(state, event) {
                match effect {
                    Effect::Quit => return Ok(()),
                    Effect::Refresh => settle = Some(tokio::time::Instant::now()),
                    other => self.carry_out(other, state),
                }
            }
            if state.quit {
                return Ok(());
            }
        }
        Ok(())
    }

    fn snapshot(&self, state: &State) -> Snapshot {
        let now = Utc::now();
        let cache = &self.session.cache;
        Snapshot {
            findings: cache.findings(&state.chain, now),
            total_pods: cache.len(),
            watch: watch_line(&cache.health(), Instant::now()),
            at: now,
        }
    }

    /// Results that the network side must remember before the UI sees them.
    fn observe(&mut self, event: Event) -> Event {
        if let Event::Resolved {
            pod,
            result: Ok(checked),
        } = &event
            && let Resolution::Scalable(workload) = &checked.resolution
        {
            self.resolved.insert(pod.uid.clone(), workload.clone());
        }
        event
    }

    fn carry_out(&self, effect: Effect, state: &State) {
        let tx = self.events.clone();
        let client = self.session.client.clone();
        match effect {
            Effect::Quit | Effect::Refresh => {}
            Effect::Run(actions) => {
                let executor = self.session.executor.clone();
                let resolved = self.resolved.clone();
                let in_flight = InFlight::start(&self.in_flight);
                tokio::spawn(async move {
                    let _in_flight = in_flight;
                    for action in actions {
                        let outcome = executor.run(&action, Origin::Manual).await;
                        if outcome.succeeded() {
                            tracing::info!(target: ACTION_TARGET, "{}", outcome.line(&action));
                        } else {
                            tracing::warn!(target: ACTION_TARGET, "{}", outcome.line(&action));
                        }
                        let workload = action.pod().and_then(|p| resolved.get(&p.uid).cloned());
                        let _ = tx.send(Event::Outcome {
                            action,
                            outcome,
                            workload,
                        });
                    }
                });
            }
            Effect::FetchDetails(pod) => {
                let executor = self.session.executor.clone();
                tokio::spawn(async move {
                    let result = fetch_details(&client, &executor, &pod).await;
                    let _ = tx.send(Event::Details {
                        uid: pod.uid,
                        result,
                    });
                });
            }
            Effect::ResolveWorkload(pod) => {
                let executor = self.session.executor.clone();
                tokio::spawn(async move {
                    let result = executor.inspect(&pod, true).await;
                    let _ = tx.send(Event::Resolved { pod, result });
                });
            }
            Effect::CheckOptOuts(pods) => {
                let executor = self.session.executor.clone();
                tokio::spawn(async move {
                    let mut opt_outs = Vec::new();
                    for pod in &pods {
                        match executor.inspect(pod, false).await {
                            Ok(checked) => opt_outs.extend(checked.opt_out),
                            Err(e) => {
                                let _ = tx.send(Event::OptOuts(Err(e)));
                                return;
                            }
                        }
                    }
                    let _ = tx.send(Event::OptOuts(Ok(opt_outs)));
                });
            }
            Effect::Worker(command) => {
                if let Err(e) = self.session.worker.commands.try_send(command) {
                    tracing::warn!(target: ACTION_TARGET, "the worker did not take the command: {e}");
                }
            }
            Effect::ExportReport => {
                let report = state
                    .report
                    .clone()
                    .unwrap_or_else(|| (self.session.report)(&self.session.cache));
                let dir = self.options.export_dir.clone();
                tokio::spawn(async move {
                    let result = super::export::write(&dir, &report).await;
                    if let Ok(path) = &result {
                        tracing::info!(target: ACTION_TARGET, "restart report exported to {path}");
                    }
                    let _ = tx.send(Event::Exported(result));
                });
            }
            Effect::ListContexts => {
                let _ = tx.send(Event::Contexts(self.connector.contexts()));
            }
            Effect::SwitchContext(name) => {
                let sessions = self.sessions.clone();
                let connecting = self.connector.connect(name);
                tokio::spawn(async move {
                    let _ = sessions.send(connecting.await);
                });
            }
        }
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

pub fn watch_line(health: &Health, now: Instant) -> WatchLine {
    let stale = health.stale_for(now);
    if let Some(error) = health.last_error() {
        return WatchLine::Reconnecting {
            secs: stale.unwrap_or_default().as_secs(),
            error: error.to_string(),
        };
    }
    if health.relisting() {
        return WatchLine::Relisting {
            stale_secs: stale.map(|s| s.as_secs()),
        };
    }
    if let Some(stale) = stale {
        // Silent past the bound; the watch loop is about to drop and replace it.
        return WatchLine::Reconnecting {
            secs: stale.as_secs(),
            error: "nothing heard from the API server".to_string(),
        };
    }
    if health.synced() {
        WatchLine::Synced
    } else {
        WatchLine::Listing
    }
}

async fn fetch_details(
    client: &kube::Client,
    executor: &Executor,
    pod: &PodRef,
) -> std::result::Result<PodDetails, String> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), &pod.namespace);
    let full = pods
        .get(&pod.name)
        .await
        .map_err(|e| format!("cannot read {pod}: {e}"))?;
    let mut chain: Vec<String> = full
        .metadata
        .owner_references
        .iter()
        .flatten()
        .map(|o| {
            format!(
                "{} {}{}",
                o.kind,
                o.name,
                if o.controller == Some(true) {
                    " (controller)"
                } else {
                    ""
                }
            )
        })
        .collect();
    match executor.inspect(pod, false).await {
        Ok(checked) => {
            if let Some(opt_out) = checked.opt_out {
                chain.push(format!("opted out: {opt_out}"));
            }
            match checked.resolution {
                Resolution::Scalable(w) => chain.push(format!("scale to zero would change {w}")),
                Resolution::Unscalable(why) => chain.push(format!("cannot scale: {why}")),
            }
        }
        Err(e) => chain.push(format!("owner lookup failed: {e}")),
    }
    let events: Api<KubeEvent> = Api::namespaced(client.clone(), &pod.namespace);
    let params = ListParams::default().fields(&format!("involvedObject.name={}", pod.name));
    let events = events
        .list(&params)
        .await
        .map(|list| {
            list.items
                .into_iter()
                .filter(|e| {
                    e.involved_object
                        .uid
                        .as_deref()
                        .is_none_or(|u| u == pod.uid)
                })
                .collect()
        })
        .map_err(|e| e.to_string());
    Ok(PodDetails::from_pod(&full, chain, events))
}
