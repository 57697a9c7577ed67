//! The shell completions and the manual page, generated from the command line's own
//! definitions so they cannot drift from the flags.

use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;
use clap_mangen::Man;
use roff::{Roff, bold, roman};

use super::completion::{CONTEXTS, NAMESPACES};
use super::out;
use crate::cli::Cli;
use opc_core::rules::{CauseClass, RuleKind};

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
    out(&contexts_completed(shell, &script, &name))?;
    Ok(ExitCode::SUCCESS)
}

/// `--context` offers the kubeconfig's contexts and `--namespace` the cluster's namespaces, as
/// the binary lists them, in place of file names. bash asks for the namespaces of the
/// `--context` already on the line; zsh and fish, of the current context.
fn contexts_completed(shell: Shell, script: &str, name: &str) -> String {
    let contexts = format!("{CONTEXTS} 2>/dev/null");
    let namespaces = format!("{NAMESPACES} 2>/dev/null");
    let files = "COMPREPLY=($(compgen -f \"${cur}\"))";
    let words = |list: &str| format!("COMPREPLY=($(compgen -W \"$({list})\" -- \"${{cur}}\"))");
    match shell {
        Shell::Bash => {
            let namespaces = words("_ops_pod_cleaner_namespaces");
            let offered = [
                (
                    "--context",
                    words(&format!("\"${{COMP_WORDS[0]}}\" {contexts}")),
                ),
                ("--namespace", namespaces.clone()),
                ("-n", namespaces),
            ];
            let script = offered
                .iter()
                .fold(script.to_string(), |script, (flag, words)| {
                    let case = format!("{flag})\n                    ");
                    script.replace(&format!("{case}{files}"), &format!("{case}{words}"))
                });
            format!(
                "{script}{}",
                BASH_NAMESPACES.replace("{NAMESPACES}", NAMESPACES)
            )
        }
        Shell::Zsh => script
            .replace(
                "]:NAME:_default'",
                &format!("]:NAME:{{compadd -- ${{(f)\"$(${{words[1]}} {contexts})\"}}}}'"),
            )
            .replace(
                "]:NS:_default'",
                &format!("]:NS:{{compadd -- ${{(f)\"$(${{words[1]}} {namespaces})\"}}}}'"),
            ),
        Shell::Fish => script
            .lines()
            .map(|line| {
                match (
                    line.contains(" -l context "),
                    line.contains(" -l namespace "),
                ) {
                    (true, _) => format!("{line} -f -a \"({name} {contexts})\"\n"),
                    (_, true) => format!("{line} -f -a \"({name} {namespaces})\"\n"),
                    _ => format!("{line}\n"),
                }
            })
            .collect(),
        _ => script.to_string(),
    }
}

/// The namespaces of the `--context` on the line (the current context's without one).
const BASH_NAMESPACES: &str = r#"
_ops_pod_cleaner_namespaces() {
    local i context=()
    for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
        if [[ ${COMP_WORDS[i]} == --context ]]; then context=("${COMP_WORDS[i + 1]}"); fi
    done
    "${COMP_WORDS[0]}" {NAMESPACES} "${context[@]}" 2>/dev/null
}
"#;

/// clap_complete's bash script names a subcommand's state with the program's hyphens as `__`
/// but labels its cases with them as `__subcmd__`: no label ever matched, so nothing completed
/// past the first word. The labels are written as the state is.
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
    // The footer's source is the name and version: the long version (commit, date, features)
    // ran into the page's name at 80 columns. VERSION below keeps it whole.
    let man = Man::new(command.clone())
        .date(env!("OPC_BUILD_DATE"))
        .source(format!("ops-pod-cleaner {}", env!("CARGO_PKG_VERSION")))
        .manual("ops-pod-cleaner manual");
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
    let _ = beyond_the_flags().to_writer(&mut page);
    let _ = man.render_version_section(&mut page);
    String::from_utf8_lossy(&page).into_owned()
}

/// What a reader needs besides the flags, each list from the definitions it describes: the
/// screen's keys, the categories and causes, exit codes, environment, files, the defaults.
fn beyond_the_flags() -> Roff {
    let mut page = Roff::new();
    page.control("SH", ["KEYS"]);
    page.text([roman(
        "In the screen (no command); the first group can be changed under ui.keys.",
    )]);
    for (key, what) in crate::ui::help_lines(&opc_core::config::UiConfig::default()) {
        entry(&mut page, &key, &what);
    }
    page.control("SH", ["CATEGORIES"]);
    page.text([roman(
        "Each abnormal pod is in the first category of the chain that claims it:",
    )]);
    for kind in RuleKind::ALL {
        entry(&mut page, kind.name(), category(kind));
    }
    let classes: Vec<&str> = CauseClass::ALL.iter().map(|c| c.name()).collect();
    page.text([roman(format!(
        "Each has a cause: a class scripts can match (scan --output json, /metrics), a detail, \
         the evidence it rests on and the next step. The classes: {}.",
        classes.join(", ")
    ))]);
    table(&mut page, "EXIT STATUS", EXIT_STATUS);
    table(&mut page, "ENVIRONMENT", ENVIRONMENT);
    table(&mut page, "FILES", FILES);
    page.control("SH", ["CONFIGURATION"]);
    page.text([roman(
        "ops-pod-cleaner default-config prints the built-in config, every key at its default \
         with what it does; check-config FILE validates one and prints the effective rules. \
         The defaults:",
    )]);
    page.control("nf", []);
    for line in opc_core::config::DEFAULT_YAML.lines() {
        page.text([roman(line.to_string())]);
    }
    page.control("fi", []);
    table(&mut page, "EXAMPLES", EXAMPLES);
    page
}

