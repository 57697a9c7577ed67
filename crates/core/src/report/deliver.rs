//! Delivery to the sinks: retries with backoff while a failure is transient, the spool for
//! what still fails, the dead letters for what a sink refuses for good.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::RestartReport;
use super::build::build;
use super::outcome::{Delivery, DeliveryResult, DeliverySummary};
use super::send::{self, Failure};
use super::spool::{Spool, sink_id};
use super::state::RestartState;
use crate::clock::Clock;
use crate::cluster::Cache;
use crate::cluster::ClusterName;
use crate::config::{ReportConfig, Sink};
use crate::pod::PodRecord;

#[derive(Debug, Clone)]
pub struct DeliveryPolicy {
    /// Tries in all, per sink and report.
    pub attempts: u32,
    pub first_wait: Duration,
    pub max_wait: Duration,
    /// Per HTTP request.
    pub timeout: Duration,
    /// What spooled and dead-lettered reports are stamped with and retries wait on.
    pub clock: Clock,
}

impl Default for DeliveryPolicy {
    fn default() -> Self {
        DeliveryPolicy {
            attempts: 4,
            first_wait: Duration::from_secs(2),
            max_wait: Duration::from_secs(60),
            timeout: Duration::from_secs(15),
            clock: Clock::real(),
        }
    }
}

pub struct Reporter {
    config: ReportConfig,
    http: reqwest::Client,
    policy: DeliveryPolicy,
    spool: Spool,
    /// Held by the resend round under way: headless resends at start in the background
    /// while the worker may send a report, and each would send the same files.
    resending: tokio::sync::Mutex<()>,
    /// Held while the "since previous" state is read, updated and written.
    state_lock: std::sync::Mutex<()>,
}

