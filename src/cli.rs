//! The command line: its commands, flags and environment variables, parsed by clap.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use opc_core::policy::Flags;

/// What `--version` says about this build, e.g. `0.1.0 (commit 1d486c3, built 2026-11-25,
/// features: demo)` (clap prefixes the name); `build.rs` fills in the commit, date and features.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("OPC_BUILD_COMMIT"),
    ", built ",
    env!("OPC_BUILD_DATE"),
    ", features: ",
    env!("OPC_BUILD_FEATURES"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "ops-pod-cleaner",
    version = VERSION,
    about = "Find abnormal Kubernetes pods and clean them up safely",
    after_help = "With no command it opens the terminal UI on the chosen contexts \
                  (press ? there for its keys; try it with --demo)."
)]
pub struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// The process's arguments, parsed; clap prints help or an error and exits on its own.
    /// Run as a kubectl plugin, usage lines name the command the user typed.
    pub fn from_process_args() -> Self {
        let mut command = Cli::command_named(invoked_as());
        let matches = command.get_matches_mut();
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut command).exit())
    }

    /// The command line, every usage line beginning with `bin`. Commands that read none of the
    /// global flags list none: clap would list every global flag under every command.
    pub fn command_named(bin: &str) -> clap::Command {
        let flagless = |command: clap::Command, template: &'static str, args: &str| {
            let usage = format!("{bin} {} {args}", command.get_name());
            command
                .help_template(template)
                .override_usage(usage.trim_end().to_string())
        };
        Cli::command()
            .bin_name(bin)
            .mut_subcommand("check-config", |c| flagless(c, WITH_ARGUMENTS, "[FILE]"))
            .mut_subcommand("default-config", |c| flagless(c, NO_FLAGS, ""))
            .mut_subcommand("completions", |c| flagless(c, WITH_ARGUMENTS, "<SHELL>"))
            .mut_subcommand("manpage", |c| flagless(c, NO_FLAGS, ""))
    }

    /// How log lines are written on stderr (only `headless` offers JSON).
    pub fn log_format(&self) -> LogFormat {
        match &self.command {
            Some(Command::Headless(args)) => args.log_format,
            _ => LogFormat::Text,
        }
    }
}

#[derive(Debug, Clone, Default, Args)]
pub(crate) struct GlobalArgs {
    /// Config file (default: $OPS_POD_CLEANER_CONFIG, ./config.yml, ./config.yaml, the user config dir, built-in)
    #[arg(long, global = true, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub(crate) config: Option<PathBuf>,
    /// Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)
    #[arg(long, global = true, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Kubeconfig context; repeat to cover several clusters (with --demo: demo-eu, demo-us)
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) context: Vec<String>,
    /// Every context in the kubeconfig (with --demo: both demo clusters)
    #[arg(long, global = true, conflicts_with = "context")]
    pub(crate) all_contexts: bool,
    /// Namespace to watch; repeatable (default: all namespaces)
    #[arg(short = 'n', long, global = true, value_name = "NS")]
    pub(crate) namespace: Vec<String>,
    /// Watch all namespaces (the default when no -n is given)
    #[arg(short = 'A', long, global = true, conflicts_with = "namespace")]
    pub(crate) all_namespaces: bool,
    /// Act on nothing; log what would be done
    #[arg(long, global = true)]
    pub(crate) dry_run: bool,
    /// No actions at all
    #[arg(long, global = true)]
    pub(crate) readonly: bool,
    /// Act even without a writable audit log (shown as a NO-AUDIT badge)
    #[arg(long, global = true)]
    pub(crate) no_audit: bool,
    /// Use the built-in simulated cluster instead of a real one
    #[arg(long, global = true)]
    pub(crate) demo: bool,
    /// Where the screen reads each cluster's findings: auto (its in-cluster worker through
    /// the API server's service proxy, else a watch), worker, or watch (default: the config's
    /// cluster.source and cluster.sourceByContext)
    #[arg(long, global = true, value_name = "SOURCE", value_parser = source_parser())]
    pub(crate) source: Option<opc_core::config::Source>,
}

