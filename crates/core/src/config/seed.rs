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
use super::report::{ReportConfig, Sink};
use super::sources;
use super::tree::Value;
use crate::rules::{NamespaceFilter, RuleKind, RuleSpec};

pub(crate) const KEYS: [&str; 4] = [
    "errImagePull",
    "tooManyRestart",
    "delteEvictedPod",
    "delteTerminatingPod",
];

pub(crate) fn read(root: &Field) -> Result<Config> {
    reject_mixed(root)?;
    // Seed keys plus the native sections that do not overlap them.
    let m = root.map(&[&KEYS[..], &["safety", "audit", "cluster", "ui"]].concat())?;
    let mut config = Config::default();
    for (key, kind, allowed) in RULES {
        let Some(f) = m.get(key) else { continue };
        let seed = f.map(allowed)?;
        // The default config holds every rule once.
        if let Some(spec) = config.rules.iter_mut().find(|r| r.kind == kind) {
            read_rule(&seed, spec)?;
            if kind == RuleKind::CrashLoop {
                read_report(&seed, spec, &mut config.report)?;
            }
        }
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

fn include(field: &Field) -> Result<NamespaceFilter> {
    Ok(NamespaceFilter {
        include: field.list()?,
        exclude: Vec::new(),
    })
}

/// The seed keys, one rule each, in the seed's order, with the keys each may have.
const RULES: [(&str, RuleKind, &[&str]); 4] = [
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
    (
        "tooManyRestart",
        RuleKind::CrashLoop,
        &[
            "namespaces",
            "hours",
            "status",
            "counts",
            "duration",
            "msgtitle",
            "apiurl",
            "enable",
        ],
    ),
];

/// One rule's seed entry, its keys already checked.
fn read_rule(m: &MapReader, spec: &mut RuleSpec) -> Result<()> {
    m.set("namespaces", &mut spec.namespaces, include)?;
    m.set("hours", &mut spec.after, Field::duration)?;
    m.set("status", &mut spec.reasons, Field::list)?;
    m.set("counts", &mut spec.restarts, Field::u32)?;
    // `tooManyRestart.enable` turns the report on, not the rule's auto.
    if spec.kind == RuleKind::CrashLoop {
        return Ok(());
    }
    m.set("enable", &mut spec.auto, Field::bool)
}

/// `tooManyRestart` feeds the report too: the crashLoop rule's filters, and keys of its own.
fn read_report(m: &MapReader, crash: &RuleSpec, report: &mut ReportConfig) -> Result<()> {
    report.namespaces = crash.namespaces.clone();
    report.reasons = crash.reasons.clone();
    report.min_restarts = crash.restarts;
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
