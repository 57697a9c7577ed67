//! The restart report: schedule, filters and where it goes.

use std::path::PathBuf;
use std::time::Duration;

use super::Result;
use super::paths;
use super::read::Field;
use super::schedule::CronSchedule;
use super::secret::Secret;
use super::sources::{self, Environment};
use crate::rules::{NamespaceFilter, RuleKind, RuleSpec};
use strum::VariantArray;

#[derive(Debug, Clone, PartialEq)]
pub struct ReportConfig {
    /// Whether the scheduled report is sent (the TUI pane shows it regardless).
    pub enabled: bool,
    pub schedule: CronSchedule,
    pub min_restarts: u32,
    pub reasons: Vec<String>,
    pub namespaces: NamespaceFilter,
    pub title: String,
    pub sinks: Vec<Sink>,
    /// Sinks left out because a source marked optional is absent, each in words.
    pub left_out: Vec<String>,
    /// Undelivered reports wait here until a sink takes them; refused ones go to `dead/` in it.
    pub spool_dir: PathBuf,
    /// Spooled reports (and dead letters) older than this are dropped unsent; zero: no limit.
    pub spool_max_age: Duration,
    /// At most this many spooled reports (and as many dead letters), the oldest dropped
    /// first; zero: no limit. With an outage and a tight schedule the disk is not the limit.
    pub spool_max_files: u32,
    /// Restart counts at the previous report, for "restarts since previous report".
    pub state_file: PathBuf,
}

/// Where a report is delivered. URLs and signing secrets are [`Secret`]s: the sink can be
/// debug-printed and logged without leaking the token.
#[derive(Debug, Clone, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Sink {
    /// Feishu/Lark bot webhook, with the optional signing secret.
    Feishu {
        url: Secret,
        secret: Option<Secret>,
    },
    /// Slack incoming webhook.
    Slack {
        url: Secret,
    },
    /// A generic webhook receiving the report as JSON.
    Webhook {
        url: Secret,
    },
    File {
        path: PathBuf,
        format: FileFormat,
    },
}

impl Sink {
    pub(crate) fn kind(&self) -> &'static str {
        self.into()
    }

    /// The secrets this sink holds, to scrub them from anything quoted from its server.
    pub fn secrets(&self) -> Vec<&Secret> {
        match self {
            Sink::Feishu { url, secret } => std::iter::once(url).chain(secret).collect(),
            Sink::Slack { url } | Sink::Webhook { url } => vec![url],
            Sink::File { .. } => Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum FileFormat {
    Markdown,
    Json,
    Csv,
}

impl FileFormat {
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Guessed from the extension when `format` is not given; Markdown otherwise.
    fn from_path(path: &std::path::Path) -> FileFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => FileFormat::Json,
            Some("csv") => FileFormat::Csv,
            _ => FileFormat::Markdown,
        }
    }
}

/// Weekly on Monday at 09:00: the week's restarts at the start of the working week.
pub const DEFAULT_SCHEDULE: &str = "0 0 9 * * MON";

impl Default for ReportConfig {
    #[expect(
        clippy::expect_used,
        reason = "DEFAULT_SCHEDULE is a constant that parses (tests/suite/config.rs reads the default), \
                  and cron offers no schedule built without parsing"
    )]
    fn default() -> Self {
        let crash = RuleSpec::default_for(RuleKind::CrashLoop);
        ReportConfig {
            enabled: false,
            schedule: CronSchedule::parse(DEFAULT_SCHEDULE).expect("the default schedule is valid"),
            min_restarts: crash.restarts,
            reasons: crash.reasons,
            namespaces: NamespaceFilter::default(),
            title: "Pods restarting too often".into(),
            sinks: Vec::new(),
            left_out: Vec::new(),
            spool_dir: paths::data_file("spool"),
            // A week: a restart report older than that is stale news, and the next is on its way.
            spool_max_age: Duration::from_secs(7 * 86_400),
            spool_max_files: 100,
            state_file: paths::data_file("report-state.json"),
        }
    }
}

const KEYS: &[&str] = &[
    "enabled",
    "schedule",
    "minRestarts",
    "reasons",
    "namespaces",
    "title",
    "sinks",
    "spoolDir",
    "spoolMaxAge",
    "spoolMaxFiles",
    "stateFile",
];

