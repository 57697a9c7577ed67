//! The native shape: `rules`, `safety`, `report`, `audit`, `ui`.
//!
//! Listed rules come first, in the listed order; rules not listed keep their defaults and
//! follow in the default order, so a file only needs the rules it changes.

use super::Result;
use super::read::{Field, MapReader};
use super::sources::Environment;
use super::{Config, report};
use crate::rules::{ActionKind, RuleKind, RuleSpec};

const KEYS: &[&str] = &["rules", "safety", "report", "audit", "cluster", "ui"];

const RULE_KEYS: &[&str] = &[
    "rule",
    "enabled",
    "auto",
    "after",
    "reasons",
    "restarts",
    "action",
    "namespaces",
    "scaleWhileAvailable",
];

pub(crate) fn read(root: &Field, env: &dyn Environment) -> Result<Config> {
    let m = root.map(KEYS)?;
    let mut config = Config::default();
    if let Some(rules) = m.get("rules") {
        config.rules = read_rules(&rules)?;
    }
    m.set("report", &mut config.report, |f| report::read(f, env))?;
    super::read_common(&m, &mut config)?;
    Ok(config)
}

/// The `rules:` list: listed rules in order, then the unlisted ones with defaults.
fn read_rules(field: &Field) -> Result<Vec<RuleSpec>> {
    let mut listed: Vec<(RuleSpec, u64)> = Vec::new();
    for entry in field.seq()? {
        let m = entry.map(RULE_KEYS)?;
        let Some(rule) = m.get("rule") else {
            let names = RuleKind::ALL.map(RuleKind::name).join(", ");
            return Err(entry.error(format!("missing key \"rule\" (one of {names})")));
        };
        let kind = rule.one_of(&RuleKind::ALL, RuleKind::name, "a rule name: ")?;
        if let Some((_, line)) = listed.iter().find(|(s, _)| s.kind == kind) {
            return Err(rule.error(format!(
                "rule {kind} is listed twice (first on line {line}); merge the two entries"
            )));
        }
        listed.push((read_rule(kind, &m)?, rule.node.pos.line()));
    }
    let mut rules: Vec<RuleSpec> = listed.into_iter().map(|(spec, _)| spec).collect();
    for kind in RuleKind::ALL {
        if !rules.iter().any(|s| s.kind == kind) {
            rules.push(RuleSpec::default_for(kind));
        }
    }
    Ok(rules)
}

fn read_rule(kind: RuleKind, m: &MapReader) -> Result<RuleSpec> {
    let mut spec = RuleSpec::default_for(kind);
    m.set("enabled", &mut spec.enabled, Field::bool)?;
    m.set("auto", &mut spec.auto, Field::bool)?;
    m.set("after", &mut spec.after, Field::duration)?;
    m.set("reasons", &mut spec.reasons, Field::list)?;
    m.set("restarts", &mut spec.restarts, Field::u32)?;
    m.set("action", &mut spec.action, |f| {
        f.one_of(ActionKind::ALL, ActionKind::name, "an action: ")
    })?;
    m.set("namespaces", &mut spec.namespaces, report::read_namespaces)?;
    m.set(
        "scaleWhileAvailable",
        &mut spec.scale_while_available,
        Field::bool,
    )?;
    Ok(spec)
}
