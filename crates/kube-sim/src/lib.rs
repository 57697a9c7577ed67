//! A simulated Kubernetes API server: ops-pod-cleaner's `--demo` clusters, and the cluster its
//! integration tests and benchmarks run against. It knows nothing of the product.
//!
//! [`SimCluster`] holds the objects (pods, workloads, budgets, events, nodes) with real
//! API semantics: one resourceVersion counter, a bounded change history for watches and
//! consistent paging, graceful pod deletion run by per-node "kubelets", finalizers,
//! preconditions, and controllers for ReplicaSets, Deployments, StatefulSets,
//! ReplicationControllers and Argo Rollouts; [`SimCluster::record_pod_event`] writes a pod's
//! Events as its kubelet or the scheduler would. [`SimServer`] serves it over HTTP on
//! loopback so an unchanged `kube::Client` can talk to it, including the service proxy
//! (`…/services/{name}:{port}/proxy/…`) to a backend a test registers with
//! [`SimCluster::serve_endpoint`]. [`Faults`] injects RBAC
//! denials, throttling, errors, latency and watch trouble. [`demo`] holds the two `--demo`
//! scenarios; [`generate`] makes realistic pods in bulk as the API server would send them.

mod clock;
mod cluster;
mod controllers;
pub mod demo;
mod discovery;
mod error;
mod events;
mod eviction;
mod extras;
mod faults;
pub mod generate;
mod http;
mod in_process;
mod json;
mod list;
mod logs;
mod meta;
mod nodes;
mod objects;
mod ops;
mod patch;
mod pods;
pub mod proto;
mod proxy;
mod pull;
mod query;
mod reply;
mod resources;
mod router;
mod scale;
mod scheduler;
mod seed;
mod select;
mod server;
mod services;
mod status;
mod store;
mod watch;
mod workloads;

pub use clock::SimClock;
pub use cluster::{DEFAULT_NODES, PodShaper, SimCluster, StreamingLists};
pub use error::{Error, Result};
pub use events::{Component, EventKind, PodEvent, SCHEDULER_HOST};
pub use faults::{Faults, Injected, USER};
pub use in_process::Link;
pub use server::SimServer;
pub use status::ApiError;
pub use store::DEFAULT_HISTORY;
