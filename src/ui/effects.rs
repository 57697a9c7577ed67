//! The effects `update` asks for that take I/O, each carried out in a task of its own; what
//! comes of them returns to the loop as events.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use super::details::PodDetails;
use super::event::{Checked, Effect, Event, Routed, Unanswered};
use opc_core::actions::{
    ACTION_LOG, Action, Executor, Inspection, Origin, Outcome, ParkedList, PodRef, Skip, Unread,
};
use opc_core::cluster::{ClusterName, Scope};
use opc_core::report::RestartReport;

/// The open clusters' executors, taken for work that outlives the loop's turn, so a cluster
/// closed meanwhile is named, not missed.
pub(super) struct Executors(pub(super) Vec<(ClusterName, Arc<Executor>)>);

impl Executors {
    fn get(&self, cluster: &ClusterName) -> Result<&Arc<Executor>, Unanswered> {
        self.0
            .iter()
            .find(|(name, _)| name == cluster)
            .map(|(_, executor)| executor)
            .ok_or_else(|| Unanswered::Closed(cluster.clone()))
    }
}

pub(super) struct Effects {
    events: UnboundedSender<Event>,
    /// Confirmed actions still running, a clone held by each batch: quitting waits for them
    /// and their audit records.
    in_flight: Arc<()>,
}

impl Effects {
    pub(super) fn new(events: UnboundedSender<Event>) -> Effects {
        Effects {
            events,
            in_flight: Arc::new(()),
        }
    }

    pub(super) fn in_flight(&self) -> usize {
        Arc::strong_count(&self.in_flight) - 1
    }

    fn spawn(&self, work: impl Future<Output = Event> + Send + 'static) {
        let tx = self.events.clone();
        tokio::spawn(async move {
            let _ = tx.send(work.await);
        });
    }

    /// Carry out an effect that reads or writes the open clusters, in a task of its own.
    pub(super) fn start(&self, effect: Effect, executors: Executors, scopes: &[Scope]) {
        match effect {
            Effect::Run(actions) => self.run(executors, actions),
            Effect::FetchDetails(pod) => self.spawn(async move {
                let result = async {
                    let reads = executors.get(&pod.cluster)?.reads();
                    let reading = reads.details(&pod.item).await?;
                    Ok(PodDetails::from_reading(&reading))
                }
                .await;
                Event::Details {
                    uid: pod.item.uid,
                    result,
                }
            }),
            Effect::FetchLogs {
                pod,
                container,
                previous,
            } => self.spawn(async move {
                let container = container.as_deref();
                let result = async {
                    let reads = executors.get(&pod.cluster)?.reads();
                    let text = reads.logs(&pod.item, container, previous).await?;
                    Ok(PodDetails::from_logs(container, previous, &text))
                }
                .await;
                Event::Details {
                    uid: pod.item.uid.clone(),
                    result,
                }
            }),
            Effect::ResolveWorkload(pod) => self.spawn(async move {
                let result = inspect(&executors, &pod, true).await;
                Event::Resolved { pod, result }
            }),
            Effect::CheckOptOuts(pods) => self.spawn(async move {
                let mut found = Checked::default();
                for pod in &pods {
                    match inspect(&executors, pod, false).await {
                        Ok(checked) => {
                            found.opt_outs.extend(checked.opt_out);
                            let live = checked.live.map(|f| f.rule);
                            found.live.push((pod.item.clone(), live));
                        }
                        Err(e) => return Event::OptOuts(Err(e)),
                    }
                }
                Event::OptOuts(Ok(found))
            }),
            Effect::ListParked => self.list_parked(executors, scopes.to_vec()),
            Effect::CheckUndo(workload) => self.spawn(async move {
                let result = match executors.get(&workload.cluster) {
                    Ok(executor) => executor.reads().check_undo(&workload.item).await,
                    Err(_) => Err(Outcome::Skipped(Skip::ClusterClosed(
                        workload.cluster.clone(),
                    ))),
                };
                Event::UndoChecked { workload, result }
            }),
            _ => {}
        }
    }

    fn run(&self, executors: Executors, actions: Vec<Routed<Action>>) {
        let tx = self.events.clone();
        let in_flight = self.in_flight.clone();
        tokio::spawn(async move {
            let _in_flight = in_flight;
            for action in actions {
                let outcome = match executors.get(&action.cluster) {
                    Ok(executor) => executor.run(&action.item, Origin::Manual).await,
                    Err(_) => Outcome::Skipped(Skip::ClusterClosed(action.cluster.clone())),
                };
                outcome.log(&action.cluster, Origin::Manual, &action.item);
                let _ = tx.send(Event::Outcome { action, outcome });
            }
        });
    }

    /// Every open cluster's parked workloads in `scopes`, oldest first across clusters.
    fn list_parked(&self, executors: Executors, scopes: Vec<Scope>) {
        self.spawn(async move {
            let mut all = ParkedList::default();
            for (cluster, executor) in executors.0 {
                match executor.reads().parked_rows(&scopes).await {
                    Ok(list) => {
                        all.rows.extend(list.rows);
                        all.unread.extend(list.unread.into_iter().map(|mut u| {
                            u.place = format!("{cluster}: {}", u.place);
                            u
                        }));
                    }
                    Err(why) => all.unread.push(Unread {
                        place: cluster.to_string(),
                        why: why.to_string(),
                    }),
                }
            }
            // Those without a time last.
            all.rows
                .sort_by_key(|r| (r.parked_at.is_none(), r.parked_at, r.cluster.clone()));
            Event::Parked(all)
        });
    }

    pub(super) fn export(&self, dir: PathBuf, report: RestartReport) {
        self.spawn(async move {
            let result = super::export::write(&dir, &report).await;
            if let Ok(path) = &result {
                tracing::info!(target: ACTION_LOG, "restart report exported to {}", path.display());
            }
            Event::Exported(result.map_err(Arc::new))
        });
    }
}

/// What `pod`'s cluster reads of it just now; with `workload`, of its workload too.
async fn inspect(
    executors: &Executors,
    pod: &Routed<PodRef>,
    workload: bool,
) -> Result<Inspection, Unanswered> {
    let reads = executors.get(&pod.cluster)?.reads();
    Ok(reads.inspect(&pod.item, workload).await?)
}
