//! What a confirmation shows before a manual action: where an opt-out sits and, for
//! scale-to-zero, the workload with its replicas now and how many of them still serve.

use kube::api::DynamicObject;

use super::PodRef;
use super::execute::{Executor, stopped};
use super::owner::{self, Resolution};
use super::owners::{FULL_CHAIN, OptOut};
use super::scale::available_replicas;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    pub opt_out: Option<OptOut>,
    pub resolution: Resolution,
    /// `spec.replicas` of the workload, when asked for and readable.
    pub replicas: Option<i32>,
    /// `status.availableReplicas`: how many would stop serving.
    pub available: Option<i32>,
}

impl Executor {
    /// Read the pod's owner chain (cached) and, with `workload`, the workload itself.
    pub async fn inspect(&self, pod: &PodRef, workload: bool) -> Result<Inspection, String> {
        let record = self
            .cache
            .get(&pod.uid)
            .ok_or_else(|| format!("{pod} is gone from the cache"))?;
        let chain = self
            .owners
            .chain(&self.client, &self.settings.retry, &record, FULL_CHAIN)
            .await
            .map_err(|stop| stopped(stop).detail().to_string())?;
        let resolution = owner::resolve(&record, &chain);
        let object: Option<DynamicObject> = match (&resolution, workload) {
            (Resolution::Scalable(w), true) => w.api(&self.client).get(&w.name).await.ok(),
            _ => None,
        };
        let replicas = object
            .as_ref()
            .and_then(|o| o.data.pointer("/spec/replicas")?.as_i64())
            .and_then(|r| i32::try_from(r).ok());
        Ok(Inspection {
            opt_out: OptOut::find(&record, &chain),
            resolution,
            replicas,
            available: object.as_ref().map(available_replicas),
        })
    }
}
