//! The integration tests, in one binary: each module was a test crate of its own, and each
//! linked the whole stack. `list_memory` (a counting global allocator) and `secrets` (a
//! process-wide log capture) stay alone, since they own something global.

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;
mod ui_support;

mod actions;
mod audit;
mod cache_index;
mod causes;
mod cli;
mod config;
mod deploy;
mod deploy_overlays;
mod e2e;
mod e2e_auto;
mod e2e_causes;
mod e2e_liveness;
mod e2e_nodes;
mod e2e_safety;
mod exit_codes;
mod fed_actions;
mod fed_sources;
mod files;
mod fleet_feed;
mod fleet_serve;
mod headless;
mod headless_bin;
mod headless_once;
mod headless_parts;
mod hostile_tenant;
mod inert_sinks;
mod install;
mod io_errors;
mod list_semantics;
mod live_cache;
mod liveness;
mod multi_cluster_cli;
mod node_causes;
mod parked_workloads;
mod policy;
mod proto_decode;
mod proto_wire;
mod report_build;
mod report_config;
mod report_delivery;
mod report_headless;
mod report_multi_cluster;
mod rules;
mod sim_actions;
mod text_log;
mod tui_clusters_pty;
mod tui_fed_pty;
mod tui_lease_pty;
mod tui_pty;
mod ui_cluster_view;
mod ui_clusters;
mod ui_export;
mod ui_fed;
mod ui_keys;
mod ui_order;
mod ui_snapshots;
mod worker_dry_run;
mod worker_pauses;
mod worker_plan;
mod worker_sim;
