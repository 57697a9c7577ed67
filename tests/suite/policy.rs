//! One effective policy: computed once from the flags and the config, and the only
//! way any mode gets an executor or a worker.

use std::path::Path;

use opc_core::config::Config;
use opc_core::policy::{Flags, Policy};

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

/// `Executor::new` and `worker::spawn` take a `&Policy`, and only `ClusterSession` calls them;
/// every mode opens its sessions with the policy of its own command line, so a new mode cannot
/// quietly build one from defaults or from one flag.
#[test]
fn every_mode_builds_its_executor_and_worker_from_its_command_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut builders = Vec::new();
    visit(&root.join("crates/core/src"), &mut |path, text| {
        if text.contains("Executor::new(") || text.contains("worker::spawn(") {
            builders.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    });
    assert_eq!(builders, ["session.rs"], "only the session builds them");
    let mut openers = Vec::new();
    visit(&root.join("src"), &mut |path, text| {
        assert!(
            !text.contains("Executor::new(") && !text.contains("worker::spawn("),
            "{} builds an executor or a worker outside a session",
            path.display()
        );
        // Watched, fed by its worker, or as its source says: every way a session opens.
        if text.contains("ClusterSession::open") {
            openers.push(path.file_name().unwrap().to_string_lossy().into_owned());
            assert!(
                text.contains("Policy::new(global.flags(), "),
                "{} opens a session without the policy of its command line",
                path.display()
            );
        }
    });
    openers.sort();
    assert_eq!(openers, ["headless.rs", "tui.rs"]);
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
