//! What a packager ships beside the binary: completions, the man page, `--version`. Checked
//! against the clap definitions, so a new flag without them fails here.

use std::process::{Command, Output};

use clap::CommandFactory;
use ops_pod_cleaner::cli::Cli;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout_of(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Every subcommand name and every long flag, at every level.
fn words_of(command: &clap::Command) -> Vec<String> {
    let mut words: Vec<String> = command
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long().map(|long| format!("--{long}")))
        .collect();
    for sub in command.get_subcommands() {
        words.push(sub.get_name().to_string());
        words.extend(words_of(sub));
    }
    words
}

fn cli_words() -> Vec<String> {
    let words = words_of(&Cli::command());
    // The walk itself must see something, or the checks below pass on nothing.
    for expected in [
        "headless",
        "--once",
        "--kubeconfig",
        "completions",
        "manpage",
    ] {
        assert!(
            words.iter().any(|w| w == expected),
            "{expected} in {words:?}"
        );
    }
    words
}

#[test]
fn bash_completion_offers_every_flag_and_subcommand() {
    let script = stdout_of(&["completions", "bash"]);
    let missing: Vec<_> = cli_words()
        .into_iter()
        .filter(|w| !script.contains(w.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "missing from the bash completion: {missing:?}"
    );
}

#[test]
fn every_shell_gets_a_script() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let script = stdout_of(&["completions", shell]);
        assert!(script.contains("ops-pod-cleaner"), "{shell}: {script}");
        assert!(script.contains("headless"), "{shell}: {script}");
    }
}

#[test]
fn bash_loads_the_completion() {
    let bin = env!("CARGO_BIN_EXE_ops-pod-cleaner");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source <('{bin}' completions bash) && complete -p ops-pod-cleaner"
        ))
        .output()
        .expect("bash runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("ops-pod-cleaner"), "{said}");
}

/// roff escapes a `-` as `\-`; the words are compared as a reader sees them.
fn manpage_text() -> String {
    stdout_of(&["manpage"]).replace("\\-", "-")
}

#[test]
fn manpage_documents_every_flag_and_subcommand() {
    let page = manpage_text();
    assert!(page.contains("\n.TH ops-pod-cleaner 1 "), "{page}");
    let missing: Vec<_> = cli_words()
        .into_iter()
        .filter(|w| !page.contains(w.as_str()))
        .collect();
    assert!(missing.is_empty(), "missing from the man page: {missing:?}");
}

#[test]
fn manpage_lists_each_global_option_once() {
    let page = manpage_text();
    let entry = ".TP\n\\fB--kubeconfig\\fR";
    assert_eq!(page.matches(entry).count(), 1, "{page}");
    assert!(page.contains("HEADLESS OPTIONS"), "{page}");
}

/// Only where `man` is installed: CI images often lack it, and the page is checked above.
#[test]
fn man_renders_the_page() {
    let has_man = Command::new("man").arg("--version").output().is_ok();
    if !has_man {
        eprintln!("man is not installed: rendering not checked");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ops-pod-cleaner.1");
    std::fs::write(&file, stdout_of(&["manpage"])).unwrap();
    let out = Command::new("man")
        .arg("-l")
        .arg(&file)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("headless"), "{text}");
    assert!(!text.contains(".SH"), "roff left unrendered: {text}");
}

#[test]
fn version_names_the_commit_the_build_date_and_the_features() {
    let line = stdout_of(&["--version"]);
    let rest = line
        .trim_end()
        .strip_prefix(concat!(
            "ops-pod-cleaner ",
            env!("CARGO_PKG_VERSION"),
            " (commit "
        ))
        .unwrap_or_else(|| panic!("{line}"));
    let (commit, rest) = rest
        .split_once(", built ")
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{line}"
    );
    let (date, rest) = rest
        .split_once(", features: ")
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").is_ok(),
        "{line}"
    );
    let features = rest.strip_suffix(')').unwrap_or_else(|| panic!("{line}"));
    // The suite builds with the default features.
    assert_eq!(features, "demo", "{line}");
}
