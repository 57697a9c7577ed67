//! The seed's file shape, read unchanged (key typos included: they are the seed's).
//!
//! | seed key              | becomes                                                        |
//! |-----------------------|----------------------------------------------------------------|
//! | `delteEvictedPod`     | rule evicted: namespaces → include, enable → auto              |
//! | `delteTerminatingPod` | rule terminating: namespaces, hours → after, enable → auto     |
//! | `errImagePull`        | rule imagePull: namespaces, hours → after, status → reasons, enable → auto |
//! | `tooManyRestart`      | rule crashLoop: namespaces, status → reasons, counts → restarts, hours → after; and the report: enable → enabled, duration → schedule, counts → minRestarts, status → reasons, namespaces, msgtitle → title, apiurl → a Feishu sink |
//!
//! The chain order is the seed's (evicted, terminating, imagePull, crashLoop), which is also the
//! default order; the other rules follow with their defaults. `safety`, `audit` and `ui`
//! sections in the native form may sit beside the seed keys.

use super::Config;
use super::Result;
use super::read::{Field, MapReader, located};
use super::report::{self, Sink};
use super::sources;
use super::tree::Value;
use crate::rules::{NamespaceFilter, RuleKind, RuleSpec};

pub(crate) const KEYS: [&str; 4] = [
    "errImagePull",
    "tooManyRestart",
    "delteEvictedPod",
    "delteTerminatingPod",
];

/// Seed keys plus the native sections that do not overlap them.
const ALLOWED: &[&str] = &[
    "errImagePull",
    "tooManyRestart",
    "delteEvictedPod",
    "delteTerminatingPod",
    "safety",
    "audit",
    "cluster",
    "ui",
];

pub(crate) fn is_seed_key(key: &str) -> bool {
    KEYS.contains(&key)
}

pub(crate) fn read(root: &Field) -> Result<Config> {
    reject_mixed(root)?;
    let m = root.map(ALLOWED)?;
    let mut config = Config::default();
    for (key, kind, allowed) in RULES {
        if let Some(f) = m.get(key) {
            with_rule(&mut config, kind, |spec| read_rule(&f, allowed, spec))?;
        }
    }
    if let Some(f) = m.get("tooManyRestart") {
        read_restarts(&f, &mut config)?;
    }
    super::read_common(&m, &mut config)?;
    Ok(config)
}

/// `rules`/`report` beside seed keys would say the same thing twice; ask for one shape.
fn reject_mixed(root: &Field) -> Result<()> {
    let Value::Map(entries) = &root.node.value else {
        return Ok(());
    };
    match entries
        .iter()
        .find(|(k, _)| k.name == "rules" || k.name == "report")
    {
        Some((key, _)) => Err(located(
            root.origin,
            key.pos,
            &key.name,
            format!(
                "cannot be mixed with the seed keys ({}); use either the seed shape or the native shape",
                KEYS.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

/// `read` on the rule of `kind`. The default config holds every rule, so the lookup cannot
/// miss; add one if it ever does.
fn with_rule<T>(config: &mut Config, kind: RuleKind, read: impl FnOnce(&mut RuleSpec) -> T) -> T {
    match config.rules.iter_mut().find(|r| r.kind == kind) {
        Some(spec) => read(spec),
        None => {
            let mut spec = RuleSpec::default_for(kind);
            let out = read(&mut spec);
            config.rules.push(spec);
            out
        }
    }
}

fn include(field: &Field) -> Result<NamespaceFilter> {
    Ok(NamespaceFilter {
        include: field.list()?,
        exclude: Vec::new(),
    })
}

/// The seed keys that are one rule each, in the seed's order, with the keys each may have.
const RULES: [(&str, RuleKind, &[&str]); 3] = [
    (
        "delteEvictedPod",
        RuleKind::Evicted,
        &["namespaces", "enable"],
    ),
    (
        "delteTerminatingPod",
        RuleKind::Terminating,
        &["namespaces", "hours", "enable"],
    ),
    (
        "errImagePull",
        RuleKind::ImagePull,
        &["namespaces", "hours", "status", "enable"],
    ),
];

/// One rule's seed entry; a key outside `allowed` is refused before any is read.
fn read_rule(field: &Field, allowed: &'static [&'static str], spec: &mut RuleSpec) -> Result<()> {
    let m = field.map(allowed)?;
    m.set("namespaces", &mut spec.namespaces, include)?;
    m.set("hours", &mut spec.after, Field::duration)?;
    m.set("status", &mut spec.reasons, Field::list)?;
    m.set("enable", &mut spec.auto, Field::bool)
}

const RESTART_KEYS: &[&str] = &[
    "namespaces",
    "hours",
    "status",
    "counts",
    "duration",
    "msgtitle",
    "apiurl",
    "enable",
];

/// `tooManyRestart` feeds both the crashLoop rule and the report.
fn read_restarts(field: &Field, config: &mut Config) -> Result<()> {
    let m = field.map(RESTART_KEYS)?;
    let (namespaces, reasons, restarts) = with_rule(config, RuleKind::CrashLoop, |spec| {
        m.set("namespaces", &mut spec.namespaces, include)?;
        m.set("hours", &mut spec.after, Field::duration)?;
        m.set("status", &mut spec.reasons, Field::list)?;
        m.set("counts", &mut spec.restarts, Field::u32)?;
        Ok::<_, super::ConfigError>((spec.namespaces.clone(), spec.reasons.clone(), spec.restarts))
    })?;
    let report = &mut config.report;
    report.namespaces = namespaces;
    report.reasons = reasons;
    report.min_restarts = restarts;
    read_report(&m, report)
}

fn read_report(m: &MapReader, report: &mut report::ReportConfig) -> Result<()> {
    m.set("enable", &mut report.enabled, Field::bool)?;
    m.set("duration", &mut report.schedule, Field::cron)?;
    m.set("msgtitle", &mut report.title, Field::string)?;
    if let Some(url) = m.get("apiurl") {
        report.sinks = vec![Sink::Feishu {
            url: sources::inline_url(&url)?,
            secret: None,
        }];
    }
    Ok(())
}
