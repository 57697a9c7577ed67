//! What the shell completions ask the binary, before any command line is parsed. A completion
//! never prints an error, and never waits long.

use std::process::ExitCode;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::ListParams;
use opc_core::cluster::{ConnectOptions, Deadlines, connect, is_dns_label};

/// `ops-pod-cleaner __contexts`: the kubeconfig's contexts ($KUBECONFIG, else ~/.kube/config).
pub const CONTEXTS: &str = "__contexts";
/// `ops-pod-cleaner __namespaces [CONTEXT]`: that context's namespaces (else the current's).
pub const NAMESPACES: &str = "__namespaces";

/// A shell waits for the answer: the cluster gets this long, in all.
const PATIENCE: Duration = Duration::from_secs(5);

/// The answer, when `args` (the process's) are a completion's question.
pub fn answer(args: &[String]) -> Option<ExitCode> {
    if let Some((argv0, words)) = args.split_first()
        && super::plugin_completion::is_completer(argv0.as_ref())
    {
        return Some(written(&super::plugin_completion::answer(
            words, namespaces,
        )));
    }
    let names = match args.get(1).map(String::as_str) {
        Some(CONTEXTS) => super::targets::kubeconfig_contexts(None).unwrap_or_default(),
        Some(NAMESPACES) => namespaces(args.get(2).cloned()),
        _ => return None,
    };
    let listed: String = names.iter().map(|name| format!("{name}\n")).collect();
    Some(written(&listed))
}

fn written(answer: &str) -> ExitCode {
    match super::out(answer) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(super::EXIT_RUNTIME),
    }
}

/// The namespaces `context`'s identity may list; none when it may not, or the cluster does
/// not answer within [`PATIENCE`].
fn namespaces(context: Option<String>) -> Vec<String> {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    let options = ConnectOptions {
        kubeconfig: None,
        context,
        deadlines: Deadlines {
            connect: PATIENCE,
            request: PATIENCE,
        },
    };
    let listing = async {
        let cluster = connect(&options).await.ok()?;
        let api: Api<Namespace> = Api::all(cluster.client);
        let list = api.list_metadata(&ListParams::default()).await.ok()?;
        Some(
            list.items
                .into_iter()
                .filter_map(|n| n.metadata.name)
                // Typed into the user's shell: only what a real server can name.
                .filter(|name| is_dns_label(name))
                .collect(),
        )
    };
    let names = runtime.block_on(async { tokio::time::timeout(PATIENCE, listing).await });
    // A credential plugin still running must not hold the shell.
    runtime.shutdown_background();
    names.ok().flatten().unwrap_or_default()
}