fn entry(page: &mut Roff, term: &str, text: &str) {
    page.control("TP", []);
    page.text([bold(term.to_string())]);
    page.text([roman(text.to_string())]);
}

/// A section of entries, from a table of `term | text` lines.
fn table(page: &mut Roff, heading: &str, lines: &str) {
    page.control("SH", [heading]);
    for (term, text) in lines.lines().filter_map(|line| line.split_once(" | ")) {
        entry(page, term, text);
    }
}

const EXIT_STATUS: &str = "\
0 | done; scan found nothing abnormal (or, with --parked, nothing parked)
1 | scan found abnormal pods (or, with --parked, parked workloads)
2 | the config or the command line is wrong (a context the kubeconfig lacks too)
3 | the cluster could not be reached or answered with an error, or something else failed while running (a file, the terminal, a report spooled for later)";

const ENVIRONMENT: &str = "\
OPS_POD_CLEANER_CONFIG | the config file, when --config is not given
KUBECONFIG | the kubeconfig, when --kubeconfig is not given; else ~/.kube/config, then in-cluster
OPS_POD_CLEANER_LOG | the log filter, e.g. ops_pod_cleaner=info,opc_core=debug (default: warnings); the action log is always kept
OPS_POD_CLEANER_WATCH_SILENCE | overrides cluster.watchSilence: a view not proved current for this long is stale
OPS_POD_CLEANER_CONNECT_TIMEOUT | overrides cluster.connectTimeout
OPS_POD_CLEANER_REQUEST_TIMEOUT | overrides cluster.requestTimeout
OPS_POD_CLEANER_WIRE_FORMAT | overrides cluster.wireFormat: protobuf or json
POD_NAMESPACE | in the cluster: the namespace of the Lease and the parked ConfigMap (default ops-pod-cleaner)
HOSTNAME | in the cluster: this replica's name in the Lease";

const FILES: &str = "\
./config.yml, ./config.yaml, <user config dir>/ops-pod-cleaner/config.yaml | the config, looked for in that order after --config and $OPS_POD_CLEANER_CONFIG; without one, the built-in defaults
<data dir>/ops-pod-cleaner/audit.jsonl | the audit log (audit.path): every action, intent and outcome, one JSON object per line; ~/.local/share on Linux
<data dir>/ops-pod-cleaner/spool, report-state.json | reports waiting for a sink (report.spoolDir) and the restart counts at the last report (report.stateFile)";

const EXAMPLES: &str = "\
ops-pod-cleaner --demo | the screen on two simulated clusters, no cluster needed
ops-pod-cleaner --context prod-eu --context prod-us | the screen on two clusters
ops-pod-cleaner scan --context prod-eu -n shop --output json | one look, as JSON
ops-pod-cleaner scan --all-contexts --parked | what was scaled to zero, everywhere
ops-pod-cleaner report --send | the restart report, delivered to the sinks
ops-pod-cleaner headless --once --dry-run | one worker pass that changes nothing
ops-pod-cleaner default-config > config.yml | a config to edit, from the defaults
kubectl pod-cleaner scan | the same, as a kubectl plugin";

/// What each category holds, in a line. No wildcard: a new category must be described.
fn category(kind: RuleKind) -> &'static str {
    match kind {
        RuleKind::Evicted => "evicted by the kubelet (Failed, reason Evicted)",
        RuleKind::Terminating => "deleting for longer than its grace period allows",
        RuleKind::ImagePull => {
            "a container that cannot pull its image (ErrImagePull, ImagePullBackOff, \
             InvalidImageName, ErrImageNeverPull)"
        }
        RuleKind::CrashLoop => "a container that keeps restarting (CrashLoopBackOff and the like)",
        RuleKind::ConfigError => {
            "a container that cannot be created from its spec (CreateContainerConfigError, \
             CreateContainerError)"
        }
        RuleKind::Starting => {
            "stuck on the way up: ContainerCreating, PodInitializing or an init container, or \
             Running but not Ready, for longer than its after"
        }
        RuleKind::Pending => "not scheduled: Pending with PodScheduled=False",
        RuleKind::Failed => {
            "any other Failed pod: the kubelet's admission, preemption, node shutdown, a \
             deadline, an exit code"
        }
        RuleKind::Unknown => "phase Unknown or reason NodeLost: its node stopped reporting",
    }
}

/// A command's own arguments (not the global ones, listed once above) under its name.
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
