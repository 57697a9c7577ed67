//! A complete, paginated list of pods, and where the API server may serve it from ([`ListFrom`]).
//!
//! A list with no `resourceVersion` is a quorum read from etcd, the most expensive request a client
//! can make of a large cluster, so the watch loop lists from the API server's watch cache instead.
//! Served from there at `resourceVersion=0`, a list may ignore `limit` and come in one page of any
//! size: pages are decoded as they stream in ([`super::split`]), never held whole.

use futures::AsyncBufReadExt;
use kube::Client;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::Scope;
use super::kind::{Kind, Pods};
use super::negotiate::send_answered;
use super::split::{ListSplitter, Malformed, Piece, Splitter};
use super::split_proto::ProtoSplitter;
use crate::config::WireFormat;
use crate::pod::{PageMeta, PodRecord, list_meta};

pub type Result<T, E = ListError> = std::result::Result<T, E>;

/// One complete list of pods, and the resourceVersion to watch from.
#[derive(Debug, Default)]
pub struct ListedPods {
    pub pods: Vec<PodRecord>,
    pub resource_version: String,
}

/// One complete list: the objects, and the resourceVersion to watch from.
#[derive(Debug)]
pub(crate) struct Listed<R> {
    /// Compact already, page by page: a relist never holds full pods for the whole cluster.
    pub items: Vec<R>,
    pub resource_version: String,
    /// The format the server answered in (the last page's); None before any page.
    pub(crate) format: Option<WireFormat>,
}

/// Which versions a list may be served at, and so where the API server serves it from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListFrom {
    /// `resourceVersion=0&resourceVersionMatch=NotOlderThan`: any version, from the watch
    /// cache, maybe stale. For a first list, when stale cannot mean going back in time.
    Any,
    /// `resourceVersion=<v>&resourceVersionMatch=NotOlderThan`: at `v` or newer, from the watch
    /// cache where the server can (it waits for its cache to reach `v`, else answers 504).
    NotOlderThan(String),
    /// No `resourceVersion`: the most recent version, a quorum read from etcd. Only when a
    /// version the server should know was refused (410, or 504 "too large": etcd restored).
    MostRecent,
}

impl ListFrom {
    /// As a `resourceVersion`: empty for the most recent (a consistent read).
    pub(crate) fn version(&self) -> String {
        match self {
            ListFrom::Any => "0".to_string(),
            ListFrom::NotOlderThan(v) => v.clone(),
            ListFrom::MostRecent => String::new(),
        }
    }

    /// The query string of the first page (`token` None) or of a following page, of the
    /// objects `selector` (a field selector) admits.
    pub(crate) fn query(&self, page_size: u32, token: Option<&str>, selector: &str) -> String {
        let mut query = format!("limit={page_size}");
        if !selector.is_empty() {
            query.push_str("&fieldSelector=");
            query.extend(utf8_percent_encode(selector, UNRESERVED));
        }
        // The continue token carries the snapshot's version; a version beside it is a 400.
        if let Some(token) = token {
            query.push_str("&continue=");
            query.extend(utf8_percent_encode(token, UNRESERVED));
            return query;
        }
        if *self == ListFrom::MostRecent {
            return query;
        }
        query.push_str("&resourceVersion=");
        query.extend(utf8_percent_encode(&self.version(), UNRESERVED));
        query.push_str("&resourceVersionMatch=NotOlderThan");
        query
    }
}

/// What of a query value stays as it is: RFC 3986's unreserved characters.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// List every pod in `scope` at the most recent version (a quorum read), for one-shot callers that
/// want a consistent answer; an item that does not decode is skipped and logged.
pub async fn list_pods(
    client: &Client,
    scope: &Scope,
    page_size: u32,
    wire: WireFormat,
) -> Result<ListedPods> {
    let listed = list_scope::<Pods>(client, scope, page_size, &ListFrom::MostRecent, wire).await?;
    Ok(ListedPods {
        pods: listed.items,
        resource_version: listed.resource_version,
    })
}

/// Every object of `K`'s kind in `scope`, as `from` allows, decoded page by page as the bytes
/// arrive, asked for in `wire` where the kind can be read from protobuf.
pub(crate) async fn list_scope<K: Kind>(
    client: &Client,
    scope: &Scope,
    page_size: u32,
    from: &ListFrom,
    wire: WireFormat,
) -> Result<Listed<K::Record>> {
    let accept = if K::PROTOBUF { wire } else { WireFormat::Json }.accept();
    let mut decoder = K::Decoder::default();
    let mut listed = Listed {
        items: Vec::new(),
        resource_version: String::new(),
        format: None,
    };
    let open = |token: Option<&str>| {
        tokio::spawn(open_page(
            client.clone(),
            scope.clone(),
            K::RESOURCE,
            from.query(page_size, token, K::SELECTOR),
            accept,
        ))
    };
    let mut next = Some(open(None));
    while let Some(pending) = next.take() {
        let body = pending
            .await
            .map_err(|e| ListProblem::PageLost(e.to_string()))??;
        let mut decode = |format: WireFormat, piece: Piece<'_>| match piece {
            Piece::Item(item) => decode_item::<K>(item, format, &mut decoder, &mut listed),
            Piece::Meta(meta) => {
                listed.format = Some(format);
                let meta = parse_meta(meta, format);
                listed.resource_version = meta.resource_version;
                // The metadata comes before the items: the next page is asked for now, and
                // its answer waits in the connection while this page decodes.
                if let Some(token) = meta.continue_token.filter(|t| !t.is_empty()) {
                    next = Some(open(Some(&token)));
                }
            }
        };
        read_page(body, scope, K::RESOURCE, &mut decode).await?;
    }
    Ok(listed)
}

