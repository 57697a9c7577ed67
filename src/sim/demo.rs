//! The `--demo` cluster: a simulated server seeded with the abnormal pods the product handles.

use super::{SimCluster, SimServer};

/// Start a simulated server with the demo scenario seeded.
pub async fn start() -> crate::Result<SimServer> {
    let cluster = SimCluster::new();
    seed(&cluster);
    SimServer::start(cluster)
        .await
        .map_err(|e| crate::Error::Cluster(format!("cannot start the simulated cluster: {e}")))
}

/// Seed the demo scenario.
pub fn seed(_cluster: &SimCluster) {}
