//! A complete, paginated list of pods, and where the API server may serve it from.
//!
//! A list with no `resourceVersion` is a quorum read from etcd, the most expensive request a
//! client can make of a large cluster. The watch loop lists from the API server's watch cache
//! instead: `resourceVersion=0` (any version, maybe stale) when it knows no version yet, and
//! `resourceVersion=<last seen>&resourceVersionMatch=NotOlderThan` on a relist, so a relist
//! never goes back in time. An API server that serves `resourceVersion=0` from its watch cache
//! may ignore `limit` and answer in one page; the decoder takes whatever pages come.

use kube::Client;
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
    pub(crate) skipped: usize,
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

/// Which versions a list may be served at, and so where the API server serves it from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListFrom {
    /// `resourceVersion=0&resourceVersionMatch=NotOlderThan`: any version, from the watch
    /// cache; possibly stale, and the server may ignore `limit`. For a first list, when
    /// nothing has been shown yet, so stale cannot mean going back in time.
    Any,
    /// `resourceVersion=<v>&resourceVersionMatch=NotOlderThan`: at `v` or newer, from the watch
    /// cache where the server can (it waits for its cache to reach `v`, else answers 504).
    NotOlderThan(String),
    /// No `resourceVersion`: the most recent version, a quorum read from etcd. Only when a
    /// version the server should know was refused (410, or 504 "too large": etcd restored).
    MostRecent,
}

impl ListFrom {
    /// The query string of the first page (`token` None) or of a following page.
    pub(crate) fn query(&self, page_size: u32, token: Option<&str>) -> String {
        let mut query = format!("limit={page_size}");
        // The continue token carries the snapshot's version; a version beside it is a 400.
        if let Some(token) = token {
            query.push_str("&continue=");
            query.push_str(&encode(token));
            return query;
        }
        let version = match self {
            ListFrom::Any => "0",
            ListFrom::NotOlderThan(v) => v.as_str(),
            ListFrom::MostRecent => return query,
        };
        query.push_str("&resourceVersion=");
        query.push_str(&encode(version));
        query.push_str("&resourceVersionMatch=NotOlderThan");
        query
    }
}

/// Percent-encoding for a query value: everything but RFC 3986's unreserved characters.
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// List every pod in `scope` at the most recent version (a quorum read), `page_size` at a
/// time: for one-shot callers that want a consistent answer. The watch loop uses
/// [`list_pods_from`] with a cheaper [`ListFrom`].
pub async fn list_pods(client: &Client, scope: &Scope, page_size: u32) -> Result<ListedPods> {
    list_pods_from(client, scope, page_size, &ListFrom::MostRecent).await
}

/// List every pod in `scope` as `from` allows, `page_size` at a time. The next page is fetched
/// while the current one decodes, so decoding hides behind the API server's time. An item
/// that does not decode is skipped and logged rather than failing the whole list.
pub(crate) async fn list_pods_from(
    client: &Client,
    scope: &Scope,
    page_size: u32,
    from: &ListFrom,
) -> Result<ListedPods> {
    list_scope(client, scope, page_size, from)
        .await
        .map_err(|f| f.error)
}

/// Why a list failed, and the API server's status code when it gave one.
pub(crate) struct ListFailed {
    pub code: Option<u16>,
    pub error: Error,
}

impl ListFailed {
    fn other(error: Error) -> ListFailed {
        ListFailed { code: None, error }
    }
}

pub(crate) async fn list_scope(
    client: &Client,
    scope: &Scope,
    page_size: u32,
    from: &ListFrom,
) -> std::result::Result<ListedPods, ListFailed> {
    let mut interner = Interner::default();
    let mut listed = ListedPods::default();
    let mut next = Some(tokio::spawn(fetch_page(
        client.clone(),
        scope.clone(),
        from.query(page_size, None),
    )));
    while let Some(pending) = next.take() {
        let text = pending.await.map_err(|e| {
            ListFailed::other(Error::Cluster(format!("a list page was lost: {e}")))
        })??;
        let page = parse_page(&text).map_err(ListFailed::other)?;
        if let Some(token) = page
            .metadata
            .continue_token
            .clone()
            .filter(|t| !t.is_empty())
        {
            next = Some(tokio::spawn(fetch_page(
                client.clone(),
                scope.clone(),
                from.query(page_size, Some(&token)),
            )));
        }
        decode_items(page, &mut interner, &mut listed);
    }
    Ok(listed)
}

async fn fetch_page(
    client: Client,
    scope: Scope,
    query: String,
) -> std::result::Result<String, ListFailed> {
    let request = http::Request::get(format!("{}?{query}", scope.pods_path()))
        .body(Vec::new())
        .map_err(|e| ListFailed::other(Error::Cluster(e.to_string())))?;
    client.request_text(request).await.map_err(|e| ListFailed {
        code: match &e {
            kube::Error::Api(status) => Some(status.code),
            _ => None,
        },
        error: Error::Api(explain(&e, "list", "pods", &scope)),
    })
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
