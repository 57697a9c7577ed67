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

/// A page a person reads: the screen's keys, the categories and cause classes, exit codes,
/// the environment, the files, the configuration with its defaults, and examples. It once had
/// a one-line DESCRIPTION and the options only.
#[test]
fn manpage_says_what_a_user_needs_beyond_the_flags() {
    let page = manpage_text();
    for section in [
        ".SH KEYS",
        ".SH CATEGORIES",
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
        ".SH FILES",
        ".SH CONFIGURATION",
        ".SH EXAMPLES",
    ] {
        assert!(page.contains(section), "{section} in {page}");
    }
    for key in opc_core::config::UI_ACTIONS.map(|(_, key)| key) {
        assert!(page.contains(key), "the key {key}");
    }
    for category in opc_core::rules::RuleKind::ALL {
        assert!(
            page.contains(category.name()),
            "the category {}",
            category.name()
        );
    }
    for class in opc_core::rules::CauseClass::ALL {
        assert!(page.contains(class.name()), "the cause {}", class.name());
    }
    for word in [
        "OPS_POD_CLEANER_CONFIG",
        "KUBECONFIG",
        "OPS_POD_CLEANER_LOG",
        "OPS_POD_CLEANER_WATCH_SILENCE",
        "OPS_POD_CLEANER_CONNECT_TIMEOUT",
        "OPS_POD_CLEANER_REQUEST_TIMEOUT",
        "OPS_POD_CLEANER_WIRE_FORMAT",
        "POD_NAMESPACE",
        "default-config",
        "audit.jsonl",
        "maxActionsPerMinute",
        "ops-pod-cleaner scan --context",
    ] {
        assert!(page.contains(word), "{word} in {page}");
    }
    // The footer: name and version, short enough that 80 columns keep its parts apart.
    let title = page.lines().find(|l| l.starts_with(".TH ")).unwrap();
    assert!(
        title.contains(concat!(
            "\"ops-pod-cleaner ",
            env!("CARGO_PKG_VERSION"),
            "\""
        )) && !title.contains("commit"),
        "{title}"
    );
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

// The release archives, as the release workflow ships them, and the kubectl plugin.

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The release tag of this version: archives and the krew manifest are named after it.
fn tag() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

/// The one spelling of an archive's name, for the script's output and the krew URLs alike.
fn archive_name(tag: &str, target: &str, ext: &str) -> String {
    format!("ops-pod-cleaner-{tag}-{target}.{ext}")
}

fn host_target() -> String {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc runs");
    let info = String::from_utf8(out.stdout).expect("UTF-8");
    info.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_string()
}

/// Runs `cmd`, fails the test with its stderr unless it succeeds, returns its stdout.
fn checked(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `tar -tzf`, without the directory entries.
fn tar_listing(archive: &std::path::Path) -> Vec<String> {
    let list = checked(Command::new("tar").arg("-tzf").arg(archive));
    let mut files: Vec<String> = list
        .lines()
        .filter(|l| !l.ends_with('/'))
        .map(str::to_string)
        .collect();
    files.sort();
    files
}

#[test]
fn build_archive_packs_the_host_archive_with_everything_a_release_ships() {
    let out = tempfile::tempdir().unwrap();
    let printed = checked(
        Command::new("bash")
            .arg(format!("{ROOT}/scripts/build-archive.sh"))
            .args(["--binary", env!("CARGO_BIN_EXE_ops-pod-cleaner"), "--out"])
            .arg(out.path()),
    );
    let name = archive_name(&tag(), &host_target(), "tar.gz");
    let stem = name.trim_end_matches(".tar.gz");
    let archive = out.path().join(&name);
    assert!(printed.contains(&*archive.to_string_lossy()), "{printed}");

    let mut expected: Vec<String> = [
        "ops-pod-cleaner",
        "LICENSE",
        "README.md",
        "BENCHMARKS.md",
        "assets/tui-demo.svg",
        "assets/tui-clusters.svg",
        "completions/ops-pod-cleaner.bash",
        "completions/_ops-pod-cleaner",
        "completions/ops-pod-cleaner.fish",
        "completions/_ops-pod-cleaner.ps1",
        "man/ops-pod-cleaner.1",
    ]
    .iter()
    .map(|f| format!("{stem}/{f}"))
    .collect();
    expected.sort();
    assert_eq!(tar_listing(&archive), expected);

    // The checksum file names the archive beside it, and holds.
    let sums = std::fs::read_to_string(out.path().join(format!("{name}.sha256"))).unwrap();
    assert!(sums.ends_with(&format!("  {name}\n")), "{sums}");
    checked(
        Command::new("sha256sum")
            .args(["-c", &format!("{name}.sha256")])
            .current_dir(out.path()),
    );

    let unpacked = out.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    checked(
        Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&unpacked),
    );
    let dir = unpacked.join(stem);
    shipped_files_are_whole(&dir);
    readme_links_resolve_in(&dir);
    binary_is_stripped_and_runs(&dir.join("ops-pod-cleaner"));

    // The debug info is kept, in its own archive, under the same directory name.
    let debug = out.path().join(format!("{stem}-debuginfo.tar.gz"));
    assert_eq!(
        tar_listing(&debug),
        [format!("{stem}/ops-pod-cleaner.debug")]
    );
}

/// Every relative link of the shipped README (`](path)`) names a file the archive holds, and
/// no path it mentions in code is one only a checkout has.
fn readme_links_resolve_in(dir: &std::path::Path) {
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    for link in readme.split("](").skip(1) {
        let target = link.split(')').next().unwrap();
        if target.contains(':') || target.starts_with('#') {
            continue;
        }
        let target = target.split('#').next().unwrap();
        assert!(
            dir.join(target).is_file(),
            "the README links to {target}, not shipped"
        );
    }
    assert!(
        !readme.contains("crates/core/config/default.yaml"),
        "the README sends readers to a file the archive lacks; `default-config` prints it"
    );
}

fn shipped_files_are_whole(dir: &std::path::Path) {
    for file in ["LICENSE", "README.md"] {
        assert_eq!(
            std::fs::read(dir.join(file)).unwrap(),
            std::fs::read(format!("{ROOT}/{file}")).unwrap(),
            "{file}"
        );
    }
    let license = std::fs::read_to_string(dir.join("LICENSE")).unwrap();
    assert!(license.contains("Apache License\n"), "{license}");
    for (file, shell) in [
        ("ops-pod-cleaner.bash", "bash"),
        ("_ops-pod-cleaner", "zsh"),
        ("ops-pod-cleaner.fish", "fish"),
        ("_ops-pod-cleaner.ps1", "powershell"),
    ] {
        let script = std::fs::read_to_string(dir.join("completions").join(file)).unwrap();
        assert_eq!(script, stdout_of(&["completions", shell]), "{file}");
    }
    let page = std::fs::read_to_string(dir.join("man/ops-pod-cleaner.1")).unwrap();
    assert_eq!(page, stdout_of(&["manpage"]));
}

fn binary_is_stripped_and_runs(binary: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(binary).unwrap().permissions().mode();
    assert_ne!(mode & 0o111, 0, "not executable: {mode:o}");
    let version = checked(Command::new(binary).arg("--version"));
    assert!(version.starts_with("ops-pod-cleaner "), "{version}");
    let Ok(sections) = Command::new("readelf").arg("-SW").arg(binary).output() else {
        eprintln!("readelf is not installed: debug sections not checked");
        return;
    };
    let sections = String::from_utf8_lossy(&sections.stdout);
    assert!(sections.contains(".gnu_debuglink"), "{sections}");
    // `.debug_gdb_scripts` stays: it is loaded with the program (gdb's pretty-printers), not
    // debug info.
    for debug_info in [".debug_info", ".debug_line", ".debug_str", ".debug_abbrev"] {
        assert!(!sections.contains(debug_info), "{debug_info}: {sections}");
    }
}

/// One release target, a row of scripts/targets.txt.
struct Target {
    triple: String,
    /// `os/arch` as krew names the platform, for the targets krew installs.
    krew: Option<String>,
    archive: String,
}

fn release_targets() -> Vec<Target> {
    let text = std::fs::read_to_string(format!("{ROOT}/scripts/targets.txt")).unwrap();
    let targets: Vec<Target> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [triple, _runner, krew, archive] => Target {
                triple: triple.into(),
                krew: (krew != "-").then(|| krew.into()),
                archive: archive.into(),
            },
            _ => panic!("not `target runner krew archive`: {l}"),
        })
        .collect();
    assert_eq!(targets.len(), 7, "{text}");
    targets
}