/// `--source`'s values, named so help and every shell's completion offer them.
fn source_parser() -> impl clap::builder::TypedValueParser<Value = opc_core::config::Source> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(opc_core::config::Source::NAMES)
        .try_map(|name| name.parse::<opc_core::config::Source>())
}

impl GlobalArgs {
    /// The switches the policy takes from the command line.
    pub(crate) fn flags(&self) -> Flags {
        Flags {
            dry_run: self.dry_run,
            readonly: self.readonly,
            no_audit: self.no_audit,
        }
    }
}

/// The help of a command that reads none of the global flags (see [`Cli::command_named`]).
const NO_FLAGS: &str = "{about-with-newline}\n{usage-heading} {usage}\n";
/// [`NO_FLAGS`], for a command with arguments.
const WITH_ARGUMENTS: &str =
    "{about-with-newline}\n{usage-heading} {usage}\n\nArguments:\n{positionals}\n";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// One look: abnormal pods by category. Exit 0 when none, 1 when some are found
    Scan {
        #[arg(long, short = 'o', value_enum, default_value_t = ScanOutput::Table)]
        output: ScanOutput,
        /// Instead of abnormal pods: the workloads ops-pod-cleaner scaled to zero, when, why,
        /// and the replicas undo restores. Exit 0 when none, 1 when some are parked
        #[arg(long)]
        parked: bool,
    },
    /// One-shot restart report on stdout; --send also delivers it to the configured sinks
    /// (exit 3 when a sink failed and the report was spooled for later)
    Report {
        #[arg(long, short = 'o', value_enum, default_value_t = ReportOutput::Markdown)]
        output: ReportOutput,
        /// Also deliver the report to the sinks of the config (report.sinks)
        #[arg(long)]
        send: bool,
    },
    /// No UI: auto-clean worker (master auto on; per-rule toggles from config), scheduled
    /// reports, /metrics and /healthz, leader election through a Lease
    Headless(HeadlessArgs),
    /// Validate a config file and print the effective rules; exit 2 when it is invalid
    CheckConfig {
        /// The config file to check (default: --config, then where every command looks)
        #[arg(value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
        file: Option<PathBuf>,
    },
    /// Print the built-in config, every key at its default with what it does: a start for your
    /// own, e.g. `ops-pod-cleaner default-config > config.yaml`
    DefaultConfig,
    /// Print the shell completion script, e.g. `source <(ops-pod-cleaner completions bash)`
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `ops-pod-cleaner manpage > ops-pod-cleaner.1`
    Manpage,
}

// No doc comment: clap would take it for the command's about.
#[derive(Debug, Args)]
pub struct HeadlessArgs {
    /// Run one worker pass and exit (for CronJobs)
    #[arg(long)]
    pub(crate) once: bool,
    /// Where /metrics, /healthz and /readyz listen (loopback unless told otherwise; the
    /// StatefulSet passes 0.0.0.0:9090)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9090")]
    pub(crate) listen: std::net::SocketAddr,
    /// Where the findings (/v1/, every namespace's abnormal pods) listen for screens that
    /// read them through the API server's service proxy (the StatefulSet passes
    /// 0.0.0.0:9091; its NetworkPolicy admits only the API server there)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9091")]
    pub(crate) findings_listen: std::net::SocketAddr,
    /// With --once: also build and deliver the restart report
    #[arg(long)]
    pub(crate) send: bool,
    /// Log lines on stderr as plain text, or one JSON object per line for log shippers
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScanOutput {
    Table,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportOutput {
    Markdown,
    Json,
}

/// The name its messages begin with: the command as the user typed it.
pub fn invoked_as() -> &'static str {
    std::env::args_os()
        .next()
        .as_deref()
        .and_then(plugin_invocation)
        .unwrap_or("ops-pod-cleaner")
}

/// How the user typed the command when krew's link `kubectl-pod_cleaner` (`.exe` on Windows)
/// runs it: `kubectl pod-cleaner`.
fn plugin_invocation(argv0: &OsStr) -> Option<&'static str> {
    let stem = Path::new(argv0).file_stem()?;
    (stem == "kubectl-pod_cleaner").then_some("kubectl pod-cleaner")
}
