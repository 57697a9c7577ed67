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

/// Resolves on SIGINT or SIGTERM (Kubernetes stops pods with SIGTERM); elsewhere on Ctrl-C.
pub(crate) async fn shutdown_signal() {
    #[cfg(unix)]
    let mut term = {
        use tokio::signal::unix::{SignalKind, signal};
        signal(SignalKind::terminate()).ok()
    };
    #[cfg(not(unix))]
    let mut term: Option<NoSignal> = None;
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

/// Where there is no SIGTERM to wait for: a signal that never comes.
#[cfg(not(unix))]
struct NoSignal;

#[cfg(not(unix))]
impl NoSignal {
    async fn recv(&mut self) -> Option<()> {
        std::future::pending().await
    }
}
