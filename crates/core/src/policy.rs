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
    flags: Flags,
    chain: Vec<RuleSpec>,
    safety: SafetyConfig,
    audit: AuditConfig,
}

impl Policy {
    /// Either source can make things safer; neither can make them less safe.
    pub fn new(flags: Flags, config: &Config) -> Policy {
        Policy {
            flags: Flags {
                dry_run: flags.dry_run || config.safety.dry_run,
                ..flags
            },
            chain: config.rules.clone(),
            safety: config.safety.clone(),
            audit: config.audit.clone(),
        }
    }

    /// The switches in force: the command line's, made safer by the config's.
    pub fn flags(&self) -> Flags {
        self.flags
    }

    /// Decide and record, change nothing in the cluster (no Events either).
    pub fn dry_run(&self) -> bool {
        self.flags.dry_run
    }

    /// No actions at all, manual or automatic.
    pub fn readonly(&self) -> bool {
        self.flags.readonly
    }

    pub fn no_audit(&self) -> bool {
        self.flags.no_audit
    }

    pub fn chain(&self) -> &[RuleSpec] {
        &self.chain
    }

    pub fn safety(&self) -> &SafetyConfig {
        &self.safety
    }

    pub(crate) fn audit(&self) -> &AuditConfig {
        &self.audit
    }

    /// Kubernetes Events are written only when configured and not in dry-run.
    pub fn events(&self) -> bool {
        self.audit.events && !self.flags.dry_run
    }
}
