//! The clusters a command works on: real ones from kubeconfig, or the simulated ones.

use std::path::Path;

use futures::future::try_join_all;
use kube::config::Kubeconfig;

use super::demo;
use crate::Result;
use crate::cli::GlobalArgs;
use opc_core::cluster::{Cluster, ConnectOptions, Deadlines, Scope, connect};
use opc_core::config::Config;
use opc_core::{OnePick, Usage};

/// Connected clusters; keeps the simulated servers alive as long as they are needed.
pub(crate) struct Targets {
    pub(crate) clusters: Vec<Cluster>,
    pub(crate) scopes: Vec<Scope>,
    _demos: Vec<demo::Running>,
}

/// What the command line names, before anything is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// Demo clusters by name, each one of [`demo::contexts`].
    Demo(Vec<String>),
    /// Kubeconfig contexts; `None` is the current context (or in-cluster).
    Kubeconfig(Vec<Option<String>>),
}

impl Wanted {
    /// `--demo` opens both demo clusters unless `--context` picks; `--all-contexts` is every
    /// context of the kubeconfig (both demo clusters under `--demo`).
    pub(crate) fn from_args(global: &GlobalArgs) -> Wanted {
        if global.demo {
            // Unknown names are refused when they are started, with the list of the two.
            return Wanted::Demo(match global.context.is_empty() {
                true => demo::contexts(),
                false => once_each(&global.context),
            });
        }
        let all = match global.all_contexts {
            // Read errors are left to `connect`, which reports them without quoting the file
            // (it may hold credentials).
            true => kubeconfig_contexts(global.kubeconfig.as_deref()).unwrap_or_default(),
            false => Vec::new(),
        };
        if !all.is_empty() {
            return Wanted::Kubeconfig(all.into_iter().map(Some).collect());
        }
        // No --context, or no kubeconfig to read: the current context, which is in-cluster or
        // an error that says what to do.
        Wanted::Kubeconfig(match global.context.is_empty() {
            true => vec![None],
            false => once_each(&global.context).into_iter().map(Some).collect(),
        })
    }

    pub(crate) fn count(&self) -> usize {
        match self {
            Wanted::Demo(names) => names.len(),
            Wanted::Kubeconfig(contexts) => contexts.len(),
        }
    }
}

/// `names` in order, a name given twice kept once.
fn once_each(names: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    names.iter().filter(|n| seen.insert(*n)).cloned().collect()
}

/// The names of every context in the kubeconfig (`path`, else the default one), in file order.
pub(crate) fn kubeconfig_contexts(
    path: Option<&Path>,
) -> std::result::Result<Vec<String>, kube::config::KubeconfigError> {
    let file = match path {
        Some(path) => Kubeconfig::read_from(path),
        None => Kubeconfig::read(),
    }?;
    Ok(file.contexts.into_iter().map(|c| c.name).collect())
}

/// The clusters named on the command line, each reached within the config's deadlines.
pub(crate) async fn open_targets(global: &GlobalArgs, config: &Config) -> Result<Targets> {
    open_wanted(global, config, Wanted::from_args(global)).await
}

/// Exactly one cluster (for `headless`); `command` is named in the refusal.
pub(crate) async fn open_one(
    global: &GlobalArgs,
    config: &Config,
    command: &'static str,
) -> Result<Targets> {
    let mut wanted = Wanted::from_args(global);
    // `--demo` alone is the natural first try: run on the first demo cluster, and say so.
    if let Wanted::Demo(names) = &mut wanted
        && global.context.is_empty()
        && !global.all_contexts
        && names.len() > 1
    {
        let others = names.split_off(1).join(", ");
        tracing::warn!(
            target: opc_core::actions::ACTION_LOG,
            "{command} runs on one cluster: demo cluster {} (pass --context {others} for the other)",
            names.join("")
        );
    }
    if wanted.count() != 1 {
        let pick = match &wanted {
            Wanted::Demo(_) => OnePick::Demo(demo::CONTEXTS.to_vec()),
            Wanted::Kubeconfig(_) => OnePick::Kubeconfig,
        };
        return Err(Usage::OneCluster {
            command,
            named: wanted.count(),
            pick,
        }
        .into());
    }
    open_wanted(global, config, wanted).await
}

async fn open_wanted(global: &GlobalArgs, config: &Config, wanted: Wanted) -> Result<Targets> {
    let deadlines = Deadlines::from_config(&config.cluster)?;
    let scopes = if global.all_namespaces {
        vec![Scope::All]
    } else {
        Scope::from_namespaces(&global.namespace)
    };
    let (clusters, demos) = match wanted {
        Wanted::Demo(names) => demo::start(&names, deadlines).await?,
        // Reached at once: several clusters cost the slowest one's answer, not their sum.
        Wanted::Kubeconfig(contexts) => {
            let options: Vec<ConnectOptions> = contexts
                .into_iter()
                .map(|context| ConnectOptions {
                    kubeconfig: global.kubeconfig.clone(),
                    context,
                    deadlines,
                })
                .collect();
            (try_join_all(options.iter().map(connect)).await?, Vec::new())
        }
    };
    Ok(Targets {
        clusters,
        scopes,
        _demos: demos,
    })
}
