//! A complete, paginated list of pods.

use kube::Client;
use kube::core::Request;
use kube::core::params::ListParams;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::Scope;
use super::explain::explain;
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

/// List every pod in `scope`, `page_size` at a time. The next page is fetched while the
/// current one decodes, so decoding hides behind the API server's time. An item that does not
/// decode is skipped and logged rather than failing the whole list.
pub async fn list_pods(client: &Client, scope: &Scope, page_size: u32) -> Result<ListedPods> {
    let mut interner = Interner::default();
    let mut listed = ListedPods::default();
    let mut next = Some(tokio::spawn(fetch_page(
        client.clone(),
        scope.clone(),
        page_size,
        None,
    )));
    while let Some(pending) = next.take() {
        let text = pending
            .await
            .map_err(|e| Error::Cluster(format!("a list page was lost: {e}")))??;
        let page = parse_page(&text)?;
        if let Some(token) = page
            .metadata
            .continue_token
            .clone()
            .filter(|t| !t.is_empty())
        {
            next = Some(tokio::spawn(fetch_page(
                client.clone(),
                scope.clone(),
                page_size,
                Some(token),
            )));
        }
        decode_items(page, &mut interner, &mut listed);
    }
    Ok(listed)
}

async fn fetch_page(
    client: Client,
    scope: Scope,
    page_size: u32,
    token: Option<String>,
) -> Result<String> {
    let mut params = ListParams::default().limit(page_size);
    if let Some(t) = &token {
        params = params.continue_token(t);
    }
    let request = Request::new(scope.pods_path())
        .list(&params)
        .map_err(|e| Error::Cluster(e.to_string()))?;
    client
        .request_text(request)
        .await
        .map_err(|e| Error::Api(explain(&e, "list", "pods", &scope)))
}

/// Decode one page of a pod list into `listed`; returns the continue token, if any.
pub fn decode_page(
    text: &str,
    interner: &mut Interner,
    listed: &mut ListedPods,
) -> Result<Option<String>> {
    let page = parse_page(text)?;
    let token = page
        .metadata
        .continue_token
        .clone()
        .filter(|t| !t.is_empty());
    decode_items(page, interner, listed);
    Ok(token)
}

fn parse_page(text: &str) -> Result<Page<'_>> {
    serde_json::from_str(text).map_err(|e| {
        Error::Cluster(format!(
            "the pod list from the API server is not valid JSON: {e}"
        ))
    })
}

fn decode_items(page: Page<'_>, interner: &mut Interner, listed: &mut ListedPods) {
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
}

fn excerpt(json: &str) -> &str {
    let end = json.char_indices().nth(160).map_or(json.len(), |(i, _)| i);
    &json[..end]
}
