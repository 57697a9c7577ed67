//! What each command does, between the parsed command line and the library.

pub mod completion;
mod demo;
mod headless;
mod manuals;
mod plugin_completion;
mod report;
mod scan;
mod targets;
mod tui;

use std::path::PathBuf;
use std::process::ExitCode;

use crate::Error;
use crate::cli::{Cli, Command, GlobalArgs};
use opc_core::clock::Clock;
use opc_core::cluster::ConnectError;
use opc_core::config::{Config, ConfigError, LoadError, Problem};

pub(crate) use targets::{Targets, open_targets};

/// Exit codes beyond 0 (nothing found) and 1 (abnormal pods found).
pub const EXIT_CONFIG: u8 = 2;
pub const EXIT_RUNTIME: u8 = 3;

pub async fn run(cli: Cli, clock: Clock) -> ExitCode {
    let result = match cli.command {
        Some(Command::CheckConfig { file }) => match cluster_flag(&cli.global) {
            Some(flag) => Err(opc_core::Usage::ClusterFlagWithCheckConfig { flag }.into()),
            None => check_config(file, cli.global.config.clone()),
        },
        Some(Command::Scan { output, parked }) => {
            scan::run(&cli.global, output, parked, clock).await
        }
        Some(Command::Report { output, send }) => {
            report::run(&cli.global, output, send, clock).await
        }
        Some(Command::Headless(mode)) => headless::run(&cli.global, mode, clock).await,
        Some(Command::Completions { shell }) => manuals::completions(shell),
        Some(Command::Manpage) => manuals::manpage(),
        Some(Command::DefaultConfig) => {
            out(opc_core::config::DEFAULT_YAML).map(|()| ExitCode::SUCCESS)
        }
        None => tui::run(&cli.global, clock).await,
    };
    result.unwrap_or_else(|e| {
        eprintln!("{}: {e}", crate::cli::invoked_as());
        ExitCode::from(exit_code(&e))
    })
}

/// 2 when the user can fix the config or the command line, 3 for anything that went wrong
/// while running. No wildcard: a new variant must choose.
pub fn exit_code(error: &Error) -> u8 {
    match error {
        Error::Listen { .. } => EXIT_CONFIG,
        Error::Terminal { .. } | Error::DemoStart { .. } => EXIT_RUNTIME,
        Error::Core(core) => core_exit_code(core),
    }
}

fn core_exit_code(error: &opc_core::Error) -> u8 {
    use opc_core::Error;
    match error {
        Error::Config(_) | Error::Usage(_) => EXIT_CONFIG,
        // A context the kubeconfig does not have is the command line's to fix.
        Error::Connect(ConnectError::NoContext { .. }) => EXIT_CONFIG,
        Error::Io { .. }
        | Error::UnsafeFile { .. }
        | Error::HttpClient(_)
        | Error::Encode(_)
        | Error::Connect(_)
        | Error::NotSynced { .. }
        | Error::Kubeconfig(_)
        | Error::Request(_)
        | Error::Read { .. }
        | Error::List(_)
        | Error::Lease { .. }
        | Error::NoSuchNamespace(_)
        | Error::Kube(_) => EXIT_RUNTIME,
    }
}

/// The config a command runs with. Under `--demo` the audit log is `demo-audit.jsonl` beside
/// the configured one: the simulated clusters' record never mixes with real ones'.
pub(crate) fn load_config(global: &GlobalArgs) -> crate::Result<Config> {
    let mut config = Config::load(global.config.as_deref())?;
    if global.demo {
        let path = &config.audit.path;
        let name = path
            .file_name()
            .map_or("audit.jsonl".into(), |n| n.to_string_lossy().into_owned());
        config.audit.path = path.with_file_name(format!("demo-{name}"));
    }
    Ok(config)
}

/// The first flag that picks a cluster, if any was given.
fn cluster_flag(global: &GlobalArgs) -> Option<&'static str> {
    [
        (!global.context.is_empty(), "--context"),
        (global.all_contexts, "--all-contexts"),
        (global.kubeconfig.is_some(), "--kubeconfig"),
        (!global.namespace.is_empty(), "--namespace"),
        (global.demo, "--demo"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

/// The file named, else the one `--config` names, else the one every command would find.
fn check_config(file: Option<PathBuf>, flag: Option<PathBuf>) -> crate::Result<ExitCode> {
    let file = match (file, flag) {
        (Some(file), Some(flag)) if file != flag => {
            let (file, flag) = (file.display().to_string(), flag.display().to_string());
            return Err(opc_core::Usage::TwoConfigFiles(file, flag).into());
        }
        (file, flag) => file.or(flag),
    };
    let loaded = match &file {
        Some(file) => Config::load_file(file),
        None => Config::load(None),
    };
    let config = loaded.map_err(|e| match e {
        LoadError::Io { path, source, .. } => {
            ConfigError::of_file(path.display(), Problem::Unreadable(source.to_string()))
        }
        LoadError::Invalid(invalid) => invalid,
    })?;
    out(&config.describe())?;
    Ok(ExitCode::SUCCESS)
}

/// The command's output on stdout. A reader that went away (`| head -1`) ends it quietly: the
/// command goes on to its usual exit status; any other failure to write is an error.
pub(crate) fn out(text: &str) -> crate::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(opc_core::Error::Io {
            path: "standard output".into(),
            op: opc_core::error::IoOp::Write,
            source: e,
        }
        .into()),
        _ => Ok(()),
    }
}
