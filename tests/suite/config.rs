//! Config parsing: both shapes, durations, cron, errors with positions, search order, describe.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use opc_core::config::{
    self, Config, ConfigSource, FileFormat, FixedEnvironment, KeyBinding, KeyCode, LoadError,
    Problem, Secret, SecretSource, Sink,
};
use opc_core::error::IoOp;
use opc_core::rules::{ActionKind, NamespaceFilter, RuleKind, RuleSpec};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/config")
        .join(name)
}

/// The settings of `kind` in the chain.
fn rule(config: &Config, kind: RuleKind) -> Option<&RuleSpec> {
    config.rules.iter().find(|r| r.kind == kind)
}

fn parse(text: &str) -> Config {
    match Config::from_yaml(text, "test.yml") {
        Ok(config) => config,
        Err(e) => panic!("expected {text:?} to parse, got: {e}"),
    }
}

/// The message of a config error; anything else fails the test.
fn error(text: &str) -> String {
    match Config::from_yaml(text, "config.yml") {
        Err(error) => error.to_string(),
        Ok(config) => panic!("expected {text:?} to be rejected, got {config:?}"),
    }
}

fn kinds(config: &Config) -> Vec<RuleKind> {
    config.rules.iter().map(|r| r.kind).collect()
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn only(ns: &str) -> NamespaceFilter {
    NamespaceFilter {
        include: names(&[ns]),
        exclude: vec![],
    }
}

#[test]
fn seed_file_loads_unchanged_with_every_value_mapped() {
    let path = fixture("seed.yaml");
    let config = Config::load_file(&path).expect("the seed file loads");
    assert_eq!(config.source, ConfigSource::File(path));
    assert_eq!(kinds(&config), RuleKind::ALL.to_vec(), "seed chain order");

    let evicted = rule(&config, RuleKind::Evicted).unwrap();
    assert_eq!(evicted.namespaces, only("default"));
    assert!(evicted.auto && evicted.enabled);
    assert_eq!(evicted.action, ActionKind::Delete);

    let terminating = rule(&config, RuleKind::Terminating).unwrap();
    assert_eq!(terminating.namespaces, only("default"));
    assert_eq!(terminating.after, Duration::from_secs(120));
    assert!(terminating.auto);

    let pull = rule(&config, RuleKind::ImagePull).unwrap();
    assert_eq!(pull.namespaces, only("default"));
    assert_eq!(pull.after, Duration::from_secs(5));
    assert_eq!(pull.reasons, names(&["ErrImagePull", "ImagePullBackOff"]));
    assert!(pull.auto);

    let crash = rule(&config, RuleKind::CrashLoop).unwrap();
    assert_eq!(crash.namespaces, only("default"));
    assert_eq!(crash.after, Duration::from_secs(1));
    let reasons = names(&[
        "CrashLoopBackOff",
        "Error",
        "Completed",
        "RunContainerError",
    ]);
    assert_eq!(crash.reasons, reasons);
    assert_eq!(crash.restarts, 2);
    assert!(
        !crash.auto,
        "tooManyRestart.enable drives the report, not auto"
    );

    let report = &config.report;
    assert!(!report.enabled);
    assert_eq!(report.schedule.to_string(), "*/3 * * * * *");
    assert_eq!(report.min_restarts, 2);
    assert_eq!(report.reasons, reasons);
    assert_eq!(report.namespaces, only("default"));
    assert_eq!(report.title, "pod重启次数过多");
    let url = Secret::new("https://open.feishu.cn/open-apis/bot/v2/hook/xxxx");
    assert_eq!(report.sinks, vec![Sink::Feishu { url, secret: None }]);

    // Rules the seed does not know keep their defaults.
    for kind in &RuleKind::ALL[4..] {
        assert_eq!(rule(&config, *kind), Some(&RuleSpec::default_for(*kind)));
    }
}

#[test]
fn lists_and_comma_strings_give_the_same_config() {
    let comma = Config::load_file(&fixture("seed.yaml")).unwrap();
    let mut lists = Config::load_file(&fixture("seed-lists.yaml")).unwrap();
    lists.source = comma.source.clone();
    assert_eq!(comma, lists);

    let spaced = parse("errImagePull:\n  status: \" ErrImagePull , ImagePullBackOff,\"\n");
    let listed = parse("errImagePull:\n  status: [ErrImagePull, ImagePullBackOff]\n");
    assert_eq!(spaced.rules, listed.rules);
}

#[test]
fn seed_subset_keeps_other_defaults() {
    let config = parse("delteEvictedPod:\n  enable: true\n");
    assert!(rule(&config, RuleKind::Evicted).unwrap().auto);
    assert_eq!(
        rule(&config, RuleKind::Terminating),
        Some(&RuleSpec::default_for(RuleKind::Terminating))
    );
    assert_eq!(config.report, Config::default().report);
}

fn after_of(value: &str) -> Result<Duration, String> {
    let text = format!("rules:\n  - rule: pending\n    after: {value}\n");
    match Config::from_yaml(&text, "config.yml") {
        Ok(config) => Ok(config.rules[0].after),
        Err(e) => Err(e.to_string()),
    }
}

#[test]
fn every_go_duration_form() {
    let cases = [
        ("300ms", Duration::from_millis(300)),
        ("5s", Duration::from_secs(5)),
        ("2m", Duration::from_secs(120)),
        ("1h30m", Duration::from_secs(5400)),
        ("1.5h", Duration::from_secs(5400)),
        ("10us", Duration::from_micros(10)),
        ("10µs", Duration::from_micros(10)),
        ("7ns", Duration::from_nanos(7)),
        ("0", Duration::ZERO),
        ("\"0\"", Duration::ZERO),
        ("1h0m0s", Duration::from_secs(3600)),
        (".5s", Duration::from_millis(500)),
    ];
    for (text, want) in cases {
        assert_eq!(after_of(text), Ok(want), "{text}");
    }
}

#[test]
fn bad_durations_say_what_is_expected() {
    let cases = [
        ("5 seconds", "no spaces"),
        ("5sec", "unknown unit \"sec\""),
        ("5", "needs a unit"),
        ("\"5\"", "missing unit"),
        ("1.5", "expected a duration"),
        ("-5s", "negative"),
        ("5d", "unknown unit \"d\""),
        ("h", "expected a number"),
        ("true", "found the boolean true"),
        ("\"\"", "empty duration"),
    ];
    for (text, why) in cases {
        let msg = after_of(text).expect_err(text);
        assert!(
            msg.starts_with("config.yml:3:12: rules[0].after: expected a duration like 300ms"),
            "{text}: {msg}"
        );
        assert!(msg.contains(why), "{text}: {msg}");
    }
}

#[test]
fn the_briefs_example_message() {
    let msg = error("errImagePull:\n  namespaces: default\n  hours: 5 seconds\n");
    assert!(
        msg.starts_with("config.yml:3:10: errImagePull.hours: expected a duration like 300ms, 5s, 2m or 1h30m, found \"5 seconds\""),
        "{msg}"
    );
}

#[test]
fn durations_format_back_go_style() {
    let cases = [
        (0, "0s"),
        (120_000, "2m"),
        (5_400_000, "1h30m"),
        (300, "300ms"),
        (1_500, "1s500ms"),
    ];
    for (millis, want) in cases {
        assert_eq!(config::format_duration(Duration::from_millis(millis)), want);
    }
}

#[test]
fn bad_cron_names_key_and_line() {
    let msg = error("tooManyRestart:\n  counts: 2\n  duration: \"*/3 * * * * * bogus x\"\n");
    assert!(
        msg.starts_with("config.yml:3:13: tooManyRestart.duration: invalid cron schedule"),
        "{msg}"
    );

    let msg = error("report:\n  schedule: \"61 * * * * *\"\n");
    assert!(
        msg.starts_with("config.yml:2:13: report.schedule: invalid cron schedule \"61 * * * * *\""),
        "{msg}"
    );
}

#[test]
fn five_field_cron_says_seconds_come_first() {
    let msg = error("report:\n  schedule: \"0 9 * * MON\"\n");
    assert!(
        msg.starts_with("config.yml:2:13: report.schedule:"),
        "{msg}"
    );
    assert!(msg.contains("seconds first"), "{msg}");
    assert!(msg.contains("\"0 0 9 * * MON\""), "suggests the fix: {msg}");
}

#[test]
fn typical_crons_are_accepted() {
    for cron in ["*/3 * * * * *", "0 0 9 * * MON", "0 30 8 * * Mon-Fri"] {
        let config = parse(&format!("report:\n  schedule: \"{cron}\"\n"));
        assert_eq!(config.report.schedule.to_string(), cron);
        assert!(
            config
                .report
                .schedule
                .schedule()
                .upcoming(chrono::Utc)
                .next()
                .is_some()
        );
    }
}

#[test]
fn unknown_keys_are_errors_with_position_and_allowed_keys() {
    let cases = [
        (
            "errImagePull:\n  enabel: true\n",
            "config.yml:2:3: errImagePull.enabel: unknown key \"enabel\"",
            "namespaces, hours, status, enable",
        ),
        (
            "safety:\n  dryrun: true\n",
            "config.yml:2:3: safety.dryrun: unknown key",
            "dryRun",
        ),
        (
            "rules:\n  - rule: evicted\n    when: 5s\n",
            "config.yml:3:5: rules[0].when: unknown key",
            "after",
        ),
        (
            "rulez: []\n",
            "config.yml:1:1: rulez: unknown key",
            "rules, safety, report, audit, cluster, ui",
        ),
        (
            "delteEvictedPod: {enable: true}\nrules: []\n",
            "config.yml:2:1: rules: cannot be mixed",
            "seed shape",
        ),
    ];
    for (text, start, hint) in cases {
        let msg = error(text);
        assert!(msg.starts_with(start), "{msg}");
        assert!(msg.contains(hint), "{msg}");
    }
}

#[test]
fn wrong_types_are_errors() {
    let cases = [
        (
            "delteEvictedPod:\n  enable: \"yes\"\n",
            "config.yml:2:11: delteEvictedPod.enable: expected true or false, found \"yes\"",
        ),
        (
            "tooManyRestart:\n  counts: many\n",
            "config.yml:2:11: tooManyRestart.counts: expected a whole number",
        ),
        (
            "tooManyRestart:\n  counts: -1\n",
            "config.yml:2:11: tooManyRestart.counts: expected a whole number from 0",
        ),
        (
            "safety:\n  breaker: {share: 1.5}\n",
            "config.yml:2:20: safety.breaker.share: expected a number from 0 to 1",
        ),
        (
            "rules: {rule: evicted}\n",
            "config.yml:1:8: rules: expected a list, found a mapping",
        ),
        (
            "rules:\n  - rule: evicted\n    action: nuke\n",
            "config.yml:3:13: rules[0].action: expected an action: one of none, delete",
        ),
        (
            "rules:\n  - rule: evicted\n    namespaces: default\n",
            "rules[0].namespaces: expected a mapping with keys include, exclude",
        ),
        (
            "- a\n- b\n",
            "config.yml:1:1: top level: expected a mapping",
        ),
        (
            "errImagePull:\n  status: [a, 1]\n",
            "config.yml:2:15: errImagePull.status[1]: expected a name, found the number 1",
        ),
        (
            "report:\n  sinks:\n    - {type: feishu, url: \"ftp://x\"}\n",
            "report.sinks[0].url: expected an http:// or https:// URL",
        ),
        (
            "report:\n  sinks:\n    - {type: teams, url: \"https://x\"}\n",
            "report.sinks[0].type: expected a sink type",
        ),
        (
            "report:\n  sinks:\n    - {type: slack}\n",
            "report.sinks[0]: a slack sink needs \"url\"",
        ),
    ];
    for (text, want) in cases {
        let msg = error(text);
        assert!(msg.contains(want), "want {want:?} in: {msg}");
    }
}

#[test]
fn empty_file_is_an_error_that_says_so() {
    for text in ["", "\n\n", "# only a comment\n", "---\n"] {
        let msg = error(text);
        assert!(msg.starts_with("config.yml: "), "{msg}");
        assert!(msg.contains("empty"), "{text:?}: {msg}");
    }
    assert!(error("~\n").contains("no settings"));
}

#[test]
fn invalid_yaml_is_located() {
    let msg = error("rules:\n  - rule: evicted\n   bad: [\n");
    assert!(msg.starts_with("config.yml:"), "{msg}");
    assert!(msg.contains("invalid YAML"), "{msg}");
}

#[test]
fn duplicate_rule_is_an_error() {
    let msg = error(
        "rules:\n  - rule: imagePull\n  - rule: evicted\n  - rule: imagePull\n    auto: true\n",
    );
    assert!(
        msg.starts_with(
            "config.yml:4:11: rules[2].rule: rule imagePull is listed twice (first on line 2)"
        ),
        "{msg}"
    );
}

#[test]
fn unknown_rule_and_missing_rule_key() {
    assert!(
        error("rules:\n  - rule: oom\n")
            .contains("rules[0].rule: expected a rule name: one of evicted, terminating")
    );
    assert!(error("rules:\n  - auto: true\n").contains("rules[0]: missing key \"rule\""));
}

#[test]
fn native_file_orders_listed_rules_first() {
    let config = Config::load_file(&fixture("native.yaml")).unwrap();
    use RuleKind::*;
    let want = [
        CrashLoop,
        ImagePull,
        Evicted,
        Terminating,
        ConfigError,
        Starting,
        Pending,
        Failed,
        Unknown,
    ];
    assert_eq!(kinds(&config), want);

    let crash = rule(&config, CrashLoop).unwrap();
    assert_eq!(crash.restarts, 3);
    assert_eq!(crash.reasons, names(&["CrashLoopBackOff", "OOMKilled"]));
    assert_eq!(
        crash.action,
        ActionKind::None,
        "unlisted fields keep the rule's default"
    );
    let pull = rule(&config, ImagePull).unwrap();
    assert!(pull.auto);
    assert_eq!(pull.after, Duration::from_secs(5400));
    assert_eq!(pull.namespaces.include, names(&["apps", "web"]));
    assert_eq!(pull.namespaces.exclude, names(&["web-canary"]));
    assert_eq!(pull.reasons, RuleSpec::default_for(ImagePull).reasons);
    assert!(!rule(&config, Evicted).unwrap().enabled);
    assert_eq!(
        rule(&config, Pending),
        Some(&RuleSpec::default_for(Pending))
    );
}

#[test]
fn native_sections() {
    let config = Config::load_file(&fixture("native.yaml")).unwrap();
    let s = &config.safety;
    assert!(!s.is_protected("kube-system"), "explicitly included");
    assert!(s.is_protected("kube-public"));
    assert_eq!(s.max_actions_per_minute, 12);
    assert_eq!(s.max_actions_per_namespace_per_minute, 10, "default kept");
    assert_eq!(s.max_stale, Duration::from_secs(90));
    assert_eq!((s.breaker.min_pods, s.breaker.share), (10, 0.25));
    assert_eq!(s.breaker.min_namespaces, 3);
    assert_eq!(s.breaker.max_workloads, 3, "default kept");
    assert!(s.dry_run);

    let r = &config.report;
    assert!(r.enabled);
    assert_eq!((r.min_restarts, r.title.as_str()), (4, "Weekly restarts"));
    assert_eq!(r.spool_dir, PathBuf::from("/var/spool/opc"));
    let file = Sink::File {
        path: "out/report.csv".into(),
        format: FileFormat::Csv,
    };
    assert_eq!(r.sinks.len(), 4);
    assert_eq!(r.sinks[3], file);
    assert!(matches!(&r.sinks[0], Sink::Feishu { secret: Some(s), .. } if s.expose() == "s3cret"));

    assert_eq!(config.audit.path, PathBuf::from("/var/log/opc-audit.jsonl"));
    assert!(!config.audit.events);
    let ctrl_c = KeyBinding {
        code: KeyCode::Char('c'),
        ctrl: true,
        alt: false,
    };
    assert_eq!(config.ui.key("quit"), Some(&ctrl_c));
    assert_eq!(
        config.ui.key("help"),
        Some(&KeyBinding::parse("F1").unwrap())
    );
    assert_eq!(
        config.ui.key("delete"),
        Some(&KeyBinding::parse("d").unwrap()),
        "default kept"
    );
}

#[test]
fn ui_key_errors() {
    let cases = [
        (
            "ui:\n  keys:\n    nuke: x\n",
            "config.yml:3:5: ui.keys.nuke: unknown key \"nuke\"; allowed keys here: up, down",
        ),
        (
            "ui:\n  keys:\n    quit: Return\n",
            "config.yml:3:11: ui.keys.quit: expected a key",
        ),
        (
            "ui:\n  keys:\n    quit: F13\n",
            "ui.keys.quit: expected a key",
        ),
        (
            "ui:\n  keys:\n    delete: q\n",
            "ui.keys.delete: key \"q\" is also bound to quit",
        ),
    ];
    for (text, want) in cases {
        let msg = error(text);
        assert!(msg.contains(want), "want {want:?} in: {msg}");
    }
    // Swapping two keys is fine when both are rebound.
    let config = parse("ui:\n  keys:\n    delete: q\n    quit: d\n");
    assert_eq!(
        config.ui.action_for(&KeyBinding::parse("q").unwrap()),
        Some("delete")
    );
}

#[test]
fn key_syntax() {
    let cases = [
        ("q", "q"),
        ("Space", "Space"),
        ("enter", "Enter"),
        ("ctrl-R", "ctrl-r"),
        ("alt-x", "alt-x"),
        ("alt-X", "alt-X"),
        ("pagedown", "PageDown"),
        ("F12", "F12"),
        ("-", "-"),
    ];
    for (text, shown) in cases {
        assert_eq!(
            KeyBinding::parse(text).map(|k| k.to_string()),
            Ok(shown.to_string()),
            "{text}"
        );
    }
    for bad in ["", "ctrl-", "F0", "qq", "Return"] {
        assert!(KeyBinding::parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn builtin_equals_code_defaults() {
    let builtin = Config::builtin();
    assert_eq!(builtin, Config::default());
    assert_eq!(builtin.source, ConfigSource::Builtin);
    // The file itself parses (builtin() would hide a broken file behind the code defaults).
    let text = include_str!("../../crates/core/config/default.yaml");
    let mut parsed = Config::from_yaml(text, "config/default.yaml").expect("default.yaml parses");
    parsed.source = ConfigSource::Builtin;
    assert_eq!(parsed, Config::default());
}

#[test]
fn code_defaults() {
    let d = Config::default();
    assert_eq!(kinds(&d), RuleKind::ALL.to_vec());
    assert!(
        d.rules.iter().all(|r| !r.auto),
        "auto-clean is off by default"
    );
    assert_eq!(
        d.safety.protected_namespaces,
        names(&["kube-system", "kube-public", "kube-node-lease"])
    );
    assert_eq!(
        (
            d.safety.max_actions_per_minute,
            d.safety.max_actions_per_namespace_per_minute
        ),
        (30, 10)
    );
    assert_eq!(d.safety.max_stale, Duration::from_secs(30));
    assert!(!d.safety.dry_run && !d.report.enabled && d.audit.events);
    assert_eq!(d.report.schedule.to_string(), config::DEFAULT_SCHEDULE);
    assert_eq!(
        d.ui.keys.len(),
        config::UI_ACTIONS.len(),
        "every action has a key"
    );
}

/// A temp dir with the given files created empty-but-valid.
fn dir_with(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        let path = dir.path().join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "delteEvictedPod: {enable: true}\n").unwrap();
    }
    dir
}

#[test]
fn search_order() {
    let user_file = "user/ops-pod-cleaner/config.yaml";
    let all = [
        "explicit.yaml",
        "env.yaml",
        "config.yml",
        "config.yaml",
        user_file,
    ];
    let dir = dir_with(&all);
    let root = dir.path();
    let user = root.join("user");
    let found = |explicit: Option<&str>, env: Option<&str>| {
        let env = env.map(std::ffi::OsStr::new);
        config::search(explicit.map(Path::new), env, root, Some(&user)).unwrap()
    };
    assert_eq!(
        found(Some("explicit.yaml"), Some("env.yaml")),
        Some(root.join("explicit.yaml"))
    );
    assert_eq!(found(None, Some("env.yaml")), Some(root.join("env.yaml")));
    assert_eq!(
        found(None, Some("")),
        Some(root.join("config.yml")),
        "empty env var is unset"
    );
    assert_eq!(found(None, None), Some(root.join("config.yml")));
    fs::remove_file(root.join("config.yml")).unwrap();
    assert_eq!(found(None, None), Some(root.join("config.yaml")));
    fs::remove_file(root.join("config.yaml")).unwrap();
    assert_eq!(found(None, None), Some(root.join(user_file)));
    fs::remove_file(root.join(user_file)).unwrap();
    assert_eq!(found(None, None), None, "built-in defaults");
    let absolute = root.join("env.yaml");
    let other = tempfile::tempdir().unwrap();
    let env = Some(absolute.as_os_str());
    assert_eq!(
        config::search(None, env, other.path(), None).unwrap(),
        Some(absolute.clone())
    );
}

#[test]
fn named_missing_files_are_errors_not_fallthrough() {
    let dir = dir_with(&["config.yml"]);
    let root = dir.path();
    let missing = Some(std::ffi::OsStr::new("nope.yaml"));
    let by_flag = config::search(Some(Path::new("nope.yaml")), None, root, None);
    let by_env = config::search(None, missing, root, None);
    for (result, by) in [(by_flag, "--config"), (by_env, "$OPS_POD_CLEANER_CONFIG")] {
        match result {
            Err(error) => {
                assert!(error.origin.ends_with("nope.yaml"), "{error}");
                let named_by = by.to_string();
                assert_eq!(error.problem, Problem::NotFound { named_by });
            }
            other => panic!("expected an error naming {by}, got {other:?}"),
        }
    }
}

#[test]
fn load_file_errors() {
    let missing = Config::load_file(Path::new("/nonexistent/ops-pod-cleaner.yaml"));
    assert!(
        matches!(missing, Err(LoadError::Io { op: IoOp::Read, .. })),
        "{missing:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yml");
    fs::write(&path, "delteEvictedPod:\n  enable: 1\n").unwrap();
    let msg = Config::load_file(&path).unwrap_err().to_string();
    assert!(
        msg.starts_with(&format!("{}:2:11: delteEvictedPod.enable", path.display())),
        "{msg}"
    );
}

#[test]
fn describe_shows_effective_rules_and_hides_secrets() {
    let config = Config::load_file(&fixture("native.yaml")).unwrap();
    let text = config.describe();
    let lines: Vec<&str> = text.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.trim_start().starts_with("RULE"))
        .expect(&text);
    let rules: Vec<&str> = lines[header + 1..header + 10]
        .iter()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        rules,
        [
            "crashLoop",
            "imagePull",
            "evicted",
            "terminating",
            "configError",
            "starting",
            "pending",
            "failed",
            "unknown"
        ]
    );

    let pull = lines[header + 2];
    for want in [
        "imagePull",
        "yes",
        "1h30m",
        "scaleToZero",
        "apps,web except web-canary",
        "ErrImagePull",
    ] {
        assert!(pull.contains(want), "{want:?} in {pull:?}");
    }
    // Aligned: every column starts where its header does.
    let col = lines[header].find("ACTION").unwrap();
    assert_eq!(&pull[col..col + "scaleToZero".len()], "scaleToZero");
    assert!(
        lines[header + 4].contains("5m"),
        "terminating after: {}",
        lines[header + 4]
    );

    for want in [
        "\"0 0 9 * * MON\"",
        "Weekly restarts",
        "feishu  https://open.feishu.cn/… (url inline; signed, secret inline)",
        "slack   https://hooks.slack.com/… (url inline)",
        "webhook https://example.com/… (url inline)",
        "out/report.csv (csv)",
        "dry run:      yes",
        "12/min overall",
        "1m30s",
        "25%",
        "kube-public",
    ] {
        assert!(text.contains(want), "{want:?} missing in:\n{text}");
    }
    for secret in ["s3cret", "abc123", "tokenXYZ", "token=abc"] {
        assert!(!text.contains(secret), "{secret} leaked:\n{text}");
    }
}