#[derive(serde::Deserialize)]
struct KrewManifest {
    metadata: KrewMetadata,
    spec: KrewSpec,
}

#[derive(serde::Deserialize)]
struct KrewMetadata {
    name: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct KrewSpec {
    version: String,
    short_description: String,
    description: String,
    caveats: String,
    platforms: Vec<KrewPlatform>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct KrewPlatform {
    selector: KrewSelector,
    uri: String,
    sha256: String,
    bin: String,
    files: Vec<KrewFile>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct KrewSelector {
    match_labels: std::collections::BTreeMap<String, String>,
}

#[derive(serde::Deserialize)]
struct KrewFile {
    from: String,
    to: String,
}

/// .krew.yaml as krew-release-bot fills it in: `addURIAndSha "URL" TAG` becomes the URL and a
/// checksum, `.TagName` the release tag.
fn rendered_krew_manifest() -> KrewManifest {
    let template = std::fs::read_to_string(format!("{ROOT}/.krew.yaml")).unwrap();
    let mut rendered = String::new();
    for line in template.replace("{{ .TagName }}", &tag()).lines() {
        match line.trim_start().strip_prefix("{{ addURIAndSha \"") {
            Some(call) => {
                let indent = &line[..line.len() - line.trim_start().len()];
                let (uri, rest) = call.split_once('"').unwrap();
                assert_eq!(rest.trim(), ".TagName }}", "{line}");
                rendered.push_str(&format!("{indent}uri: {uri}\n{indent}sha256: \"0\"\n"));
            }
            None => rendered.push_str(&format!("{line}\n")),
        }
    }
    serde_saphyr::from_str(&rendered).unwrap_or_else(|e| panic!("{e}: {rendered}"))
}

#[test]
fn krew_manifest_installs_the_archives_the_release_builds() {
    let manifest = rendered_krew_manifest();
    assert_eq!(manifest.metadata.name, "pod-cleaner");
    assert_eq!(manifest.spec.version, tag());
    for text in [&manifest.spec.short_description, &manifest.spec.description] {
        assert!(!text.trim().is_empty());
    }
    assert!(manifest.spec.caveats.contains("kubectl pod-cleaner"));

    let downloads = format!(
        "{}/releases/download/{}",
        env!("CARGO_PKG_REPOSITORY"),
        tag()
    );
    let expected: Vec<(String, String)> = release_targets()
        .into_iter()
        .filter_map(|t| {
            let uri = format!(
                "{downloads}/{}",
                archive_name(&tag(), &t.triple, &t.archive)
            );
            t.krew.map(|platform| (platform, uri))
        })
        .collect();
    let platforms: Vec<(String, String)> = manifest
        .spec
        .platforms
        .iter()
        .map(|p| {
            let labels = &p.selector.match_labels;
            (
                format!("{}/{}", labels["os"], labels["arch"]),
                p.uri.clone(),
            )
        })
        .collect();
    assert_eq!(platforms, expected);

    for platform in &manifest.spec.platforms {
        let windows = platform.selector.match_labels["os"] == "windows";
        let bin = if windows {
            "ops-pod-cleaner.exe"
        } else {
            "ops-pod-cleaner"
        };
        assert_eq!(platform.bin, bin);
        assert!(!platform.sha256.is_empty());
        // The archive's one directory is named like the archive: see build_archive above.
        let from: Vec<(&str, &str)> = platform
            .files
            .iter()
            .map(|f| (f.from.as_str(), f.to.as_str()))
            .collect();
        assert_eq!(
            from,
            [
                (format!("ops-pod-cleaner-*/{bin}").as_str(), "."),
                ("ops-pod-cleaner-*/LICENSE", ".")
            ]
        );
    }
}

#[test]
fn release_workflow_builds_every_target_with_the_archive_script() {
    let workflow =
        std::fs::read_to_string(format!("{ROOT}/.github/workflows/release.yml")).unwrap();
    for needed in [
        "scripts/targets.txt",
        "scripts/build-archive.sh --target ${{ matrix.target }}",
        "fromJSON(needs.plan.outputs.matrix)",
        "rajatjindal/krew-release-bot",
    ] {
        assert!(workflow.contains(needed), "{needed}");
    }
}

/// A pull request runs the checks a landing runs: `.ci/run`, on every pull request (no path
/// filter) and on main.
#[test]
fn every_pull_request_runs_the_ci_script() {
    let workflow = std::fs::read_to_string(format!("{ROOT}/.github/workflows/ci.yml")).unwrap();
    let on = workflow
        .split("\non:\n")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    assert!(on.contains("  pull_request:"), "{on}");
    assert!(
        !on.contains("paths"),
        "every pull request, whatever it touches: {on}"
    );
    assert!(workflow.contains("run: bash .ci/run"), "{workflow}");
}

const ONE_CONTEXT_KUBECONFIG: &str = "apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: only, context: {cluster: c, user: u}}]
current-context: only
";

/// krew installs the binary as `kubectl-pod_cleaner`, and kubectl runs it by that path for
/// `kubectl pod-cleaner`: what it prints must name the command the user typed.
#[test]
fn as_a_kubectl_plugin_it_names_itself_kubectl_pod_cleaner() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("kubectl-pod_cleaner");
    // A link, as krew makes. A copy fails now and then with "Text file busy": a test that
    // forks while the copy is open for writing hands the child its write descriptor.
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ops-pod-cleaner"), &plugin).unwrap();

    let help = checked(Command::new(&plugin).arg("--help"));
    assert!(
        help.contains("Usage: kubectl pod-cleaner [OPTIONS] [COMMAND]"),
        "{help}"
    );
    let help = checked(Command::new(&plugin).args(["headless", "--help"]));
    assert!(
        help.contains("Usage: kubectl pod-cleaner headless [OPTIONS]"),
        "{help}"
    );
    let help = checked(Command::new(&plugin).args(["default-config", "--help"]));
    assert!(
        help.contains("Usage: kubectl pod-cleaner default-config"),
        "{help}"
    );
    let version = checked(Command::new(&plugin).arg("--version"));
    assert!(
        version.starts_with(&format!("ops-pod-cleaner {} (", env!("CARGO_PKG_VERSION"))),
        "{version}"
    );

    let wrong = Command::new(&plugin)
        .arg("--no-such-flag")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert_eq!(wrong.status.code(), Some(2), "{said}");
    assert!(
        said.contains("Usage: kubectl pod-cleaner [OPTIONS]"),
        "{said}"
    );
    assert!(!said.contains("kubectl-pod_cleaner"), "{said}");

    // Its own errors name it as run, and a context that is not there is a usage error.
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, ONE_CONTEXT_KUBECONFIG).unwrap();
    let missing = Command::new(&plugin)
        .args(["--context", "nope", "scan", "--kubeconfig"])
        .arg(&kubeconfig)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2), "{said}");
    assert!(
        said.starts_with("kubectl pod-cleaner: no context \"nope\""),
        "{said}"
    );
    assert!(!said.contains("cannot reach the cluster"), "{said}");

    // Under its own name it keeps it.
    let help = stdout_of(&["--help"]);
    assert!(
        help.contains("Usage: ops-pod-cleaner [OPTIONS] [COMMAND]"),
        "{help}"
    );
}

