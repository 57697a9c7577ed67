//! Shared test helpers: pod builders and the API scenario mock.

pub mod contexts;
pub mod e2e;
pub mod fleet_worker;
pub mod inert;
pub mod kubelet;
pub mod kustomize;
pub mod log;
pub mod metrics;
pub mod mock_api;
pub mod pauses;
pub mod pods;
pub mod policy;
pub mod pty;
pub mod rbac;
pub mod served;
pub mod sim;
pub mod terminal;
