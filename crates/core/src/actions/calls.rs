//! The requests actions and reads share: one client, one retry policy, the status handling
//! every call gets, and the workload and parked-record calls both scale and undo make.

use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::json;

use super::action::PodRef;
use super::failure::Failure;
use super::parked::{ParkedStore, parked_namespace};
use super::retry::{Needs, RetryPolicy, Stop};
use super::workload::ScalableWorkload;

#[derive(Clone)]
pub(crate) struct Calls {
    pub(super) client: Client,
    pub(super) retry: RetryPolicy,
}

impl Calls {
    pub(crate) fn new(client: Client, retry: RetryPolicy) -> Calls {
        Calls { client, retry }
    }

    /// The parked ConfigMap of the product's namespace.
    pub(crate) fn parked_store(&self) -> ParkedStore<'_> {
        ParkedStore::new(&self.client, parked_namespace(), &self.retry)
    }

    /// A request built by hand (for bodies kube's typed calls get wrong or cannot express),
    /// with the shared retry and status handling; returns the answer's text.
    pub(crate) async fn send_json(
        &self,
        method: http::Method,
        path: String,
        body: Option<(&'static str, serde_json::Value)>,
        needs: Needs,
        namespace: &str,
    ) -> Result<String, Stop> {
        let uri: http::Uri = (path.parse())
            .map_err(|e: http::uri::InvalidUri| Stop::Failed(Failure::Request(e.to_string())))?;
        let bytes = body.as_ref().map(|(_, json)| json.to_string().into_bytes());
        // Built again for each try: a request is not `Clone`.
        let request = || {
            let mut request = http::Request::new(bytes.clone().unwrap_or_default());
            *request.method_mut() = method.clone();
            *request.uri_mut() = uri.clone();
            if let Some((content_type, _)) = body {
                let value = http::HeaderValue::from_static(content_type);
                request
                    .headers_mut()
                    .insert(http::header::CONTENT_TYPE, value);
            }
            request
        };
        self.retry
            .run(needs, namespace, || self.client.request_text(request()))
            .await
    }

    /// The pod's JSON, as the API server has it now.
    pub(crate) async fn get_pod(&self, p: &PodRef) -> Result<String, Stop> {
        let needs = Needs {
            verb: "get",
            resource: "pods",
        };
        self.send_json(http::Method::GET, p.path(), None, needs, &p.namespace)
            .await
    }

    pub(crate) async fn get_workload(&self, w: &ScalableWorkload) -> Result<DynamicObject, Stop> {
        let api = w.api(&self.client);
        let needs = Needs::new("get", w.kind().plural());
        self.retry
            .run(needs, w.namespace(), || api.get(w.name()))
            .await
    }

    /// A merge patch of the workload object itself.
    pub(crate) async fn patch_workload(
        &self,
        w: &ScalableWorkload,
        body: &serde_json::Value,
    ) -> Result<(), Stop> {
        let api = w.api(&self.client);
        let params = PatchParams::default();
        let patch = Patch::Merge(body);
        let needs = Needs::new("patch", w.kind().plural());
        self.retry
            .run(needs, w.namespace(), || {
                api.patch(w.name(), &params, &patch)
            })
            .await
            .map(|_| ())
    }

    /// `spec.replicas` and the Scale's resourceVersion.
    pub(crate) async fn read_scale(&self, w: &ScalableWorkload) -> Result<(i32, String), Stop> {
        let api = w.api(&self.client);
        let scale = self
            .retry
            .run(scale_needs(w, "get"), w.namespace(), || {
                api.get_scale(w.name())
            })
            .await?;
        let version = scale.metadata.resource_version.clone().unwrap_or_default();
        Ok((scale.spec.and_then(|s| s.replicas).unwrap_or(0), version))
    }

    /// Write replicas through the scale subresource; with `version`, only if the Scale is
    /// still at it (a 409 otherwise).
    pub(crate) async fn set_replicas(
        &self,
        w: &ScalableWorkload,
        replicas: i32,
        version: Option<&str>,
    ) -> Result<(), Stop> {
        let api: Api<DynamicObject> = w.api(&self.client);
        let params = PatchParams::default();
        let body = match version.filter(|v| !v.is_empty()) {
            Some(version) => {
                json!({"metadata": {"resourceVersion": version}, "spec": {"replicas": replicas}})
            }
            None => json!({"spec": {"replicas": replicas}}),
        };
        let patch = Patch::Merge(&body);
        self.retry
            .run(scale_needs(w, "patch"), w.namespace(), || {
                api.patch_scale(w.name(), &params, &patch)
            })
            .await
            .map(|_| ())
    }
}

fn scale_needs(w: &ScalableWorkload, verb: &'static str) -> Needs {
    let resource = match w.kind().plural() {
        "deployments" => "deployments/scale",
        "rollouts" => "rollouts/scale",
        "statefulsets" => "statefulsets/scale",
        "replicasets" => "replicasets/scale",
        _ => "replicationcontrollers/scale",
    };
    Needs::new(verb, resource)
}
