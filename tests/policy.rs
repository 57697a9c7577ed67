//! One effective policy (SPEC §4): computed once from the flags and the config, and the only
//! way any mode gets an executor or a worker.

use std::path::Path;

use ops_pod_cleaner::config::Config;
use ops_pod_cleaner::policy::{Flags, Policy};

#[test]
fn the_flags_and_the_config_can_each_only_make_it_safer() {
    let dry = Config::from_yaml("safety:\n  dryRun: true\n", "dry.yaml").unwrap();
    let wet = Config::default();
    let none = Flags::default();
    let flag = Flags {
        dry_run: true,
        ..Flags::default()
    };
    assert!(Policy::new(none, &dry).dry_run(), "the config alone");
    assert!(Policy::new(flag, &wet).dry_run(), "the flag alone");
    assert!(!Policy::new(none, &wet).dry_run());
    assert!(Policy::new(none, &wet).events());
    assert!(
        !Policy::new(none, &dry).events(),
        "dry-run writes no Events into the cluster"
    );
    let readonly = Flags {
        readonly: true,
        ..Flags::default()
    };
    assert!(Policy::new(readonly, &wet).readonly());
}

/// `Executor::new` and `worker::spawn` take a `&Policy`; this keeps every caller in the
/// product building that policy from its own command line, so a new mode cannot quietly
/// build one from defaults or from one flag.
#[test]
fn every_mode_builds_its_executor_and_worker_from_its_command_line() {
    let mut callers = Vec::new();
    visit(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut |path, text| {
            if text.contains("Executor::new(") || text.contains("worker::spawn(") {
                callers.push(path.to_path_buf());
                assert!(
                    text.contains("Policy::new(Flags::from(global), "),
                    "{} builds an executor or a worker without the policy of its command line",
                    path.display()
                );
            }
        },
    );
    let names: Vec<String> = callers
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(String::from))
        .collect();
    assert!(
        names.contains(&"tui.rs".into()) && names.contains(&"headless.rs".into()),
        "{names:?}"
    );
}

fn visit(dir: &Path, f: &mut dyn FnMut(&Path, &str)) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            visit(&path, f);
        } else if path.extension().is_some_and(|e| e == "rs") {
            f(&path, &std::fs::read_to_string(&path).unwrap());
        }
    }
}
