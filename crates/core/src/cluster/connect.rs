//! Building a client from kubeconfig, a context, or the in-cluster service account.

use std::path::PathBuf;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use super::connect_error::{ConnectError, FIRST_ANSWER, KubeconfigStep, Origin};
use super::name::ClusterName;
use super::{Deadlines, client_with_deadlines};

#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// How long a connection and a request may take (watches excepted).
    pub deadlines: Deadlines,
}

/// A reachable cluster and the name it goes by on screen and in output.
#[derive(Clone)]
pub struct Cluster {
    pub name: ClusterName,
    pub client: Client,
}

/// Build the client and prove the cluster answers, or say what to do.
pub async fn connect(options: &ConnectOptions) -> Result<Cluster, ConnectError> {
    let (name, mut config) = load_config(options).await?;
    // kube retries 429/5xx on its own by default; our actions and watch loop decide retries
    // themselves (honouring Retry-After, giving up when a budget forbids), so only one layer does.
    config.default_retry = false;
    let url = config.cluster_url.to_string();
    // Building the client runs a kubeconfig's credential plugin (exec) and waits for it: off
    // the runtime's threads, and not for ever (a plugin waiting for a login would freeze the
    // screen). A plugin still running then is left to finish on its own.
    let deadlines = options.deadlines;
    let building = tokio::task::spawn_blocking(move || client_with_deadlines(config, deadlines));
    let client = match tokio::time::timeout(deadlines.connect, building).await {
        Ok(Ok(built)) => built?,
        Ok(Err(source)) => {
            return Err(ConnectError::Building {
                cluster: name,
                url,
                source,
            });
        }
        Err(_) => {
            return Err(ConnectError::NotReady {
                cluster: name,
                url,
                after: deadlines.connect,
            });
        }
    };
    match tokio::time::timeout(FIRST_ANSWER, client.apiserver_version()).await {
        Ok(Ok(_)) => Ok(Cluster { name, client }),
        Ok(Err(source)) => Err(ConnectError::NoAnswer {
            cluster: name,
            url,
            source,
        }),
        Err(_) => Err(ConnectError::Silent { cluster: name, url }),
    }
}

async fn load_config(options: &ConnectOptions) -> Result<(ClusterName, Config), ConnectError> {
    let kube_options = KubeConfigOptions {
        context: options.context.clone(),
        ..Default::default()
    };
    let unusable = |what, origin, error| ConnectError::Kubeconfig {
        what,
        origin,
        error,
    };
    // Read the kubeconfig once: the named file, else $KUBECONFIG or ~/.kube/config.
    let (file, origin) = match &options.kubeconfig {
        Some(path) => {
            let origin = Origin::File(path.clone());
            let file = Kubeconfig::read_from(path)
                .map_err(|e| unusable(KubeconfigStep::Read, origin.clone(), e))?;
            (Some(file), origin)
        }
        None => match Kubeconfig::read() {
            Ok(file) => (Some(file), Origin::Default),
            Err(e) if options.context.is_some() => {
                return Err(unusable(KubeconfigStep::Read, Origin::Default, e));
            }
            Err(_) => (None, Origin::Default),
        },
    };
    if let Some(file) = file {
        let name = (options.context.clone())
            .or_else(|| file.current_context.clone())
            .unwrap_or_else(|| "default".to_string());
        if options.context.is_some() && !file.contexts.iter().any(|c| c.name == name) {
            let known = file.contexts.iter().map(|c| c.name.clone()).collect();
            return Err(ConnectError::NoContext {
                name,
                origin,
                known,
            });
        }
        let config = Config::from_custom_kubeconfig(file, &kube_options)
            .await
            .map_err(|e| unusable(KubeconfigStep::Use, origin, e))?;
        return Ok((ClusterName::new(&name), config));
    }
    let config = Config::incluster().map_err(|source| ConnectError::Nowhere { source })?;
    Ok((ClusterName::new(ClusterName::IN_CLUSTER), config))
}
