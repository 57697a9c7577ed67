//! The headless mode's library parts: leader election, `/metrics`, `/healthz` and `/readyz`.

mod fleet;
mod fleet_http;
pub mod metrics;
pub mod rbac;
pub(crate) mod server;
pub(crate) mod sizing;
mod slots;
mod sources;

pub use opc_core::lease::{Elector, LeaseSettings, Role, decide};
pub use server::{Listeners, Sources, bind, serve};
pub use sources::FleetSettings;

/// Resolves on SIGINT or SIGTERM (Kubernetes stops pods with SIGTERM).
pub(crate) async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let terminated = async {
        match term.as_mut() {
            Some(term) => {
                term.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminated => {}
    }
}
