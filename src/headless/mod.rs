//! The headless mode's library parts: leader election, `/metrics`, `/healthz` and `/readyz`.

mod fleet;
mod fleet_http;
pub mod metrics;
pub(crate) mod server;
pub mod sizing;
pub mod slots;
mod sources;

pub use server::{Listeners, Sources, bind, serve};
pub use sources::FleetSettings;

/// Resolves on SIGINT or SIGTERM (Kubernetes stops pods with SIGTERM); elsewhere on Ctrl-C.
pub(crate) async fn shutdown_signal() {
    #[cfg(unix)]
    let terminated = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    // Where there is no SIGTERM to wait for: a signal that never comes.
    #[cfg(not(unix))]
    let terminated = std::future::pending::<()>();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminated => {}
    }
}
