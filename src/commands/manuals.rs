//! The shell completions and the manual page, generated from the command line's own
//! definitions so they cannot drift from the flags.

use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;
use clap_mangen::Man;
use roff::{Roff, bold, roman};

use super::out;
use crate::cli::Cli;

pub(crate) fn completions(shell: Shell) -> crate::Result<ExitCode> {
    let mut command = Cli::command();
    let name = command.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, name.clone(), &mut script);
    let script = String::from_utf8_lossy(&script);
    let script = match shell {
        Shell::Bash => bash_case_labels_fixed(&script, &name),
        _ => script.into_owned(),
    };
    out(&script)?;
    Ok(ExitCode::SUCCESS)
}

/// clap_complete's bash script names a subcommand's state with the program's hyphens written
/// as `__` (`ops__pod__cleaner__subcmd__scan`) but labels its cases with them written as
/// `__subcmd__` (`ops__subcmd__pod__subcmd__cleaner__subcmd__scan`): no label ever matched, so
/// nothing completed past the first word. The labels are written as the state is.
fn bash_case_labels_fixed(script: &str, name: &str) -> String {
    let state = name.replace('-', "__");
    let label = name.replace('-', "__subcmd__");
    if state == label {
        return script.to_string();
    }
    script.replace(&format!("{label}__subcmd__"), &format!("{state}__subcmd__"))
}

pub(crate) fn manpage() -> crate::Result<ExitCode> {
    out(&render_manpage())?;
    Ok(ExitCode::SUCCESS)
}

/// One page for the whole tool: the global options, then each command with its own options.
/// clap_mangen's own subcommand list points at one page per command, which is not shipped.
fn render_manpage() -> String {
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    let man = Man::new(command.clone());
    let mut page = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = man.render_title(&mut page);
    let _ = man.render_name_section(&mut page);
    let _ = man.render_synopsis_section(&mut page);
    let _ = man.render_description_section(&mut page);
    let _ = man.render_options_section(&mut page);
    let mut commands = Roff::new();
    commands.control("SH", ["COMMANDS"]);
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let about = sub.get_long_about().or_else(|| sub.get_about());
        commands.control("TP", []);
        commands.text([bold(format!("{} {}", command.get_name(), sub.get_name()))]);
        for line in about.map(|a| a.to_string()).unwrap_or_default().lines() {
            commands.text([roman(line)]);
        }
    }
    let _ = commands.to_writer(&mut page);
    for sub in command.get_subcommands() {
        let _ = Man::new(own_options(sub)).render_options_section(&mut page);
    }
    let _ = man.render_version_section(&mut page);
    String::from_utf8_lossy(&page).into_owned()
}

/// A command's own arguments (not the global ones, listed once above) under a heading of its
/// name, e.g. "HEADLESS OPTIONS".
fn own_options(sub: &clap::Command) -> clap::Command {
    let heading = format!("{} options", sub.get_name());
    let own: Vec<clap::Arg> = sub
        .get_arguments()
        .filter(|a| !a.is_global_set() && !a.is_hide_set())
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .map(|a| a.clone().help_heading(heading.clone()))
        .collect();
    clap::Command::new(sub.get_name().to_string())
        .disable_help_flag(true)
        .args(own)
}
