//! The core's tests that need nothing but its public API, in one binary: the same calls a
//! user of the crate makes. Tests of a private piece stay beside it, in its file.

// A test fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod actions;
mod append;
mod clock;
mod cluster_backoff;
mod cluster_cache;
mod cluster_explain;
mod cluster_health;
mod cluster_kind;
mod cluster_list;
mod cluster_negotiate;
mod cluster_split;
mod cluster_split_proto;
mod cluster_watch;
mod cluster_watch_read;
mod cluster_watch_step;
mod fleet;
mod fleet_client;
mod fleet_fed;
mod fleet_fed_row;
mod fleet_worker_answer;
mod history;
mod inert;
mod node;
mod owners;
mod place;
mod pod_decode;
mod pod_event;
mod pod_intern;
mod pod_proto;
mod pod_resources;
mod pod_wire;
mod pod_workload;
mod proof;
mod receiver;
mod report;
mod report_inert;
mod report_send;
mod retry;
mod rules;
mod rules_cause;
mod selector;
mod worker;
