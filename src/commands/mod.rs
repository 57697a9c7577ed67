//! What each command does, between the parsed command line and the library.

mod headless;
mod report;
mod scan;
mod targets;
mod tui;

use std::process::ExitCode;

use crate::Error;
use crate::cli::{Cli, Command};
use crate::config::Config;

pub use targets::{Targets, open_targets};

/// Exit codes beyond 0 (nothing found) and 1 (abnormal pods found).
pub const EXIT_CONFIG: u8 = 2;
pub const EXIT_RUNTIME: u8 = 3;

pub async fn run(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Some(Command::CheckConfig { file }) => check_config(&file),
        Some(Command::Scan { output, parked }) => scan::run(&cli.global, output, parked).await,
        Some(Command::Report { output, send }) => report::run(&cli.global, output, send).await,
        Some(Command::Headless { once, listen, send }) => {
            headless::run(&cli.global, headless::Mode { once, listen, send }).await
        }
        None => tui::run(&cli.global).await,
    };
    result.unwrap_or_else(|e| {
        eprintln!("ops-pod-cleaner: {e}");
        ExitCode::from(exit_code(&e))
    })
}

fn exit_code(error: &Error) -> u8 {
    match error {
        Error::Config(_) | Error::Usage(_) => EXIT_CONFIG,
        _ => EXIT_RUNTIME,
    }
}

fn check_config(file: &std::path::Path) -> crate::Result<ExitCode> {
    let config = Config::load_file(file).map_err(|e| match e {
        Error::Io { path, source } => Error::Config(format!("{}: {source}", path.display())),
        other => other,
    })?;
    print!("{}", config.describe());
    Ok(ExitCode::SUCCESS)
}