#[test]
fn describe_builtin() {
    let text = Config::builtin().describe();
    assert!(text.starts_with("config: built-in defaults\n"), "{text}");
    assert!(text.contains("sinks:        none"), "{text}");
    let evicted = text
        .lines()
        .find(|l| l.trim_start().starts_with("evicted"))
        .unwrap();
    assert_eq!(
        evicted.split_whitespace().collect::<Vec<_>>(),
        ["evicted", "yes", "no", "0s", "-", "delete", "all", "-"]
    );
}

#[test]
fn null_values_keep_defaults() {
    let config = parse("errImagePull:\n  hours:\n  enable: true\n");
    let pull = rule(&config, RuleKind::ImagePull).unwrap();
    assert_eq!(pull.after, RuleSpec::default_for(RuleKind::ImagePull).after);
    assert!(pull.auto);
}

/// `report.sinks` with one entry per line of flow mapping.
fn sinks(entries: &[&str]) -> String {
    let mut text = "report:\n  sinks:\n".to_string();
    for entry in entries {
        text.push_str(&format!("    - {entry}\n"));
    }
    text
}

fn parse_in(text: &str, env: &FixedEnvironment) -> Result<Config, String> {
    Config::from_yaml_in(text, "config.yml", env).map_err(|e| e.to_string())
}