/// A command's help lists the flags it reads: `completions`, `manpage`, `default-config` and
/// `check-config` read none of the global ones, which their help once listed (`--demo`, `--context`, …).
#[test]
fn the_help_of_a_command_without_flags_lists_none() {
    for (command, usage) in [
        ("completions", "Usage: ops-pod-cleaner completions <SHELL>"),
        ("manpage", "Usage: ops-pod-cleaner manpage"),
        ("default-config", "Usage: ops-pod-cleaner default-config"),
        // It reads `--config`, as its FILE says, and nothing else.
        ("check-config", "Usage: ops-pod-cleaner check-config [FILE]"),
    ] {
        let help = stdout_of(&[command, "--help"]);
        assert!(help.contains(usage), "{help}");
        for global in [
            "--kubeconfig",
            "--context",
            "--demo",
            "--source",
            "--dry-run",
        ] {
            assert!(
                !help.contains(global),
                "{command} --help lists {global}: {help}"
            );
        }
    }
    assert!(stdout_of(&["completions", "--help"]).contains("powershell"));
    // A command that reads them still lists them.
    assert!(stdout_of(&["scan", "--help"]).contains("--context"));
}

/// What a real bash offers for `WORDS` (the last one being completed), through the script
/// the binary prints.
fn bash_completes(words: &[&str]) -> Vec<String> {
    bash_completes_with(words, "/nonexistent/kubeconfig")
}

