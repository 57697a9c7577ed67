//! The UI task: one loop that sleeps in `select!` until a key, a change, a result, a tick or a
//! signal arrives; feeds it to `update`; carries out the effects; draws.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, EventStream};
use futures::StreamExt;
use opc_core::clock::Clock;
use opc_core::policy::Flags;
#[cfg(unix)]
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{mpsc, watch};

use super::effects::{Effects, Executors};
use super::event::{ClusterLine, Effect, Event, Snapshot, key_from_crossterm};
use super::session::{Connector, Session};
use super::snapshot::{cluster_line, snapshot};
use super::state::{State, Switches};
use super::terminal::TerminalGuard;
use super::update::update;
use super::view::{draw, table_height};
use crate::{Error, Result};
use opc_core::cluster::{ClusterName, Scope};
use opc_core::config::UiConfig;
use opc_core::fleet::FedView;
use opc_core::report::RestartReport;
use opc_core::rules::RuleSpec;
use opc_core::session::{ClusterSession, Feed};
use opc_core::worker::{Standby, WorkerCommand, WorkerStatus};

/// Cache changes arriving within this window reach the screen together: a busy cluster costs
/// one snapshot a second, not one per change (k9s refreshes every 2 s).
const SETTLE: Duration = Duration::from_secs(1);
/// How long quitting waits for confirmed actions still running.
const FINISH_IN_FLIGHT: Duration = Duration::from_secs(10);

/// What does not change with the context.
pub(crate) struct RunOptions {
    pub(crate) scope: String,
    pub(crate) flags: Flags,
    pub(crate) chain: Vec<RuleSpec>,
    pub(crate) keys: UiConfig,
    pub(crate) export_dir: PathBuf,
    /// The namespaces watched: where parked workloads are looked for.
    pub(crate) scopes: Vec<Scope>,
    /// The config names report sinks.
    pub(crate) report_sinks: bool,
    /// Every session's clock too: the screen's ticks and reports read it.
    pub(crate) clock: Clock,
}

pub(crate) async fn run(
    sessions: Vec<Session>,
    connector: Arc<dyn Connector>,
    options: RunOptions,
) -> Result<()> {
    let first = sessions
        .first()
        .map(|s| s.cluster.name.clone())
        .ok_or(opc_core::Usage::NoCluster)?;
    let mut state = State::new(
        &first,
        &options.scope,
        options.chain.clone(),
        options.keys.clone(),
    );
    // One audit log for every cluster: the first executor's view of it is everyone's.
    let audit_problem = (sessions.first()).and_then(|s| s.cluster.executor.audit_problem());
    let mut runtime = Runtime::new(sessions, connector, options);
    state.sync_clusters(runtime.cluster_lines(Instant::now()));
    let mut state = state.with_switches(Switches {
        flags: runtime.options.flags,
        audit_problem,
        report_sinks: runtime.options.report_sinks,
    });
    let mut guard = TerminalGuard::enter().map_err(|source| Error::Terminal {
        what: "cannot set up the terminal",
        source,
    })?;
    let result = runtime.run(&mut state, &mut guard).await;
    runtime.finish_in_flight(&mut state, &mut guard).await;
    drop(guard);
    result
}

/// A connection finished: what it was for, and the session or why not.
enum Opened {
    /// Replaces every open session.
    Switch(Result<Session, Arc<Error>>),
    /// Joins the open sessions.
    Add(Result<Session, Arc<Error>>),
    /// Takes the place of the open session of its cluster.
    Replace(Session),
}

struct Runtime {
    /// The open clusters, in the order they were opened.
    sessions: Vec<Session>,
    connector: Arc<dyn Connector>,
    options: RunOptions,
    events: mpsc::UnboundedSender<Event>,
    inbox: mpsc::UnboundedReceiver<Event>,
    opened: mpsc::UnboundedSender<Opened>,
    new_sessions: mpsc::UnboundedReceiver<Opened>,
    /// Clusters being opened again as a watch: asked once each.
    rewatching: HashSet<ClusterName>,
    effects: Effects,
}

