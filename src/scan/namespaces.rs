//! `-n NS` for a namespace that does not exist: an error naming the ones there are, not an
//! empty scan that reads as "nothing abnormal".

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::ListParams;

use opc_core::cluster::Cluster;

/// How many names the error lists before "and N more".
const SHOWN: usize = 12;

/// For a namespace that listed no pods: `Some` says that it does not exist and which ones do.
/// Only a 404 counts: a GET that is forbidden or fails says nothing.
pub(crate) async fn missing_namespace(cluster: &Cluster, namespace: &str) -> Option<String> {
    let api: Api<Namespace> = Api::all(cluster.client.clone());
    match api.get_opt(namespace).await {
        Ok(Some(_)) => None,
        Ok(None) => Some(missing(cluster, namespace, &api).await),
        Err(e) => {
            tracing::debug!(
                "cannot check that namespace {namespace} exists: {}",
                opc_core::cluster::plain(&e)
            );
            None
        }
    }
}

async fn missing(cluster: &Cluster, namespace: &str, api: &Api<Namespace>) -> String {
    let context = &cluster.name;
    let head = format!("namespace {namespace} does not exist in context {context}");
    // Names help only if this identity may list them; one page is enough to spot a typo.
    let Ok(list) = api.list(&ListParams::default().limit(500)).await else {
        return format!("{head}; check the name with `kubectl get namespaces` and pass it to -n");
    };
    let mut names: Vec<String> = list
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    names.sort();
    let more = names.len().saturating_sub(SHOWN);
    names.truncate(SHOWN);
    let tail = match (more, list.metadata.continue_.is_some_and(|c| !c.is_empty())) {
        (0, false) => String::new(),
        (0, true) => ", …".to_string(),
        (n, _) => format!(", … and {n} more"),
    };
    format!("{head}; namespaces there: {}{tail}", names.join(", "))
}
