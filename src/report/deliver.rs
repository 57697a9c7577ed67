//! Delivery to the sinks: retries with backoff, and the spool for what still fails.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::build::build;
use super::files::write_atomically;
use super::spool::{Spool, sink_id};
use super::state::RestartState;
use super::{RestartReport, payload, render};
use crate::cluster::Cache;
use crate::config::{FileFormat, ReportConfig, Secret, Sink, mask_url, scrub};
use crate::pod::PodRecord;

#[derive(Debug, Clone)]
pub struct DeliveryPolicy {
    /// Tries in all, per sink and report.
    pub attempts: u32,
    pub first_wait: Duration,
    pub max_wait: Duration,
    /// Per HTTP request.
    pub timeout: Duration,
}

impl Default for DeliveryPolicy {
    fn default() -> Self {
        DeliveryPolicy {
            attempts: 4,
            first_wait: Duration::from_secs(2),
            max_wait: Duration::from_secs(60),
            timeout: Duration::from_secs(15),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryResult {
    Sent,
    /// A spooled report that went out this time.
    Resent,
    /// Not delivered; waiting in the spool.
    Spooled(String),
    /// Not delivered and could not be spooled either.
    Failed(String),
}

impl DeliveryResult {
    pub fn label(&self) -> &'static str {
        match self {
            DeliveryResult::Sent => "sent",
            DeliveryResult::Resent => "resent",
            DeliveryResult::Spooled(_) => "spooled",
            DeliveryResult::Failed(_) => "failed",
        }
    }

    pub fn delivered(&self) -> bool {
        matches!(self, DeliveryResult::Sent | DeliveryResult::Resent)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub sink: String,
    pub result: DeliveryResult,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliverySummary {
    pub at: DateTime<Utc>,
    pub deliveries: Vec<Delivery>,
}

impl DeliverySummary {
    /// All fresh deliveries went out (resends of old reports do not count against it).
    pub fn all_sent(&self) -> bool {
        self.deliveries.iter().all(|d| d.result.delivered())
    }

    /// "sent to 2 sinks at 09:00" or "spooled: slack-1a2b3c4d answered 503".
    pub fn describe(&self) -> String {
        let at = self.at.format("%H:%M:%S");
        let sent = self
            .deliveries
            .iter()
            .filter(|d| d.result == DeliveryResult::Sent)
            .count();
        let failed: Vec<String> = self
            .deliveries
            .iter()
            .filter_map(|d| match &d.result {
                DeliveryResult::Spooled(why) => Some(format!("spooled: {} {why}", d.sink)),
                DeliveryResult::Failed(why) => Some(format!("LOST: {} {why}", d.sink)),
                _ => None,
            })
            .collect();
        match (self.deliveries.is_empty(), failed.is_empty()) {
            (true, _) => "no report sinks are configured (report.sinks)".into(),
            (false, true) => format!("sent to {sent} sinks at {at}"),
            (false, false) => format!("{} (sent to {sent} at {at})", failed.join("; ")),
        }
    }
}

/// Why one try failed, and whether trying again soon can help.
enum Failure {
    Retry(String),
    Final(String),
}

impl Failure {
    fn message(self) -> String {
        match self {
            Failure::Retry(m) | Failure::Final(m) => m,
        }
    }

    /// Messages quote the server's answer, which may echo the URL or the token back.
    fn scrub(self, sink: &Sink) -> Failure {
        let secrets = sink.secrets();
        match self {
            Failure::Retry(m) => Failure::Retry(scrub(&m, &secrets)),
            Failure::Final(m) => Failure::Final(scrub(&m, &secrets)),
        }
    }
}

pub struct Reporter {
    config: ReportConfig,
    http: reqwest::Client,
    policy: DeliveryPolicy,
    spool: Spool,
}

impl Reporter {
    pub fn new(config: &ReportConfig, policy: DeliveryPolicy) -> crate::Result<Reporter> {
        let http = reqwest::Client::builder()
            .timeout(policy.timeout)
            .user_agent(concat!("ops-pod-cleaner/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| crate::Error::Usage(format!("cannot build the HTTP client: {e}")))?;
        Ok(Reporter {
            spool: Spool::new(&config.spool_dir),
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
        let min = self.config.min_restarts.max(1);
        cache.fold(Vec::new(), |mut pods, pod| {
            if pod.total_restarts() >= min {
                pods.push(pod.clone());
            }
            pods
        })
    }

    /// The report as it stands, compared with the last one sent.
    pub fn build(&self, pods: &[PodRecord], cluster: &str, now: DateTime<Utc>) -> RestartReport {
        let previous = RestartState::load(&self.config.state_file).unwrap_or_else(|e| {
            tracing::warn!("{e}; counting restarts since the previous report from zero");
            RestartState::default()
        });
        build(pods, &self.config, &previous, cluster, now)
    }

    /// Build this report, then send it as [`Reporter::send_report`] does.
    pub async fn send(
        &self,
        pods: &[PodRecord],
        cluster: &str,
        now: DateTime<Utc>,
    ) -> DeliverySummary {
        let report = self.build(pods, cluster, now);
        self.send_report(&report).await
    }

    /// Resend what is spooled, then deliver and remember this report.
    pub async fn send_report(&self, report: &RestartReport) -> DeliverySummary {
        let now = report.generated;
        let resent = self.resend_spooled().await;
        let mut deliveries = self.deliver(report).await;
        // Spooled reports count as sent for "since previous": they will arrive.
        if let Err(e) = RestartState::of(report).save(&self.config.state_file) {
            tracing::warn!("cannot save the report state: {e}");
        }
        deliveries.extend(resent.into_iter().filter(|d| !d.result.delivered()));
        DeliverySummary {
            at: now,
            deliveries,
        }
    }

    /// Deliver to every sink; what fails after the retries goes to the spool.
    pub async fn deliver(&self, report: &RestartReport) -> Vec<Delivery> {
        let mut deliveries = Vec::new();
        for sink in &self.config.sinks {
            let id = sink_id(sink);
            let result = match self.deliver_to(sink, report).await {
                Ok(()) => DeliveryResult::Sent,
                Err(why) => self.spool_for(&id, report, why),
            };
            log_delivery(&id, &result);
            deliveries.push(Delivery { sink: id, result });
        }
        deliveries
    }

    fn spool_for(&self, id: &str, report: &RestartReport, why: String) -> DeliveryResult {
        match self.spool.put(id, report) {
            Ok(_) => DeliveryResult::Spooled(why),
            Err(e) => DeliveryResult::Failed(format!("{why}; and spooling failed: {e}")),
        }
    }

    /// Try every spooled report again; delete each only once its sink took it.
    pub async fn resend_spooled(&self) -> Vec<Delivery> {
        let mut deliveries = Vec::new();
        for (path, spooled) in self.spool.pending() {
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
                    self.spool.remove(&path);
                    DeliveryResult::Resent
                }
                Err(why) => DeliveryResult::Spooled(why),
            };
            log_delivery(&spooled.sink, &result);
            deliveries.push(Delivery {
                sink: spooled.sink,
                result,
            });
        }
        deliveries
    }

    async fn deliver_to(&self, sink: &Sink, report: &RestartReport) -> Result<(), String> {
        let mut wait = self.policy.first_wait;
        for attempt in 1..=self.policy.attempts.max(1) {
            match self.attempt(sink, report).await.map_err(|f| f.scrub(sink)) {
                Ok(()) => return Ok(()),
                Err(Failure::Retry(why)) if attempt < self.policy.attempts => {
                    tracing::info!("{} {why}; retrying in {wait:?}", sink_id(sink));
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(self.policy.max_wait);
                }
                Err(failure) => return Err(failure.message()),
            }
        }
        Err("no attempt was made".into())
    }

    async fn attempt(&self, sink: &Sink, report: &RestartReport) -> Result<(), Failure> {
        match sink {
            Sink::Feishu { url, secret } => {
                let secret = secret.as_ref().map(Secret::expose);
                let body = payload::feishu(report, secret, Utc::now().timestamp());
                let answer = self.post(url, &body).await?;
                feishu_accepted(&answer)
            }
            Sink::Slack { url } => self.post(url, &payload::slack(report)).await.map(drop),
            Sink::Webhook { url } => self.post(url, &payload::webhook(report)).await.map(drop),
            Sink::File { path, format } => write_file(path, *format, report),
        }
    }

    async fn post(&self, url: &Secret, body: &Value) -> Result<String, Failure> {
        let response = self
            .http
            .post(url.expose())
            .json(body)
            .send()
            .await
            .map_err(|e| {
                let at = mask_url(url.expose());
                Failure::Retry(format!("could not be reached at {at}: {}", why_unsent(e)))
            })?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if status.is_success() {
            return Ok(text);
        }
        let why = format!(
            "answered {}: {}",
            status.as_u16(),
            text.chars().take(200).collect::<String>()
        );
        if status.is_server_error() || status.as_u16() == 429 || status.as_u16() == 408 {
            Err(Failure::Retry(why))
        } else {
            Err(Failure::Final(why))
        }
    }
}

/// The error and its causes ("error sending request: ... Connection refused"), without the
/// URL, which carries the token; the caller scrubs the rest.
fn why_unsent(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(&error);
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}

/// Feishu answers 200 even when it refuses a message; the body's `code` says so.
fn feishu_accepted(answer: &str) -> Result<(), Failure> {
    let parsed: Value = serde_json::from_str(answer).unwrap_or(Value::Null);
    let code = parsed
        .get("code")
        .or_else(|| parsed.get("StatusCode"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if code == 0 {
        return Ok(());
    }
    let msg = parsed.get("msg").and_then(Value::as_str).unwrap_or("");
    Err(Failure::Final(format!(
        "refused the message (code {code}: {msg}); check the bot's secret and keyword settings"
    )))
}

fn write_file(
    path: &std::path::Path,
    format: FileFormat,
    report: &RestartReport,
) -> Result<(), Failure> {
    let path = dated_path(path, report.generated);
    let text = match format {
        FileFormat::Markdown => render::markdown(report),
        FileFormat::Json => render::json(report),
        FileFormat::Csv => render::csv(report),
    };
    write_atomically(&path, text.as_bytes()).map_err(|e| Failure::Retry(e.to_string()))
}

/// `reports/restarts-%Y-%m-%d.md` → `reports/restarts-2026-11-20.md`; a path with no valid
/// strftime fields stays as it is.
pub fn dated_path(path: &std::path::Path, at: DateTime<Utc>) -> std::path::PathBuf {
    use chrono::format::{Item, StrftimeItems};
    let text = path.to_string_lossy();
    if !text.contains('%') || StrftimeItems::new(&text).any(|i| matches!(i, Item::Error)) {
        return path.to_path_buf();
    }
    std::path::PathBuf::from(at.format(&text).to_string())
}

fn log_delivery(sink: &str, result: &DeliveryResult) {
    match result {
        DeliveryResult::Sent | DeliveryResult::Resent => {
            tracing::info!(sink, "restart report {}", result.label())
        }
        DeliveryResult::Spooled(why) => {
            tracing::warn!(
                sink,
                "restart report not delivered ({why}); spooled, will resend"
            )
        }
        DeliveryResult::Failed(why) => tracing::error!(sink, "restart report LOST: {why}"),
    }
}
