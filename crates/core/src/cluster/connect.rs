//! Building a client from kubeconfig, a context, or the in-cluster service account.

use std::path::PathBuf;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};
use kube::{Client, Config};

use super::{Deadlines, causes, client_with_deadlines};

use crate::{Error, Result};

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
    pub name: String,
    pub client: Client,
}

/// Build the client and prove the cluster answers, or say what to do.
pub async fn connect(options: &ConnectOptions) -> Result<Cluster> {
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
        Ok(Err(e)) => {
            return Err(Error::Cluster(format!(
                "{name} ({url}): building the client failed: {e}"
            )));
        }
        Err(_) => {
            return Err(Error::Cluster(format!(
                "{name} ({url}): the client was not ready within {}s: a credential plugin \
                 (`exec` in the kubeconfig) may be waiting for a login or hanging. Run \
                 `kubectl --context {name} version` to see it, then try again",
                deadlines.connect.as_secs_f64()
            )));
        }
    };
    match tokio::time::timeout(Duration::from_secs(15), client.apiserver_version()).await {
        Ok(Ok(_)) => Ok(Cluster { name, client }),
        Ok(Err(e)) => Err(Error::Cluster(format!(
            "{name} ({url}) did not answer: {}. Check it with `kubectl --context {name} version`, or try `--demo`.",
            causes(&e)
        ))),
        Err(_) => Err(Error::Cluster(format!(
            "{name} ({url}) did not answer within 15 s. Check the network or VPN, or try `--demo`."
        ))),
    }
}

async fn load_config(options: &ConnectOptions) -> Result<(String, Config)> {
    let kube_options = KubeConfigOptions {
        context: options.context.clone(),
        ..Default::default()
    };
    // Read the kubeconfig once: the named file, else $KUBECONFIG or ~/.kube/config.
    let (file, origin) = match &options.kubeconfig {
        Some(path) => {
            let file = Kubeconfig::read_from(path).map_err(|e| {
                Error::Cluster(format!(
                    "cannot read kubeconfig {}: {}",
                    path.display(),
                    unquoted(&e)
                ))
            })?;
            (Some(file), path.display().to_string())
        }
        None => match Kubeconfig::read() {
            Ok(file) => (Some(file), "($KUBECONFIG or ~/.kube/config)".to_string()),
            Err(e) if options.context.is_some() => {
                return Err(Error::Cluster(format!(
                    "cannot read kubeconfig ($KUBECONFIG or ~/.kube/config): {}",
                    unquoted(&e)
                )));
            }
            Err(_) => (None, String::new()),
        },
    };
    if let Some(file) = file {
        let name = context_name(&file, options);
        if options.context.is_some() && !file.contexts.iter().any(|c| c.name == name) {
            let known: Vec<&str> = file.contexts.iter().map(|c| c.name.as_str()).collect();
            return Err(Error::Cluster(format!(
                "no context {name:?} in kubeconfig {origin}; the contexts there are: {}. Pass one with --context.",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
        let config = Config::from_custom_kubeconfig(file, &kube_options)
            .await
            .map_err(|e| Error::Cluster(format!("kubeconfig {origin}: {}", unquoted(&e))))?;
        return Ok((name, config));
    }
    let config = Config::incluster().map_err(|e| {
        Error::Cluster(format!(
            "no kubeconfig found ($KUBECONFIG, ~/.kube/config) and not running in a cluster ({e}). \
             Pass --kubeconfig FILE, or try --demo for the built-in simulated cluster."
        ))
    })?;
    Ok(("in-cluster".to_string(), config))
}

fn context_name(file: &Kubeconfig, options: &ConnectOptions) -> String {
    options
        .context
        .clone()
        .or_else(|| file.current_context.clone())
        .unwrap_or_else(|| "default".to_string())
}

/// A kubeconfig error that cannot leak a credential. The YAML parser's message quotes the
/// lines around the error, and a type mismatch quotes the value: either may be a bearer token
/// or a client key. Only the position is kept.
fn unquoted(e: &KubeconfigError) -> String {
    match e {
        KubeconfigError::Parse(parse) => {
            let at = parse
                .location()
                .map(|l| format!(" at line {}, column {}", l.line(), l.column()))
                .unwrap_or_default();
            format!(
                "it is not valid kubeconfig YAML{at} (the parser's message is not shown: it quotes \
                 the file, credentials included). `kubectl config view --kubeconfig FILE` shows \
                 the file with its credentials redacted"
            )
        }
        other => other.to_string(),
    }
}
