//! Two ways to keep the cache current, each run alone in a child process so its CPU and memory
//! are its own: our watch loop (`spawn_watches`), and kube-runtime's `watcher` over the same
//! compact decode, feeding the same cache. Also two checks of how each
//! behaves where a real cluster differs from the bench server's happy path.

use std::time::{Duration, Instant};

use chrono::Utc;
use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::NamespaceResourceScope;
use kube::{Api, Client, Resource};
use kube_runtime::WatchStreamExt;
use kube_runtime::watcher::{self, Event, watcher};
use opc_core::cluster::{Cache, Scope, WatchSettings, list_pods, spawn_watches};
use opc_core::pod::{Interner, WirePod};
use serde::{Deserialize, Deserializer};

/// Set in a child's environment: which loop it runs.
pub const CHILD: &str = "CHURN_WATCH_LOOP";
/// Set in a child's environment: the bench server's URL.
pub const URL: &str = "CHURN_WATCH_URL";

#[derive(Clone, Copy, PartialEq)]
pub enum Loop {
    /// `spawn_watches`: what the product runs.
    Ours,
    /// `kube_runtime::watcher` paging at `resourceVersion=0` (`any_semantic`), 500 a page.
    Runtime,
}

impl Loop {
    pub fn name(self) -> &'static str {
        match self {
            Loop::Ours => "watch-ours",
            Loop::Runtime => "watch-runtime",
        }
    }

    pub fn from_name(name: &str) -> Option<Loop> {
        [Loop::Ours, Loop::Runtime]
            .into_iter()
            .find(|l| l.name() == name)
    }
}

/// A pod as our wire decode keeps it, with the one field of `ObjectMeta` the watcher reads
/// (the resourceVersion it resumes from), so kube-runtime can carry it.
#[derive(Clone, Debug)]
pub struct CompactPod {
    meta: ObjectMeta,
    pod: WirePod,
}

impl<'de> Deserialize<'de> for CompactPod {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let pod = WirePod::deserialize(d)?;
        let meta = ObjectMeta {
            resource_version: Some(pod.metadata.resource_version.clone()),
            ..ObjectMeta::default()
        };
        Ok(CompactPod { meta, pod })
    }
}

impl Resource for CompactPod {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> std::borrow::Cow<'_, str> {
        "Pod".into()
    }
    fn group(_: &()) -> std::borrow::Cow<'_, str> {
        "".into()
    }
    fn version(_: &()) -> std::borrow::Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> std::borrow::Cow<'_, str> {
        "pods".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.meta
    }
}

fn client(url: &str) -> Client {
    let config = kube::Config::new(url.parse().expect("the bench server's URL"));
    Client::try_from(config).expect("a client")
}

/// The child's whole life: keep a cache of every pod current until killed.
pub async fn run_child(which: Loop, url: &str) {
    let client = client(url);
    let cache = Cache::new();
    match which {
        Loop::Ours => {
            spawn_watches(&client, &[Scope::All], &cache, &WatchSettings::default());
            std::future::pending::<()>().await;
        }
        Loop::Runtime => {
            let config = watcher::Config::default().any_semantic().page_size(500);
            feed(watcher(Api::all(client), config).default_backoff(), &cache).await;
        }
    }
}

/// A watcher's events into the cache, as the product would take them: a list is gathered
/// (already compact) and swapped in whole when done.
async fn feed(
    events: impl futures::Stream<Item = watcher::Result<Event<CompactPod>>>,
    cache: &Cache,
) {
    let mut events = std::pin::pin!(events);
    let mut interner = Interner::default();
    let mut listed = Vec::new();
    while let Some(event) = events.next().await {
        match event {
            Ok(Event::Init) => listed.clear(),
            Ok(Event::InitApply(p)) => listed.push(p.pod.into_record(&mut interner)),
            Ok(Event::InitDone) => {
                cache.replace_scope(&Scope::All, std::mem::take(&mut listed), Utc::now());
                interner = Interner::default();
            }
            Ok(Event::Apply(p)) => cache.upsert(p.pod, Utc::now()),
            Ok(Event::Delete(p)) => cache.remove(&p.pod.metadata.uid),
            Err(e) => eprintln!("watcher: {e}"),
        }
    }
}

/// What a watcher said in `window`: list starts, completed lists, errors (and the first).
#[derive(Default)]
pub struct Heard {
    pub inits: u32,
    pub done: u32,
    pub errors: u32,
    pub first_error: Option<String>,
}

impl std::fmt::Display for Heard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} list starts, {} complete, {} errors (first: {})",
            self.inits,
            self.done,
            self.errors,
            self.first_error.as_deref().unwrap_or("none")
        )
    }
}

/// kube-runtime's watcher on `url` for `window`, with `config`, counting what it says.
pub async fn listen(url: &str, config: watcher::Config, window: Duration) -> Heard {
    let mut heard = Heard::default();
    let events = watcher(Api::<CompactPod>::all(client(url)), config).default_backoff();
    let mut events = std::pin::pin!(events);
    let until = tokio::time::Instant::now() + window;
    while let Ok(Some(event)) = tokio::time::timeout_at(until, events.next()).await {
        match event {
            Ok(Event::Init) => heard.inits += 1,
            Ok(Event::InitDone) => heard.done += 1,
            Ok(_) => {}
            Err(e) => {
                heard.errors += 1;
                heard.first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
    heard
}

/// Our list on `url`: how many pods it kept and how long it took.
pub async fn our_list(url: &str) -> Result<(usize, Duration), String> {
    let start = Instant::now();
    let listed = list_pods(
        &client(url),
        &Scope::All,
        500,
        opc_core::config::WireFormat::default(),
    )
    .await
    .map_err(|e| e.to_string())?;
    Ok((listed.pods.len(), start.elapsed()))
}