type PageBody = std::pin::Pin<Box<dyn futures::AsyncBufRead + Send>>;

/// Send a page's request and wait for its answer's head; the body is read as it is decoded.
async fn open_page(
    client: Client,
    scope: Scope,
    resource: &'static str,
    query: String,
    accept: &'static str,
) -> Result<PageBody> {
    let request = http::Request::get(format!("{}?{query}", scope.path(resource)))
        .header(http::header::ACCEPT, accept)
        .body(Vec::new())
        .map_err(|e| ListProblem::Request(e.to_string()))?;
    match send_answered(&client, request).await {
        Ok((_, body)) => Ok(Box::pin(body)),
        Err(e) => Err(refused(&scope, resource, e)),
    }
}

fn refused(scope: &Scope, resource: &'static str, error: kube::Error) -> ListError {
    ListError::Request(RequestError {
        verb: "list",
        resource,
        scope: scope.clone(),
        source: Box::new(error),
        context: None,
    })
}

fn splitter(format: WireFormat) -> Box<dyn ListSplitter> {
    match format {
        WireFormat::Json => Box::new(Splitter::default()),
        WireFormat::Protobuf => Box::new(ProtoSplitter::default()),
    }
}

/// Feed a page's body to `on` piece by piece as it arrives: only the item being read is held.
/// The format is the one the server answered in, whatever was asked.
async fn read_page(
    mut body: PageBody,
    scope: &Scope,
    resource: &'static str,
    on: &mut (dyn FnMut(WireFormat, Piece<'_>) + Send),
) -> Result<()> {
    let mut split: Option<(WireFormat, Box<dyn ListSplitter>)> = None;
    loop {
        let chunk = body
            .fill_buf()
            .await
            .map_err(|e| refused(scope, resource, kube::Error::ReadEvents(e)))?;
        if chunk.is_empty() {
            break;
        }
        let read = chunk.len();
        let (format, splitter) = split.get_or_insert_with(|| {
            let format = chunk
                .first()
                .map_or(WireFormat::Json, |b| WireFormat::of_body(*b));
            (format, splitter(format))
        });
        splitter
            .feed(chunk, &mut |piece| on(*format, piece))
            .map_err(|e| not_a_list(resource, e))?;
        body.as_mut().consume(read);
    }
    split
        .map_or_else(|| splitter(WireFormat::Json), |(_, found)| found)
        .finish()
        .map_err(|e| not_a_list(resource, e))
}

fn not_a_list(resource: &'static str, e: Malformed) -> ListError {
    ListError::Problem(ListProblem::NotAList {
        resource,
        why: e.to_string(),
    })
}

/// A read of the cluster that failed: refused or failed by the API server, or not a list.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error(transparent)]
    Request(#[from] RequestError),
    #[error(transparent)]
    Problem(#[from] ListProblem),
}

impl ListError {
    /// The API server's answer, when it refused or failed the list with one.
    pub(crate) fn status(&self) -> Option<&kube::core::Status> {
        match self {
            ListError::Request(RequestError { source, .. }) => match &**source {
                kube::Error::Api(status) => Some(status),
                _ => None,
            },
            ListError::Problem(_) => None,
        }
    }
}

/// The API server refused or failed a request; the message says what to do next, for the
/// kubeconfig context it was made with when known.
#[derive(Debug, thiserror::Error)]
#[error("{}", super::explain(source, verb, resource, scope, context.as_deref()))]
pub struct RequestError {
    pub verb: &'static str,
    pub resource: &'static str,
    pub scope: Scope,
    #[source]
    pub source: Box<kube::Error>,
    pub context: Option<Box<str>>,
}

impl RequestError {
    /// Made with the kubeconfig context `name`: a permission it names is checked for that
    /// context's identity.
    pub fn in_context(mut self, name: &str) -> RequestError {
        self.context.get_or_insert_with(|| name.into());
        self
    }
}

/// A list that could not be read as one.
#[derive(Debug, thiserror::Error)]
pub enum ListProblem {
    #[error("a list page was lost: {0}")]
    PageLost(String),
    #[error("cannot build the list request: {0}")]
    Request(String),
    #[error("the list of {resource} from the API server cannot be read: {why}")]
    NotAList { resource: &'static str, why: String },
}

fn parse_meta(bytes: &[u8], format: WireFormat) -> PageMeta {
    let parsed = match format {
        WireFormat::Json => serde_json::from_slice(bytes).map_err(|e| e.to_string()),
        WireFormat::Protobuf => list_meta(bytes).map_err(|e| e.to_string()),
    };
    parsed.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the list's metadata does not decode");
        PageMeta::default()
    })
}

fn decode_item<K: Kind>(
    item: &[u8],
    format: WireFormat,
    decoder: &mut K::Decoder,
    listed: &mut Listed<K::Record>,
) {
    let decoded = match format {
        WireFormat::Json => serde_json::from_slice(item).map_err(|e| e.to_string()),
        WireFormat::Protobuf => K::from_proto(item).map_err(|e| e.to_string()),
    };
    match decoded {
        Ok(wire) => listed.items.push(K::record(wire, decoder)),
        Err(e) => {
            let text = String::from_utf8_lossy(item);
            let what = K::RESOURCE;
            tracing::warn!(error = %e, "skipping one of the {what} that does not decode: {}", excerpt(&text));
        }
    }
}

fn excerpt(json: &str) -> &str {
    let end = json.char_indices().nth(160).map_or(json.len(), |(i, _)| i);
    &json[..end]
}