/// A sink whose Secret is optional (an install that has not created it yet) is left out
/// while its file or variable is absent, and `check-config` says so; without `optional`, or
/// with the file there but empty, it is an error as before.
#[test]
fn a_sink_reading_an_optional_secret_that_is_absent_is_left_out_and_said() {
    let text = sinks(&[
        "{type: feishu, urlFrom: {file: /etc/hooks/feishu-url, optional: true}, secretFrom: {file: /etc/hooks/feishu-secret, optional: true}}",
        "{type: slack, urlFrom: {env: SLACK_URL, optional: true}}",
        "{type: webhook, url: \"https://example.com/hook\"}",
    ]);
    let config = parse_in(&text, &FixedEnvironment::default()).unwrap();
    assert_eq!(
        config.report.sinks,
        [Sink::Webhook {
            url: Secret::new("https://example.com/hook")
        }]
    );
    let said = config.describe();
    for want in [
        "feishu sink left out: file /etc/hooks/feishu-url is absent (optional)",
        "slack sink left out: environment variable SLACK_URL is not set (optional)",
    ] {
        assert!(said.contains(want), "{want:?} in {said}");
    }
    // Once the Secret is there, the sink is read as any other.
    let env = FixedEnvironment::default()
        .with_file(
            "/etc/hooks/feishu-url",
            "https://open.feishu.cn/open-apis/bot/v2/hook/t\n",
        )
        .with_file("/etc/hooks/feishu-secret", "s1gn\n")
        .with_var("SLACK_URL", "https://hooks.slack.com/services/T/B/x");
    let config = parse_in(&text, &env).unwrap();
    assert_eq!(config.report.sinks.len(), 3, "{:?}", config.report.sinks);
    // Not optional: an absent file is the config's error, as a typo would be.
    let strict = sinks(&["{type: slack, urlFrom: {file: /etc/hooks/slack-url}}"]);
    let error = parse_in(&strict, &FixedEnvironment::default()).unwrap_err();
    assert!(
        error.contains("cannot read /etc/hooks/slack-url"),
        "{error}"
    );
    let empty = env.with_file("/etc/hooks/feishu-url", "\n");
    let error = parse_in(&text, &empty).unwrap_err();
    assert!(error.contains("is empty"), "{error}");
}

