//! The clusters a command works on: real ones from kubeconfig, or the simulated one.

use crate::Result;
use crate::cli::GlobalArgs;
use crate::cluster::{Cluster, ConnectOptions, Deadlines, Scope, connect};
use crate::config::Config;

/// Connected clusters; keeps the simulated server alive as long as it is needed.
pub struct Targets {
    pub clusters: Vec<Cluster>,
    pub scopes: Vec<Scope>,
    _demo: Option<crate::sim::demo::Demo>,
}

/// The clusters named on the command line, each reached within the config's deadlines.
pub async fn open_targets(global: &GlobalArgs, config: &Config) -> Result<Targets> {
    let deadlines = Deadlines::from_config(&config.cluster)?;
    let scopes = if global.all_namespaces {
        vec![Scope::All]
    } else {
        Scope::from_namespaces(&global.namespace)
    };
    if global.demo {
        let demo = crate::sim::demo::start().await?;
        let cluster = Cluster {
            name: "demo".into(),
            client: demo.client(),
        };
        return Ok(Targets {
            clusters: vec![cluster],
            scopes,
            _demo: Some(demo),
        });
    }
    let contexts: Vec<Option<String>> = if global.context.is_empty() {
        vec![None]
    } else {
        global.context.iter().cloned().map(Some).collect()
    };
    let mut clusters = Vec::new();
    for context in contexts {
        let options = ConnectOptions {
            kubeconfig: global.kubeconfig.clone(),
            context,
            deadlines,
        };
        clusters.push(connect(&options).await?);
    }
    Ok(Targets {
        clusters,
        scopes,
        _demo: None,
    })
}