/// Reads the native `report:` section over the defaults; `env` serves `urlFrom`/`secretFrom`.
pub(crate) fn read(field: &Field, env: &dyn Environment) -> Result<ReportConfig> {
    let m = field.map(KEYS)?;
    let mut r = ReportConfig::default();
    m.set("enabled", &mut r.enabled, Field::bool)?;
    m.set("schedule", &mut r.schedule, Field::cron)?;
    m.set("minRestarts", &mut r.min_restarts, Field::u32)?;
    m.set("reasons", &mut r.reasons, Field::list)?;
    m.set("namespaces", &mut r.namespaces, read_namespaces)?;
    m.set("title", &mut r.title, Field::string)?;
    m.set("spoolDir", &mut r.spool_dir, Field::path)?;
    m.set("spoolMaxAge", &mut r.spool_max_age, max_age)?;
    m.set("spoolMaxFiles", &mut r.spool_max_files, Field::u32)?;
    m.set("stateFile", &mut r.state_file, Field::path)?;
    if let Some(sinks) = m.get("sinks") {
        for sink in sinks.seq()? {
            match read_sink(&sink, env)? {
                Ok(sink) => r.sinks.push(sink),
                Err(absent) => r.left_out.push(absent),
            }
        }
    }
    Ok(r)
}

/// A Go duration, or whole days (`7d`), which Go durations lack and a spool's age is counted in.
fn max_age(field: &Field) -> Result<Duration> {
    let Ok(text) = field.string() else {
        return field.duration();
    };
    let days = text
        .trim()
        .strip_suffix('d')
        .and_then(|n| n.parse::<u64>().ok());
    if let Some(age) = days.and_then(|n| n.checked_mul(86_400)) {
        return Ok(Duration::from_secs(age));
    }
    field.duration().map_err(|_| {
        field.error(format!(
            "expected whole days like 7d, or a duration like 36h or 90m, found {text:?}"
        ))
    })
}

/// `7d` for whole days, else the Go form (`36h`, `90m`); `0s` for no limit.
pub(crate) fn format_max_age(age: Duration) -> String {
    let secs = age.as_secs();
    if secs > 0 && secs.is_multiple_of(86_400) && age.subsec_nanos() == 0 {
        format!("{}d", secs / 86_400)
    } else {
        super::duration::format(age)
    }
}

/// `namespaces: {include: [...], exclude: [...]}`.
pub(crate) fn read_namespaces(field: &Field) -> Result<NamespaceFilter> {
    let m = field.map(&["include", "exclude"])?;
    let mut filter = NamespaceFilter::default();
    m.set("include", &mut filter.include, Field::list)?;
    m.set("exclude", &mut filter.exclude, Field::list)?;
    Ok(filter)
}

const SINK_TYPES: &str = "feishu, slack, webhook, file";

/// A Feishu sink's keys: the others' (a file's `path` and `format` aside) are some of them.
const FEISHU_KEYS: &[&str] = &["type", "url", "urlFrom", "secret", "secretFrom"];

/// One `{type: ..., ...}` entry of `sinks`, or why it is left out: a source it reads marked
/// optional is absent.
fn read_sink(field: &Field, env: &dyn Environment) -> Result<std::result::Result<Sink, String>> {
    let any = field.map(&[FEISHU_KEYS, &["path", "format"]].concat())?;
    let Some(type_field) = any.get("type") else {
        return Err(field.error(format!("missing key \"type\" (one of {SINK_TYPES})")));
    };
    let kind = type_field.string()?;
    let allowed: &'static [&'static str] = match kind.as_str() {
        "feishu" => FEISHU_KEYS,
        "slack" | "webhook" => &["type", "url", "urlFrom"],
        "file" => &["type", "path", "format"],
        _ => return Err(type_field.expected(&format!("a sink type: one of {SINK_TYPES}"))),
    };
    let m = field.map(allowed)?;
    if let Some(absent) = sources::optional_absent(&m, env)? {
        return Ok(Err(format!("{kind} sink left out: {absent}")));
    }
    let url = || {
        sources::url(&m, env)?.ok_or_else(|| {
            field.error(format!(
                "a {kind} sink needs \"url\" or \"urlFrom\" ({{env: NAME}} or {{file: PATH}})"
            ))
        })
    };
    Ok(Ok(match kind.as_str() {
        "feishu" => Sink::Feishu {
            url: url()?,
            secret: sources::value(&m, "secret", env)?.map(|(_, secret)| secret),
        },
        "slack" => Sink::Slack { url: url()? },
        "webhook" => Sink::Webhook { url: url()? },
        _ => {
            let path = m
                .get("path")
                .ok_or_else(|| field.error("a file sink needs \"path\""))?
                .path()?;
            let format = match m.get("format") {
                None => FileFormat::from_path(&path),
                Some(f) => f.one_of(FileFormat::VARIANTS, FileFormat::name, "")?,
            };
            Sink::File { path, format }
        }
    }))
}
