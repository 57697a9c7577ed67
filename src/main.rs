//! Wiring only: parse the command line, set up logging and the runtime, run the command.

mod allocator;

use std::process::ExitCode;

use opc_core::actions::ACTION_LOG;
use opc_core::clock::Clock;
use ops_pod_cleaner::cli::{Cli, LogFormat};
use ops_pod_cleaner::commands;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    // The shell completions ask for names this way, before any command line is parsed.
    let args: Vec<String> = (std::env::args_os())
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    if let Some(answered) = commands::completion::answer(&args) {
        return answered;
    }
    let cli = Cli::from_process_args();
    // Our own warnings by default (kube logs connection errors we already report), and the
    // action log whatever the filter says: what the product did is never filtered out.
    let filter = EnvFilter::try_from_env("OPS_POD_CLEANER_LOG")
        .unwrap_or_else(|_| EnvFilter::new("ops_pod_cleaner=warn,opc_core=warn"));
    let filter = match format!("{ACTION_LOG}=info").parse() {
        Ok(action_log) => filter.add_directive(action_log),
        Err(_) => filter,
    };
    opc_core::memory::on_burst_end(allocator::give_back);
    if cli.command.is_none() {
        // The screen holds many clusters' rows for weeks and re-lists them all at each change.
        allocator::large_blocks_apart();
        // The screen owns the terminal: logs go to its log pane, not to stderr.
        ops_pod_cleaner::ui::init_logging(filter);
    } else if cli.log_format() == LogFormat::Json {
        tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .init();
    } else {
        ops_pod_cleaner::text_log::init(filter);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let name = ops_pod_cleaner::cli::invoked_as();
            eprintln!("{name}: cannot start the async runtime: {e}");
            return ExitCode::from(commands::EXIT_RUNTIME);
        }
    };
    // The binary reads the system clock here only: every command is handed this one.
    let exit = runtime.block_on(commands::run(cli, Clock::real()));
    // A credential plugin left hanging (see `cluster::connect`) must not hold up the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    exit
}
