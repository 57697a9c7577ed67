//! What `/metrics` exports, as the tests hold `render` and the shipped alerts and dashboard to it.

/// Every metric `render` writes: what alert rules and dashboards may name (the ones shipped in
/// assets/deploy/components are checked against it, and it against `render`).
pub const METRIC_NAMES: [&str; 17] = [
    "opc_pods",
    "opc_nodes_not_reporting",
    "opc_events_dropped_total",
    "opc_abnormal_pods",
    "opc_actions_total",
    "opc_rule_paused",
    "opc_auto_held_targets",
    "opc_watch_restarts_total",
    "opc_watch_forbidden",
    "opc_watch_relists_total",
    "opc_watch_stale_seconds",
    "opc_synced",
    "opc_wire_format",
    "opc_report_deliveries_total",
    "opc_leader",
    "opc_worker_blocked",
    "opc_audit_failing",
];
