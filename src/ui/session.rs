//! One connected cluster as the screen uses it; a context switch swaps in a new one.

use std::any::Any;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::actions::Executor;
use crate::cluster::Cache;
use crate::report::RestartReport;
use crate::worker::WorkerHandle;

/// Builds the restart report from the cache, as the worker would send it.
pub type ReportSource = Arc<dyn Fn(&Cache) -> RestartReport + Send + Sync>;

pub struct Session {
    /// The context's name, shown in the header.
    pub context: String,
    pub client: kube::Client,
    pub cache: Cache,
    pub executor: Arc<Executor>,
    pub worker: WorkerHandle,
    pub report: ReportSource,
    /// Keeps the watches, the worker and the simulated server alive; dropping it stops them.
    pub guard: Box<dyn Any + Send>,
}

/// Lists the kubeconfig contexts and connects to one, for the switch-context key.
pub trait Connector: Send + Sync {
    fn contexts(&self) -> Result<Vec<String>, String>;
    fn connect(&self, context: String) -> BoxFuture<'static, Result<Session, String>>;
}