impl Runtime {
    fn new(sessions: Vec<Session>, connector: Arc<dyn Connector>, options: RunOptions) -> Runtime {
        let (events, inbox) = mpsc::unbounded_channel();
        let (opened, new_sessions) = mpsc::unbounded_channel();
        Runtime {
            sessions,
            connector,
            options,
            effects: Effects::new(events.clone()),
            events,
            inbox,
            opened,
            new_sessions,
            rewatching: HashSet::new(),
        }
    }

    fn session(&self, cluster: &ClusterName) -> Option<&Session> {
        self.sessions.iter().find(|s| s.cluster.name == *cluster)
    }

    /// Connect to `name` in the background; `then` says what the session is for.
    fn connect(&self, name: ClusterName, then: fn(Result<Session, Arc<Error>>) -> Opened) {
        let opened = self.opened.clone();
        let connecting = self.connector.connect(name);
        tokio::spawn(async move {
            let _ = opened.send(then(connecting.await.map_err(Arc::new)));
        });
    }

    /// Open again as a watch each cluster read `auto` through a worker whose findings have
    /// outgrown the feed, saying why.
    fn watch_where_outgrown(&mut self) {
        for session in &mut self.sessions {
            let Some(why) = session.cluster.watch_instead() else {
                continue;
            };
            let name = session.cluster.name.clone();
            if !self.rewatching.insert(name.clone()) {
                continue;
            }
            tracing::warn!("{name}: {why}; watching the cluster directly instead");
            let reopening = self.connector.watch_instead(session, why);
            let opened = self.opened.clone();
            tokio::spawn(async move {
                let _ = opened.send(Opened::Replace(reopening.await));
            });
        }
    }