impl Reporter {
    pub fn new(config: &ReportConfig, policy: DeliveryPolicy) -> crate::Result<Reporter> {
        let http = reqwest::Client::builder()
            .timeout(policy.timeout)
            .user_agent(concat!("ops-pod-cleaner/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(crate::Error::HttpClient)?;
        Ok(Reporter {
            spool: Spool::new(config),
            resending: tokio::sync::Mutex::new(()),
            state_lock: std::sync::Mutex::new(()),
            config: config.clone(),
            http,
            policy,
        })
    }

    pub fn config(&self) -> &ReportConfig {
        &self.config
    }

    pub fn spool(&self) -> &Spool {
        &self.spool
    }

    /// The pods that may appear in the report, copied out of the cache.
    pub fn candidates(&self, cache: &Cache) -> Vec<PodRecord> {
        candidates(cache, &self.config)
    }

    /// The pods of `pods` that may appear in the report.
    pub fn keep_candidates(&self, mut pods: Vec<PodRecord>) -> Vec<PodRecord> {
        pods.retain(|pod| may_appear(pod, &self.config));
        pods
    }

    /// The report as it stands, compared with the last one sent.
    pub fn build(
        &self,
        pods: &[PodRecord],
        cluster: &ClusterName,
        now: DateTime<Utc>,
    ) -> RestartReport {
        build(pods, &self.config, &self.previous(), cluster, now)
    }

    /// One report over several clusters `(name, pods)`, grouped by cluster in their order,
    /// each compared with what the previous report said of it. One cluster makes the report
    /// [`Reporter::build`] makes; none, an empty report.
    pub fn build_combined(
        &self,
        clusters: &[(ClusterName, Vec<PodRecord>)],
        now: DateTime<Utc>,
    ) -> RestartReport {
        let previous = self.previous();
        let reports = clusters
            .iter()
            .map(|(cluster, pods)| build(pods, &self.config, &previous, cluster, now))
            .collect();
        RestartReport::combine(reports)
            .unwrap_or_else(|| build(&[], &self.config, &previous, &ClusterName::default(), now))
    }

    /// Record what `report` said, keeping what earlier reports said of other clusters. Under a
    /// lock: the workers of a screen over several clusters share this reporter.
    fn remember(&self, report: &RestartReport) {
        let _one_at_a_time = self.state_lock.lock().unwrap_or_else(|e| e.into_inner());
        let state = self.previous().updated(RestartState::of(report));
        if let Err(e) = state.save(&self.config.state_file) {
            tracing::warn!("cannot save the report state: {e}");
        }
    }

    fn previous(&self) -> RestartState {
        RestartState::load(&self.config.state_file).unwrap_or_else(|e| {
            tracing::warn!("{e}; counting restarts since the previous report from zero");
            RestartState::default()
        })
    }

    /// Build this report, then send it as [`Reporter::send_report`] does.
    pub async fn send(
        &self,
        pods: &[PodRecord],
        cluster: &ClusterName,
        now: DateTime<Utc>,
    ) -> DeliverySummary {
        let report = self.build(pods, cluster, now);
        self.send_report(&report).await
    }

    /// Resend what is spooled, then deliver and remember this report.
    pub async fn send_report(&self, report: &RestartReport) -> DeliverySummary {
        // Older reports go first, so a chat shows them in order.
        let resent = self.resend_spooled().await;
        let mut deliveries = self.deliver(report).await;
        // Spooled reports count as sent for "since previous": they will arrive.
        self.remember(report);
        deliveries.extend(resent);
        DeliverySummary {
            at: report.generated,
            deliveries,
        }
    }

    /// Deliver to every sink; what fails for now goes to the spool, what a sink refuses for
    /// good to the dead letters.
    pub async fn deliver(&self, report: &RestartReport) -> Vec<Delivery> {
        let mut deliveries = Vec::new();
        for sink in &self.config.sinks {
            let id = sink_id(sink);
            let result = match self.deliver_to(sink, report).await {
                Ok(()) => DeliveryResult::Sent,
                Err(Failure::Transient(why)) => self.spool_for(&id, report, why),
                Err(Failure::Permanent(why)) => match self.bury(&id, report, &why, None) {
                    Ok(result) => result,
                    Err(e) => DeliveryResult::Failed {
                        why: format!("{why}; and the dead letter could not be written: {e}"),
                    },
                },
            };
            result.log(&id);
            deliveries.push(Delivery { sink: id, result });
        }
        // Spooling may have put the spool over its count.
        deliveries.extend(self.trim(self.policy.clock.now()));
        deliveries
    }

    /// Drop what is over the spool's caps, each logged once and returned to be counted.
    pub(crate) fn trim(&self, now: DateTime<Utc>) -> Vec<Delivery> {
        let dropped = self.spool.trim(now).into_iter().map(|d| Delivery {
            sink: d.sink,
            result: DeliveryResult::Dropped {
                age: d.age,
                cap: d.cap,
            },
        });
        let dropped: Vec<Delivery> = dropped.collect();
        dropped.iter().for_each(|d| d.result.log(&d.sink));
        dropped
    }

    fn spool_for(&self, id: &str, report: &RestartReport, why: String) -> DeliveryResult {
        match self.spool.put(id, report, self.policy.clock.now()) {
            Ok(_) => DeliveryResult::Spooled { why },
            Err(e) => DeliveryResult::Failed {
                why: format!("{why}; and spooling failed: {e}"),
            },
        }
    }

    fn bury(
        &self,
        id: &str,
        report: &RestartReport,
        why: &str,
        spooled: Option<&Path>,
    ) -> crate::Result<DeliveryResult> {
        let path = self
            .spool
            .dead_letter(id, report, why, self.policy.clock.now())?;
        if let Some(spooled) = spooled {
            // A file that cannot be removed is logged; at worst the sink refuses it again.
            self.spool.remove(spooled);
        }
        Ok(DeliveryResult::DeadLettered {
            why: why.to_string(),
            path,
        })
    }

    /// Try every spooled report again, oldest first; delete each once its sink took it, or
    /// move it to the dead letters once its sink refused it for good. A sink that fails for
    /// now keeps the rest of its reports for the next round: trying each of them through the
    /// whole retry policy would hold the caller for minutes and tell nothing new. One round
    /// at a time: a call while another runs returns at once with nothing.
    pub async fn resend_spooled(&self) -> Vec<Delivery> {
        // The round under way covers the spool; waiting for it would only hold the caller.
        let Ok(_round) = self.resending.try_lock() else {
            tracing::debug!("a resend of the spooled reports is already under way");
            return Vec::new();
        };
        // Too old to matter, or too many: dropped before anything is sent.
        let mut deliveries = self.trim(self.policy.clock.now());
        let mut down: HashSet<String> = HashSet::new();
        for (path, spooled) in self.spool.pending() {
            if down.contains(&spooled.sink) {
                continue;
            }
            let Some(sink) = self
                .config
                .sinks
                .iter()
                .find(|s| sink_id(s) == spooled.sink)
            else {
                tracing::warn!(
                    "{} is for sink {}, which is no longer configured; left in place",
                    path.display(),
                    spooled.sink
                );
                continue;
            };
            let result = match self.deliver_to(sink, &spooled.report).await {
                Ok(()) => {
                    // Logged if it cannot be removed; then it is sent once more next time.
                    self.spool.remove(&path);
                    DeliveryResult::Resent
                }
                Err(Failure::Transient(why)) => {
                    down.insert(spooled.sink.clone());
                    DeliveryResult::Spooled { why }
                }
                // Left in the spool if the dead letter cannot be written: nothing is lost.
                Err(Failure::Permanent(why)) => {
                    match self.bury(&spooled.sink, &spooled.report, &why, Some(&path)) {
                        Ok(result) => result,
                        Err(e) => DeliveryResult::Spooled {
                            why: format!("{why}; and the dead letter could not be written: {e}"),
                        },
                    }
                }
            };
            result.log(&spooled.sink);
            deliveries.push(Delivery {
                sink: spooled.sink,
                result,
            });
        }
        deliveries
    }

    async fn deliver_to(&self, sink: &Sink, report: &RestartReport) -> Result<(), Failure> {
        let mut wait = self.policy.first_wait;
        let attempts = self.policy.attempts.max(1);
        let mut attempt = 1;
        loop {
            let now = self.policy.clock.now();
            let Err(failure) = send::attempt(&self.http, sink, report, now).await else {
                return Ok(());
            };
            match failure.scrub(sink) {
                Failure::Transient(why) if attempt < attempts => {
                    tracing::info!("{} {why}; retrying in {wait:?}", sink_id(sink));
                    self.policy.clock.sleep(wait).await;
                    wait = (wait * 2).min(self.policy.max_wait);
                    attempt += 1;
                }
                failure => return Err(failure),
            }
        }
    }
}

/// The pods of `cache` that may appear in a report made with `config`: restarted often enough.
pub(crate) fn candidates(cache: &Cache, config: &ReportConfig) -> Vec<PodRecord> {
    cache.fold(Vec::new(), |mut pods, pod| {
        if may_appear(pod, config) {
            pods.push(pod.clone());
        }
        pods
    })
}

fn may_appear(pod: &PodRecord, config: &ReportConfig) -> bool {
    pod.total_restarts() >= config.min_restarts.max(1)
}
