//! One connected cluster as the screen uses it; a context switch swaps in a new one.

use std::any::Any;

use futures::future::BoxFuture;

use opc_core::cluster::ClusterName;
use opc_core::fleet::WatchWhy;
use opc_core::session::ClusterSession;
use opc_core::worker::{WorkerCommand, WorkerHandle};

pub(crate) struct Session {
    /// Its name (shown in the header), cache, watches and executor.
    pub(crate) cluster: ClusterSession,
    pub(crate) worker: WorkerHandle,
    /// Its restart report: counted from its cache, or as its worker last served it.
    pub(crate) report: Option<opc_core::report::LiveReport>,
    /// Keeps the worker's Lease task and the simulated server alive; dropping it stops them.
    pub(crate) _guard: Box<dyn Any + Send>,
}

impl Session {
    /// Hand `command` to this cluster's worker; say so in the log when it cannot take it.
    pub(crate) fn tell(&self, command: WorkerCommand) {
        if let Err(e) = self.worker.commands.try_send(command) {
            tracing::warn!(
                target: opc_core::actions::ACTION_LOG,
                "{}: the worker did not take the command: {e}",
                self.cluster.name
            );
        }
    }
}

/// Lists the kubeconfig contexts and connects to one, for the switch-context key.
pub(crate) trait Connector: Send + Sync {
    fn contexts(&self) -> crate::Result<Vec<ClusterName>>;
    fn connect(&self, context: ClusterName) -> BoxFuture<'static, crate::Result<Session>>;
    /// `session`'s cluster opened again as a watch, because `why`; what the old session keeps
    /// alive for its cluster (the simulated server of `--demo`) moves to the new one.
    fn watch_instead(&self, session: &mut Session, why: WatchWhy) -> BoxFuture<'static, Session>;
}
