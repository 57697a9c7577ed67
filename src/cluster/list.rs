//! A complete, paginated list of pods.

use kube::Client;
use kube::core::Request;
use kube::core::params::ListParams;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::Scope;
use crate::pod::{Interner, PodRecord, WirePod};
use crate::{Error, Result};

/// One complete list: the pods, and the resourceVersion to watch from.
#[derive(Debug, Default)]
pub struct ListedPods {
    /// Compact already, page by page: a relist never holds full pods for the whole cluster.
    pub pods: Vec<PodRecord>,
    pub resource_version: String,
    /// Items that could not be decoded and were skipped (each one logged).
    pub skipped: usize,
}

#[derive(Deserialize)]
struct Page<'a> {
    #[serde(default)]
    metadata: PageMeta,
    #[serde(borrow, default)]
    items: Vec<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct PageMeta {
    resource_version: String,
    #[serde(rename = "continue")]
    continue_token: Option<String>,
}

/// List every pod in `scope`, `page_size` at a time. An item that does not decode is skipped
/// and logged rather than failing the whole list.
pub async fn list_pods(client: &Client, scope: &Scope, page_size: u32) -> Result<ListedPods> {
    let request = Request::new(scope.pods_path());
    let mut interner = Interner::default();
    let mut listed = ListedPods::default();
    let mut token: Option<String> = None;
    loop {
        let mut params = ListParams::default().limit(page_size);
        if let Some(t) = &token {
            params = params.continue_token(t);
        }
        let http = request
            .list(&params)
            .map_err(|e| Error::Cluster(e.to_string()))?;
        let text = client.request_text(http).await?;
        token = decode_page(&text, &mut interner, &mut listed)?;
        if token.is_none() {
            return Ok(listed);
        }
    }
}

/// Decode one page of a pod list into `listed`; returns the continue token, if any.
pub fn decode_page(
    text: &str,
    interner: &mut Interner,
    listed: &mut ListedPods,
) -> Result<Option<String>> {
    let page: Page = serde_json::from_str(text).map_err(|e| {
        Error::Cluster(format!(
            "the pod list from the API server is not valid JSON: {e}"
        ))
    })?;
    listed.pods.reserve(page.items.len());
    for item in page.items {
        match serde_json::from_str::<WirePod>(item.get()) {
            Ok(pod) => listed.pods.push(pod.into_record(interner)),
            Err(e) => {
                listed.skipped += 1;
                tracing::warn!(error = %e, "skipping a pod that does not decode: {}", excerpt(item.get()));
            }
        }
    }
    listed.resource_version = page.metadata.resource_version;
    Ok(page.metadata.continue_token.filter(|t| !t.is_empty()))
}

fn excerpt(json: &str) -> &str {
    let end = json.char_indices().nth(160).map_or(json.len(), |(i, _)| i);
    &json[..end]
}
