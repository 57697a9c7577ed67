//! The effective config as text for `check-config`: rules as a table, then report, safety, audit.
//! Secrets are never printed: URLs show scheme and host only, secrets only where they came from.

use std::fmt::Write;

use super::duration::format as go;
use super::report::format_max_age;
use super::secret::{Secret, SecretSource, mask_url};
use super::{Config, ConfigSource, ReportConfig, SafetyConfig, Sink};
use crate::rules::{NamespaceFilter, RuleSpec};

impl Config {
    /// The effective settings as aligned text, for `check-config`.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        let source = match &self.source {
            ConfigSource::Builtin => "built-in defaults".to_string(),
            ConfigSource::File(path) => path.display().to_string(),
        };
        let _ = writeln!(out, "config: {source}");
        let _ = writeln!(
            out,
            "rules (chain order: the first rule that matches claims the pod):"
        );
        out.push_str(&rules_table(&self.rules));
        report(&mut out, self);
        safety(&mut out, &self.safety);
        let events = if self.audit.events { "on" } else { "off" };
        let _ = writeln!(
            out,
            "audit: {}, kubernetes events {events}",
            self.audit.path.display()
        );
        let c = &self.cluster;
        // Said only when forced: protobuf, with JSON where a server answers that, is the default.
        let json = if c.wire_format == super::choices::WireFormat::Json {
            "; pods asked for in JSON only"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "cluster: a view not proved current for {} is stale; connect within {}, requests within {}{json}",
            go(c.watch_silence),
            go(c.connect_timeout),
            go(c.request_timeout)
        );
        out
    }
}

const HEADER: [&str; 8] = [
    "RULE",
    "ENABLED",
    "AUTO",
    "AFTER",
    "RESTARTS",
    "ACTION",
    "NAMESPACES",
    "REASONS",
];

fn rule_row(r: &RuleSpec) -> [String; 8] {
    [
        r.kind.name().to_string(),
        yes_no(r.enabled).into(),
        yes_no(r.auto).into(),
        go(r.after),
        if r.restarts == 0 {
            "-".into()
        } else {
            r.restarts.to_string()
        },
        r.action.name().to_string(),
        namespaces(&r.namespaces),
        if r.reasons.is_empty() {
            "-".into()
        } else {
            r.reasons.join(",")
        },
    ]
}

/// Columns padded to their widest cell; the last column is not padded.
fn rules_table(rules: &[RuleSpec]) -> String {
    let mut rows = vec![HEADER.map(String::from)];
    rows.extend(rules.iter().map(rule_row));
    let mut widths = [0usize; 8];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "  {}", cells.join("  ").trim_end());
    }
    out
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

pub(crate) fn namespaces(filter: &NamespaceFilter) -> String {
    let include = if filter.include.is_empty() {
        "all".to_string()
    } else {
        filter.include.join(",")
    };
    if filter.exclude.is_empty() {
        include
    } else {
        format!("{include} except {}", filter.exclude.join(","))
    }
}

fn report(out: &mut String, config: &Config) {
    let r = &config.report;
    let state = if r.enabled { "enabled" } else { "disabled" };
    let _ = writeln!(
        out,
        "report: {state}, schedule \"{}\" (sec min hour day month weekday)",
        r.schedule
    );
    let _ = writeln!(out, "  title:        {}", r.title);
    let _ = writeln!(out, "  min restarts: {}", r.min_restarts);
    let _ = writeln!(out, "  reasons:      {}", r.reasons.join(","));
    let _ = writeln!(out, "  namespaces:   {}", namespaces(&r.namespaces));
    if r.sinks.is_empty() {
        let _ = writeln!(out, "  sinks:        none");
    }
    for sink in &r.sinks {
        let _ = writeln!(out, "  sink:         {}", sink_line(sink));
    }
    for absent in &r.left_out {
        let _ = writeln!(out, "  {absent}");
    }
    let _ = writeln!(out, "  spool dir:    {}", r.spool_dir.display());
    let _ = writeln!(out, "  spool caps:   {}", spool_caps(r));
    let _ = writeln!(out, "  state file:   {}", r.state_file.display());
}

/// "7d, 100 files (older or more are dropped unsent)"; zero means no limit.
fn spool_caps(r: &ReportConfig) -> String {
    let age = match r.spool_max_age.is_zero() {
        true => "any age".to_string(),
        false => format_max_age(r.spool_max_age),
    };
    let files = match r.spool_max_files {
        0 => "any number of files".to_string(),
        n => format!("{n} files"),
    };
    format!("{age}, {files} (older or more are dropped unsent, dead letters too)")
}

/// The URL masked to scheme and host, and where each secret came from; never a value.
fn sink_line(sink: &Sink) -> String {
    let kind = sink.kind();
    match sink {
        Sink::Feishu { url, secret } => {
            let signed = match secret {
                Some(secret) => format!("signed, secret {}", origin(secret)),
                None => "unsigned".into(),
            };
            let shown = mask_url(url.expose());
            format!("{kind}  {shown} (url {}; {signed})", origin(url))
        }
        Sink::Slack { url } | Sink::Webhook { url } => {
            let shown = mask_url(url.expose());
            format!("{kind:<7} {shown} (url {})", origin(url))
        }
        Sink::File { path, format } => {
            format!("{kind:<7} {} ({})", path.display(), format.name())
        }
    }
}

fn origin(secret: &Secret) -> String {
    match secret.source() {
        SecretSource::Inline => "inline".into(),
        from => format!("from {from}"),
    }
}

fn safety(out: &mut String, s: &SafetyConfig) {
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(",")
        }
    };
    let _ = writeln!(out, "safety:");
    let _ = writeln!(out, "  dry run:      {}", yes_no(s.dry_run));
    let _ = writeln!(
        out,
        "  protected:    {} (allowed anyway: {})",
        list(&s.protected_namespaces),
        list(&s.include_protected)
    );
    let _ = writeln!(
        out,
        "  rate limit:   {}/min overall, {}/min per namespace",
        s.max_actions_per_minute, s.max_actions_per_namespace_per_minute
    );
    let _ = writeln!(
        out,
        "  max stale:    {} (no auto action on a view older than this)",
        go(s.max_stale)
    );
    let _ = writeln!(
        out,
        "  breaker:      pause a rule when it matches >= {:.0}% of a namespace or workload (at least {} pods),",
        s.breaker.share * 100.0,
        s.breaker.min_pods
    );
    let _ = writeln!(
        out,
        "                or would act on more than {} workloads of a namespace, or in more than {} namespaces, within {}",
        s.breaker.max_workloads,
        s.breaker.max_workloads,
        go(s.breaker.window)
    );
    let _ = writeln!(
        out,
        "                in that namespace only; for their registry once {} namespaces pulling from it burst (minNamespaces)",
        s.breaker.min_namespaces
    );
}