#[test]
fn sinks_read_url_and_secret_from_env_and_files() {
    let env = FixedEnvironment::default()
        .with_var(
            "FEISHU_URL",
            "https://open.feishu.cn/open-apis/bot/v2/hook/t0k\n",
        )
        .with_file("/run/secrets/feishu-secret", "s1gn\n")
        .with_file(
            "/run/secrets/slack-url",
            "https://hooks.slack.com/services/T/B/x",
        );
    let text = sinks(&[
        "{type: feishu, urlFrom: {env: FEISHU_URL}, secretFrom: {file: /run/secrets/feishu-secret}}",
        "{type: slack, urlFrom: {file: /run/secrets/slack-url}}",
        "{type: webhook, url: \"https://example.com/hook\"}",
    ]);
    let config = parse_in(&text, &env).unwrap();
    let feishu_url = Secret::from_source(
        "https://open.feishu.cn/open-apis/bot/v2/hook/t0k",
        SecretSource::Env("FEISHU_URL".into()),
    );
    let feishu_secret = Secret::from_source(
        "s1gn",
        SecretSource::File("/run/secrets/feishu-secret".into()),
    );
    let slack_url = Secret::from_source(
        "https://hooks.slack.com/services/T/B/x",
        SecretSource::File("/run/secrets/slack-url".into()),
    );
    assert_eq!(
        config.report.sinks,
        [
            Sink::Feishu {
                url: feishu_url,
                secret: Some(feishu_secret)
            },
            Sink::Slack { url: slack_url },
            Sink::Webhook {
                url: Secret::new("https://example.com/hook")
            },
        ],
        "values trimmed, sources kept"
    );
    let text = config.describe();
    for want in [
        "feishu  https://open.feishu.cn/… (url from env FEISHU_URL; signed, secret from file /run/secrets/feishu-secret)",
        "slack   https://hooks.slack.com/… (url from file /run/secrets/slack-url)",
        "webhook https://example.com/… (url inline)",
    ] {
        assert!(text.contains(want), "{want:?} missing in:\n{text}");
    }
}