/// [`bash_completes`] with `$KUBECONFIG` at `kubeconfig`, and the binary on the `PATH` as a
/// user who installed it has it.
fn bash_completes_with(words: &[&str], kubeconfig: &str) -> Vec<String> {
    let bin = env!("CARGO_BIN_EXE_ops-pod-cleaner");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let script = format!(
        "source <('{bin}' completions bash)\n\
         COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}\n\
         _ops__pod__cleaner ops-pod-cleaner \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        words = quoted.join(" "),
        cword = words.len() - 1,
    );
    let dir = std::path::Path::new(bin).parent().unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("KUBECONFIG", kubeconfig)
        .env("PATH", path)
        .output()
        .expect("bash runs");
    // printf prints its format once even for no COMPREPLY at all: that line is no offer.
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|line| !line.is_empty())
        .map(String::from)
        .collect()
}

/// Below the first word too: a subcommand's flag, and a flag's values (clap_complete wrote
/// case labels that never matched a hyphenated program name, so nothing past it completed).
#[test]
fn bash_completes_a_subcommands_flag_and_its_values() {
    assert_eq!(bash_completes(&["ops-pod-cleaner", "sc"]), ["scan"]);
    assert_eq!(
        bash_completes(&["ops-pod-cleaner", "scan", "--ou"]),
        ["--output"]
    );
    let outputs = bash_completes(&["ops-pod-cleaner", "scan", "--output", ""]);
    assert!(outputs.contains(&"json".to_string()), "{outputs:?}");
    let shells = bash_completes(&["ops-pod-cleaner", "completions", ""]);
    assert!(shells.contains(&"zsh".to_string()), "{shells:?}");
    let sources = bash_completes(&["ops-pod-cleaner", "scan", "--source", ""]);
    assert_eq!(sources, ["auto", "worker", "watch"]);
}

