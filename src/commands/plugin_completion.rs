//! `kubectl pod-cleaner <TAB>`: kubectl (1.26+) completes a plugin's words by running
//! `kubectl_complete-pod_cleaner` from the `PATH` with the words typed after the plugin's name,
//! the last being the one to complete. It reads cobra's answer: one candidate a line, then
//! `:<directive>`. The binary answers when it runs under that name (a link to it).

use std::ffi::OsStr;
use std::path::Path;

use clap::builder::ValueHint;
use clap::{Arg, Command};

use crate::cli::Cli;

/// The name kubectl runs for the plugin `kubectl-pod_cleaner`'s completions.
pub const PLUGIN_COMPLETER: &str = "kubectl_complete-pod_cleaner";

/// cobra's `ShellCompDirectiveNoFileComp`: offer no file names after the candidates.
const NO_FILES: u8 = 4;
/// cobra's `ShellCompDirectiveDefault`: the shell may offer file names too.
const FILES: u8 = 0;

/// Whether `argv0` is the completer's name (as kubectl finds it on the `PATH`).
pub fn is_completer(argv0: &OsStr) -> bool {
    Path::new(argv0).file_stem() == Some(OsStr::new(PLUGIN_COMPLETER))
}

/// A context's namespaces (the current context's for `None`).
pub type Namespaces = fn(Option<String>) -> Vec<String>;

/// cobra's answer to `words` (the last is the word being typed).
pub fn answer(words: &[String], namespaces: Namespaces) -> String {
    let (candidates, directive) = complete(words, namespaces);
    let mut out: String = candidates.iter().map(|c| format!("{c}\n")).collect();
    out.push_str(&format!(":{directive}\n"));
    out
}

/// The candidates for the last of `words`, and whether file names fit there too.
fn complete(words: &[String], namespaces: Namespaces) -> (Vec<String>, u8) {
    let mut root = Cli::command_named("kubectl pod-cleaner");
    root.build();
    let (typing, typed) = match words.split_last() {
        Some((last, before)) => (last.as_str(), before),
        None => ("", &[][..]),
    };
    let (command, pending) = walk(&root, typed);
    let (candidates, directive) = match pending {
        Some(arg) => values(arg, words, namespaces),
        None if typing.starts_with('-') => (flags(command), NO_FILES),
        None if command.get_name() == root.get_name() => (subcommands(command), NO_FILES),
        None => match command.get_positionals().next() {
            Some(arg) => values(arg, words, namespaces),
            None => (Vec::new(), NO_FILES),
        },
    };
    let chosen = candidates
        .into_iter()
        .filter(|c| c.starts_with(typing))
        .collect();
    (chosen, directive)
}

/// The (sub)command `typed` ends in, and the option whose value comes next, if one does.
fn walk<'a>(root: &'a Command, typed: &[String]) -> (&'a Command, Option<&'a Arg>) {
    let mut command = root;
    let mut pending = None;
    for word in typed {
        if pending.take().is_some() {
            continue;
        }
        let option = if let Some(long) = word.strip_prefix("--") {
            (!long.contains('='))
                .then(|| command.get_arguments().find(|a| a.get_long() == Some(long)))
        } else if let Some(short) = word.strip_prefix('-').filter(|s| s.chars().count() == 1) {
            let short = short.chars().next();
            Some(command.get_arguments().find(|a| a.get_short() == short))
        } else {
            if let Some(sub) = command.find_subcommand(word) {
                command = sub;
            }
            None
        };
        pending = option.flatten().filter(|a| a.get_action().takes_values());
    }
    (command, pending)
}

/// What may follow `arg`: contexts, namespaces, its possible values, or file names.
fn values(arg: &Arg, words: &[String], namespaces: Namespaces) -> (Vec<String>, u8) {
    match arg.get_id().as_str() {
        "context" => (
            super::targets::kubeconfig_contexts(None).unwrap_or_default(),
            NO_FILES,
        ),
        "namespace" => (namespaces(context_in(words)), NO_FILES),
        _ if matches!(
            arg.get_value_hint(),
            ValueHint::FilePath | ValueHint::AnyPath
        ) =>
        {
            (Vec::new(), FILES)
        }
        _ => {
            let possible = arg.get_possible_values().into_iter();
            let names = possible.map(|v| v.get_name().to_string()).collect();
            (names, NO_FILES)
        }
    }
}

/// The last `--context NAME` (or `--context=NAME`) on the line.
fn context_in(words: &[String]) -> Option<String> {
    let mut found = None;
    let mut next_is_it = false;
    for word in words {
        if next_is_it {
            found = Some(word.clone());
        }
        next_is_it = word == "--context";
        if let Some(name) = word.strip_prefix("--context=") {
            found = Some(name.to_string());
        }
    }
    found
}

fn flags(command: &Command) -> Vec<String> {
    command
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long().map(|long| format!("--{long}")))
        .collect()
}

fn subcommands(command: &Command) -> Vec<String> {
    command
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .map(|c| c.get_name().to_string())
        .collect()
}
