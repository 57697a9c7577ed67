//! Policies for tests: the built-in config with the switches a test needs.

use std::time::Duration;

use opc_core::actions::RetryPolicy;
use opc_core::config::Config;
use opc_core::policy::{Flags, Policy};

/// The built-in config, with or without dry-run and Kubernetes Events.
pub fn policy(dry_run: bool, events: bool) -> Policy {
    let mut config = Config::default();
    config.audit.events = events;
    Policy::new(
        Flags {
            dry_run,
            ..Flags::default()
        },
        &config,
    )
}

/// [`policy`] with every rule matching at once: a pod the simulator has just made is
/// abnormal as soon as its status says so.
pub fn at_once(dry_run: bool, events: bool) -> Policy {
    let mut config = Config::default();
    config.audit.events = events;
    for rule in &mut config.rules {
        rule.after = Duration::ZERO;
    }
    Policy::new(
        Flags {
            dry_run,
            ..Flags::default()
        },
        &config,
    )
}

/// Retries that keep a test fast.
pub fn quick_retry() -> RetryPolicy {
    RetryPolicy {
        attempts: 3,
        first_wait: Duration::from_millis(10),
        max_wait: Duration::from_secs(2),
        ..RetryPolicy::default()
    }
}

/// The audit settings with the log at `path` and the default rotation.
pub fn audit_config(path: &std::path::Path) -> opc_core::config::AuditConfig {
    opc_core::config::AuditConfig {
        path: path.to_path_buf(),
        ..Default::default()
    }
}