#[test]
fn secret_files_are_read_from_disk_relative_to_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("feishu-secret");
    fs::write(&secret, "s1gn\n").unwrap();
    let path = dir.path().join("config.yml");
    let text = sinks(&[&format!(
        "{{type: feishu, url: \"https://x.test/h\", secretFrom: {{file: {}}}}}",
        secret.display()
    )]);
    fs::write(&path, text).unwrap();
    let config = Config::load_file(&path).unwrap();
    let Sink::Feishu {
        secret: Some(read), ..
    } = &config.report.sinks[0]
    else {
        panic!("{:?}", config.report.sinks);
    };
    assert_eq!(read.expose(), "s1gn");
    assert_eq!(read.source(), &SecretSource::File(secret));
}

#[test]
fn secret_source_errors_name_the_key_and_the_source() {
    let env = FixedEnvironment::default()
        .with_var("EMPTY", "  \n")
        .with_var("TYPO", "htps://open.feishu.cn/open-apis/bot/v2/hook/t0k");
    let cases = [
        (
            "{type: slack, urlFrom: {env: NOPE}}",
            "config.yml:3:36: report.sinks[0].urlFrom.env: environment variable NOPE is not set",
        ),
        (
            "{type: slack, urlFrom: {env: EMPTY}}",
            "report.sinks[0].urlFrom.env: environment variable EMPTY is empty",
        ),
        (
            "{type: feishu, url: \"https://x.test/h\", secretFrom: {file: /missing/secret}}",
            "report.sinks[0].secretFrom.file: cannot read /missing/secret: No such file",
        ),
        (
            "{type: slack, urlFrom: {env: TYPO}}",
            "report.sinks[0].urlFrom.env: env TYPO holds no usable URL: expected an http:// or \
             https:// URL, found htps://open.feishu.cn/… (the rest is not shown",
        ),
        (
            "{type: slack, url: \"https://x.test/h\", urlFrom: {env: TYPO}}",
            "report.sinks[0].urlFrom: give either \"url\" or \"urlFrom\", not both",
        ),
        (
            "{type: feishu, url: \"https://x.test/h\", secret: s, secretFrom: {env: TYPO}}",
            "report.sinks[0].secretFrom: give either \"secret\" or \"secretFrom\", not both",
        ),
        (
            "{type: slack, urlFrom: {}}",
            "report.sinks[0].urlFrom: expected exactly one of {env: VARIABLE} or {file: PATH}",
        ),
        (
            "{type: slack, urlFrom: {env: A, file: /b}}",
            "report.sinks[0].urlFrom: expected exactly one of",
        ),
        (
            "{type: slack, urlFrom: SLACK_URL}",
            "report.sinks[0].urlFrom: expected a mapping with keys env, file, optional, found \"SLACK_URL\"",
        ),
        (
            "{type: slack, urlFrom: {vault: x}}",
            "report.sinks[0].urlFrom.vault: unknown key \"vault\"",
        ),
        (
            "{type: slack, secretFrom: {env: X}}",
            "report.sinks[0].secretFrom: unknown key \"secretFrom\"; allowed keys here: type, url, urlFrom",
        ),
        (
            "{type: webhook}",
            "report.sinks[0]: a webhook sink needs \"url\" or \"urlFrom\" ({env: NAME} or {file: PATH})",
        ),
        (
            "{type: feishu, url: \"https://x.test/h\", secret: \"  \"}",
            "report.sinks[0].secret: expected a non-empty string",
        ),
        (
            "{type: feishu, url: \"https://x.test/h\", secret: 12345}",
            "report.sinks[0].secret: expected a string (quote it if it looks like a number or \
             boolean), found a number (not shown: this key holds a secret)",
        ),
        (
            "{type: slack, url: \"https://\"}",
            "report.sinks[0].url: expected an http:// or https:// URL, found text that is not a URL",
        ),
        (
            "{type: slack, url: \"mailto:ops@example.com\"}",
            "report.sinks[0].url: expected an http:// or https:// URL, found … (the rest",
        ),
    ];
    for (entry, want) in cases {
        let msg = parse_in(&sinks(&[entry]), &env).expect_err(entry);
        assert!(msg.contains(want), "want {want:?} in: {msg}");
    }
}

