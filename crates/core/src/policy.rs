//! The one effective policy: what may act and how, computed once from the command
//! line and the config. Every mode (the TUI and its context switch, `headless`, `--once`)
//! builds its executor and its worker from a `Policy`; there is no other way to build them.

use crate::config::{AuditConfig, Config, SafetyConfig};
use crate::rules::RuleSpec;

/// The switches the command line adds to the config.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    pub dry_run: bool,
    pub readonly: bool,
    /// `--no-audit`: act without an audit log.
    pub no_audit: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    dry_run: bool,
    readonly: bool,
    no_audit: bool,
    chain: Vec<RuleSpec>,
    safety: SafetyConfig,
    audit: AuditConfig,
}

impl Policy {
    /// Either source can make things safer; neither can make them less safe.
    pub fn new(flags: Flags, config: &Config) -> Policy {
        Policy {
            dry_run: flags.dry_run || config.safety.dry_run,
            readonly: flags.readonly,
            no_audit: flags.no_audit,
            chain: config.rules.clone(),
            safety: config.safety.clone(),
            audit: config.audit.clone(),
        }
    }

    /// Decide and record, change nothing in the cluster (no Events either).
    /// The switches in force: the command line's, made safer by the config's.
    pub fn flags(&self) -> Flags {
        Flags {
            dry_run: self.dry_run,
            readonly: self.readonly,
            no_audit: self.no_audit,
        }
    }

    pub fn dry_run(&self) -> bool {
        self.dry_run
    }

    /// No actions at all, manual or automatic.
    pub fn readonly(&self) -> bool {
        self.readonly
    }

    /// Acting without an audit log, on purpose.
    pub fn no_audit(&self) -> bool {
        self.no_audit
    }

    pub fn chain(&self) -> &[RuleSpec] {
        &self.chain
    }

    pub fn safety(&self) -> &SafetyConfig {
        &self.safety
    }

    /// Where and how the audit log is written.
    pub(crate) fn audit(&self) -> &AuditConfig {
        &self.audit
    }

    /// Kubernetes Events are written only when configured and not in dry-run.
    pub fn events(&self) -> bool {
        self.audit.events && !self.dry_run
    }
}