/// `--context` completes the kubeconfig's contexts, as kubectl's own completion does (it
/// offered file names); zsh and fish ask the binary for them the same way.
#[test]
fn completion_offers_the_kubeconfigs_contexts() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, three_contexts()).unwrap();
    let kubeconfig = kubeconfig.to_string_lossy();
    let offered = bash_completes_with(
        &["ops-pod-cleaner", "scan", "--context", "prod"],
        &kubeconfig,
    );
    assert_eq!(offered, ["prod-eu", "prod-us"]);
    let offered = bash_completes_with(&["ops-pod-cleaner", "--context", ""], &kubeconfig);
    assert_eq!(offered, ["prod-eu", "prod-us", "staging"]);
    for shell in ["zsh", "fish"] {
        let script = stdout_of(&["completions", shell]);
        assert!(script.contains("__contexts"), "{shell}: {script}");
        assert!(script.contains("__namespaces"), "{shell}: {script}");
    }
}

/// A kubeconfig with the contexts `prod-eu`, `prod-us` and `staging` (the current one).
fn three_contexts() -> String {
    ONE_CONTEXT_KUBECONFIG.replace(
        "contexts: [{name: only, context: {cluster: c, user: u}}]",
        "contexts: [{name: prod-eu, context: {cluster: c, user: u}}, \
         {name: prod-us, context: {cluster: c, user: u}}, {name: staging, context: {cluster: c, user: u}}]",
    ).replace("current-context: only", "current-context: staging")
}