#[test]
fn the_cluster_section_sets_how_long_to_wait_on_the_api_server() {
    let config = Config::from_yaml(
        "cluster:\n  watchSilence: 90s\n  connectTimeout: 5s\n  requestTimeout: 20s\n",
        "cluster.yaml",
    )
    .unwrap();
    assert_eq!(config.cluster.watch_silence, Duration::from_secs(90));
    assert_eq!(config.cluster.connect_timeout, Duration::from_secs(5));
    assert_eq!(config.cluster.request_timeout, Duration::from_secs(20));
    let deadlines = opc_core::cluster::Deadlines::from_config(&config.cluster).unwrap();
    assert_eq!(deadlines.request, Duration::from_secs(20));
    let watch = opc_core::cluster::watch_settings(&config.cluster).unwrap();
    assert_eq!(watch.stale_after, Duration::from_secs(90));
    let error = Config::from_yaml("cluster:\n  requestTimeout: soon\n", "bad.yaml").unwrap_err();
    assert!(
        error.to_string().contains("cluster.requestTimeout"),
        "{error}"
    );
}

#[test]
fn the_cluster_source_is_read_per_context_and_is_auto_by_default() {
    use opc_core::config::Source;
    let config = Config::from_yaml(
        "cluster:\n  source: auto\n  sourceByContext: {prod-eu: worker, lab: watch}\n",
        "cluster.yaml",
    )
    .unwrap();
    assert_eq!(config.cluster.source_for("prod-eu"), Source::Worker);
    assert_eq!(config.cluster.source_for("lab"), Source::Watch);
    assert_eq!(config.cluster.source_for("staging"), Source::Auto);
    let default = Config::from_yaml("cluster: {}\n", "empty.yaml").unwrap();
    assert_eq!(default.cluster.source_for("prod-eu"), Source::Auto);
    let error = Config::from_yaml(
        "cluster:\n  sourceByContext: {prod-eu: workers}\n",
        "bad.yaml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("cluster.sourceByContext.prod-eu: expected one of auto, worker, watch"),
        "{error}"
    );
}