    /// Quitting while an action runs: wait, bounded and on screen, for it and its records.
    async fn finish_in_flight(&self, state: &mut State, guard: &mut TerminalGuard) {
        let deadline = tokio::time::Instant::now() + FINISH_IN_FLIGHT;
        // No worker starts another action; the ones under way finish and are recorded.
        for session in &self.sessions {
            session.tell(WorkerCommand::SetStandby(Some(Standby::Quitting)));
        }
        loop {
            let automatic = self
                .sessions
                .iter()
                .filter(|s| s.worker.status.borrow().acting)
                .count();
            let running = self.effects.in_flight() + automatic;
            if running == 0 {
                return;
            }
            if tokio::time::Instant::now() >= deadline {
                tracing::warn!(
                    "quit with {running} action(s) still running; the audit log has their intent"
                );
                return;
            }
            let text = format!(
                "finishing {running} action(s) in flight and their audit records (up to {} s)…",
                FINISH_IN_FLIGHT.as_secs()
            );
            state.status = Some(super::state::StatusLine { text, error: false });
            let _ = guard.terminal.draw(|f| draw(state, f));
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn run(&mut self, state: &mut State, guard: &mut TerminalGuard) -> Result<()> {
        let io = |source| Error::Terminal {
            what: "terminal",
            source,
        };
        let mut keys = EventStream::new();
        let mut listening = Listening::to(&self.sessions);
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut signals = std::pin::pin!(closing_signals().map_err(io)?);
        // The first events: the terminal's size and each worker's status as it stands.
        let rows = table_height(guard.terminal.size().map_err(io)?.into());
        update(state, Event::Resize { table_height: rows });
        for (cluster, worker) in &listening.workers {
            let (cluster, status) = (cluster.clone(), worker.borrow().clone());
            update(state, Event::Worker { cluster, status });
        }
        // Drawn after an event reached `update`, not on every wake-up: a busy cluster wakes the
        // loop for each cache change, and those only arm the settle timer.
        let mut dirty = true;
        loop {
            if std::mem::take(&mut dirty) {
                tui_logger::move_events();
                guard.terminal.draw(|f| draw(state, f)).map_err(io)?;
            }
            let event = tokio::select! {
                input = keys.next() => match input {
                    Some(Ok(TermEvent::Key(key))) => match key_from_crossterm(&key) {
                        Some(binding) => Event::Key(binding),
                        None => continue,
                    },
                    Some(Ok(TermEvent::Resize(w, h))) => Event::Resize {
                        table_height: table_height(ratatui::layout::Rect::new(0, 0, w, h)),
                    },
                    Some(Ok(_)) => continue,
                    // The terminal is gone: the screen closes.
                    Some(Err(_)) | None => break,
                },
                // Not listened to while a snapshot is due: a busy cluster would wake the
                // screen for every change only to find the timer already set.
                () = changed(&mut listening.caches), if listening.settle.is_none() => {
                    listening.settle = Some(tokio::time::Instant::now() + SETTLE);
                    continue;
                }
                () = changed(&mut listening.feeds), if listening.settle.is_none() => {
                    listening.settle = Some(tokio::time::Instant::now() + SETTLE);
                    continue;
                }
                () = sleep_until(listening.settle), if listening.settle.is_some() => {
                    listening.settle = None;
                    // What changes from here on arms the next snapshot.
                    listening.caches.iter_mut().for_each(watch::Receiver::mark_unchanged);
                    listening.feeds.iter_mut().for_each(watch::Receiver::mark_unchanged);
                    self.watch_where_outgrown();
                    if state.bottom == super::state::BottomPane::Report || state.report.is_none() {
                        update(state, Event::Report(self.report()));
                    }
                    Event::Snapshot(self.snapshot())
                }
                (cluster, status) = worker_changed(&mut listening.workers) => {
                    Event::Worker { cluster, status }
                }
                // Only a redraw: rules that mature with time are promoted by the caches, which
                // then wake the snapshot like any pod event.
                _ = tick.tick() => {
                    Event::Tick {
                        now: self.options.clock.now(),
                        clusters: self.cluster_lines(Instant::now()),
                    }
                }
                Some(event) = self.inbox.recv() => event,
                Some(opened) = self.new_sessions.recv() => {
                    let event = self.open(opened);
                    listening = Listening::to(&self.sessions);
                    event
                }
                () = &mut signals => break,
            };
            dirty = true;
            let mut effects = update(state, event).into_iter();
            if effects.any(|effect| self.carry_out(effect, state, &mut listening)) || state.quit {
                return Ok(());
            }
        }
        Ok(())
    }

    /// A connection finished: swap in or add its session.
    fn open(&mut self, opened: Opened) -> Event {
        match opened {
            Opened::Switch(session) => Event::Switched(session.map(|session| {
                let name = session.cluster.name.clone();
                // Dropping the old sessions stops their watches and workers.
                self.sessions = vec![session];
                name
            })),
            Opened::Add(session) => Event::Added(session.map(|session| {
                let name = session.cluster.name.clone();
                if self.session(&name).is_none() {
                    self.sessions.push(session);
                }
                name
            })),
            Opened::Replace(session) => {
                let name = session.cluster.name.clone();
                self.rewatching.remove(&name);
                // A cluster dropped meanwhile stays dropped.
                if let Some(old) = self.sessions.iter_mut().find(|s| s.cluster.name == name) {
                    *old = session;
                }
                Event::Snapshot(self.snapshot())
            }
        }
    }

    fn snapshot(&self) -> Snapshot {
        let clusters: Vec<&ClusterSession> = self.sessions.iter().map(|s| &s.cluster).collect();
        snapshot(&clusters, self.options.clock.now())
    }

    fn cluster_lines(&self, now: Instant) -> Vec<ClusterLine> {
        self.sessions
            .iter()
            .map(|s| cluster_line(&s.cluster, now))
            .collect()
    }

    /// The restart report of every open cluster as one, grouped by cluster.
    fn report(&self) -> RestartReport {
        let reports = (self.sessions.iter())
            .filter_map(|s| s.report.as_ref().map(|report| report()))
            .collect();
        RestartReport::combine(reports).unwrap_or_else(|| RestartReport {
            generated: self.options.clock.now(),
            ..RestartReport::default()
        })
    }

    /// Carries out what `update` asked for; true when the screen is to close.
    fn carry_out(&mut self, effect: Effect, state: &State, listening: &mut Listening) -> bool {
        match effect {
            Effect::Quit => return true,
            Effect::Refresh => listening.settle = Some(tokio::time::Instant::now()),
            Effect::DropContext(name) => {
                // Dropping the session stops its watches and worker.
                self.sessions.retain(|s| s.cluster.name != name);
                *listening = Listening::to(&self.sessions);
            }
            Effect::Worker(WorkerCommand::SendReport) => {
                for session in &self.sessions {
                    match session.report {
                        Some(_) => session.tell(WorkerCommand::SendReport),
                        None => tracing::warn!(
                            target: opc_core::actions::ACTION_LOG,
                            "{}: read through its worker, which sends its own restart report; \
                             none is sent from here",
                            session.cluster.name
                        ),
                    }
                }
            }
            Effect::Worker(command) => {
                for session in &self.sessions {
                    session.tell(command.clone());
                }
            }
            Effect::WorkerOf(routed) => {
                if let Some(session) = self.session(&routed.cluster) {
                    session.tell(routed.item);
                }
            }
            Effect::ExportReport => {
                let report = state.report.clone().unwrap_or_else(|| self.report());
                self.effects.export(self.options.export_dir.clone(), report);
            }
            Effect::ListContexts => {
                let contexts = self.connector.contexts().map_err(Arc::new);
                let _ = self.events.send(Event::Contexts(contexts));
            }
            Effect::SwitchContext(name) => self.connect(name, Opened::Switch),
            Effect::AddContext(name) => self.connect(name, Opened::Add),
            reads_or_writes => {
                let clusters = self.sessions.iter().map(|s| &s.cluster);
                let executors = clusters.map(|c| (c.name.clone(), c.executor.clone()));
                let (executors, scopes) = (Executors(executors.collect()), &self.options.scopes);
                self.effects.start(reads_or_writes, executors, scopes);
            }
        }
        false
    }
}

type Workers = Vec<(ClusterName, watch::Receiver<WorkerStatus>)>;

/// What the loop listens to besides keys and signals, and when the next snapshot is due.
struct Listening {
    caches: Vec<watch::Receiver<u64>>,
    /// The fed clusters' views, which change as their feeds do.
    feeds: Vec<watch::Receiver<FedView>>,
    workers: Workers,
    settle: Option<tokio::time::Instant>,
}

impl Listening {
    /// Listening to `sessions`, with a first snapshot due now.
    fn to(sessions: &[Session]) -> Listening {
        Listening {
            caches: (sessions.iter())
                .map(|s| s.cluster.cache.subscribe())
                .collect(),
            feeds: (sessions.iter())
                .filter_map(|s| match &s.cluster.feed {
                    Feed::WorkerFed(feed) => Some(feed.subscribe()),
                    Feed::Watched(_) => None,
                })
                .collect(),
            workers: (sessions.iter())
                .map(|s| (s.cluster.name.clone(), s.worker.status.clone()))
                .collect(),
            settle: Some(tokio::time::Instant::now()),
        }
    }
}

/// The signals that close the screen as `q` does, listened to from now on.
#[cfg(unix)]
fn closing_signals() -> std::io::Result<impl Future<Output = ()>> {
    let mut term = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = hangup.recv() => {}
            _ = interrupt.recv() => {}
        }
    })
}

/// Elsewhere (Windows): Ctrl-C.
#[cfg(not(unix))]
fn closing_signals() -> std::io::Result<impl Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// Some cluster's cache or feed changed; never returns while none is open.
async fn changed<T>(caches: &mut [watch::Receiver<T>]) {
    if caches.is_empty() {
        return std::future::pending().await;
    }
    let changes = caches.iter_mut().map(|c| Box::pin(c.changed()));
    if futures::future::select_all(changes).await.0.is_err() {
        // The cache is gone with its session; the loop rebuilds the list then.
        std::future::pending::<()>().await;
    }
}

async fn worker_changed(workers: &mut Workers) -> (ClusterName, WorkerStatus) {
    if workers.is_empty() {
        return std::future::pending().await;
    }
    let changes = workers.iter_mut().map(|(_, w)| Box::pin(w.changed()));
    let (result, at, _) = futures::future::select_all(changes).await;
    match (result, workers.get_mut(at)) {
        (Ok(()), Some((cluster, worker))) => (cluster.clone(), worker.borrow_and_update().clone()),
        _ => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