/// `kubectl pod-cleaner <TAB>`: kubectl (1.26+) runs `kubectl_complete-pod_cleaner` from the
/// `PATH` with the words after the plugin's name, the last the one being typed, and reads
/// cobra's answer: candidates, then `:directive` (4: no file names, 0: file names too).
#[test]
fn kubectl_completes_the_plugin_through_its_completer() {
    let dir = tempfile::tempdir().unwrap();
    let completer = dir.path().join("kubectl_complete-pod_cleaner");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ops-pod-cleaner"), &completer).unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, three_contexts()).unwrap();
    let asked = |words: &[&str]| -> Vec<String> {
        let answer = Command::new(&completer)
            .args(words)
            .env("KUBECONFIG", &kubeconfig)
            .output()
            .unwrap();
        assert!(answer.status.success(), "{words:?}: {answer:?}");
        let text = String::from_utf8(answer.stdout).unwrap();
        text.lines().map(str::to_string).collect()
    };
    assert_eq!(asked(&["sc"]), ["scan", ":4"]);
    assert_eq!(asked(&["scan", "--ou"]), ["--output", ":4"]);
    assert_eq!(asked(&["scan", "-o", ""]), ["table", "json", ":4"]);
    assert_eq!(asked(&["--source", "w"]), ["worker", "watch", ":4"]);
    assert_eq!(
        asked(&["scan", "--context", "prod"]),
        ["prod-eu", "prod-us", ":4"]
    );
    assert_eq!(
        asked(&["--context=staging", "completions", "f"]),
        ["fish", ":4"]
    );
    assert_eq!(asked(&["check-config", ""]), [":0"]);
    assert_eq!(asked(&["--kubeconfig", ""]), [":0"]);
}

/// `-n` and `--namespace` complete the namespaces of the cluster that the `--context` on the
/// line names (they offered file names), read from the API server; a cluster out of reach
/// offers nothing, and at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completion_offers_the_namespaces_of_the_context_on_the_line() {
    let (east, west) = (kube_sim::SimCluster::new(), kube_sim::SimCluster::new());
    // A server that names a namespace with a terminal escape and a newline.
    let hostile = "ads\n\u{1b}]0;owned\u{7}";
    for (sim, namespaces) in [(&east, ["shop", "payments"]), (&west, ["search", hostile])] {
        for ns in namespaces {
            let pod = crate::support::pods::pod("web-1").ns(ns).evicted().json();
            sim.create_pod(serde_json::from_value(pod).unwrap());
        }
    }
    let east = kube_sim::SimServer::start(east).await.unwrap();
    let west = kube_sim::SimServer::start(west).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let text = crate::support::contexts::kubeconfig(&[("east", &east), ("west", &west)]);
    std::fs::write(&kubeconfig, text).unwrap();
    let kubeconfig = kubeconfig.to_string_lossy().into_owned();
    tokio::task::spawn_blocking(move || {
        let line = ["ops-pod-cleaner", "--context", "west", "scan", "-n", ""];
        let west = bash_completes_with(&line, &kubeconfig);
        for ns in ["search", "kube-system"] {
            assert!(west.contains(&ns.to_string()), "{ns} in {west:?}");
        }
        assert!(
            west.iter().all(|ns| !ns.contains('\u{1b}') && ns != "ads"),
            "a name no real server writes reaches the shell: {west:?}"
        );
        assert!(
            !west.contains(&"shop".to_string()),
            "east's namespace: {west:?}"
        );
        let line = ["ops-pod-cleaner", "scan", "--namespace", "pa"];
        assert_eq!(bash_completes_with(&line, &kubeconfig), ["payments"]);
        // The same as a kubectl plugin, through its completer.
        let completer =
            std::path::Path::new(&kubeconfig).with_file_name("kubectl_complete-pod_cleaner");
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ops-pod-cleaner"), &completer).unwrap();
        let answer = Command::new(&completer)
            .args(["--context", "west", "scan", "-n", "s"])
            .env("KUBECONFIG", &kubeconfig)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&answer.stdout), "search\n:4\n");
        let started = std::time::Instant::now();
        let line = ["ops-pod-cleaner", "--context", "nowhere", "scan", "-n", ""];
        let nowhere = bash_completes_with(&line, &kubeconfig);
        assert!(nowhere.is_empty(), "{nowhere:?}");
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    })
    .await
    .unwrap();
}
