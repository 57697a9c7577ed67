//! The report's spool caps in the config: `report.spoolMaxAge` and `report.spoolMaxFiles`,
//! their defaults, their errors, and how `check-config` shows them.

use std::time::Duration;

use opc_core::config::Config;

const DAY: u64 = 86_400;

fn report(body: &str) -> Result<Config, String> {
    Config::from_yaml(&format!("report:\n{body}"), "config.yml").map_err(|e| e.to_string())
}

#[test]
fn defaults_are_a_week_and_a_hundred_files() {
    for config in [Config::default(), Config::builtin()] {
        assert_eq!(config.report.spool_max_age, Duration::from_secs(7 * DAY));
        assert_eq!(config.report.spool_max_files, 100);
    }
}

#[test]
fn ages_take_days_or_go_durations_and_zero_turns_a_cap_off() {
    let cases = [
        ("7d", 7 * DAY),
        ("30d", 30 * DAY),
        ("36h", 36 * 3600),
        ("1h30m", 5400),
        ("0", 0),
        ("0d", 0),
    ];
    for (text, secs) in cases {
        let config = report(&format!("  spoolMaxAge: {text}\n")).unwrap();
        assert_eq!(
            config.report.spool_max_age,
            Duration::from_secs(secs),
            "{text}"
        );
    }
    let config = report("  spoolMaxFiles: 0\n").unwrap();
    assert_eq!(config.report.spool_max_files, 0);
    let config = report("  spoolMaxFiles: 12\n").unwrap();
    assert_eq!(config.report.spool_max_files, 12);
}

#[test]
fn bad_caps_name_the_key_and_its_position() {
    for (body, line) in [
        ("  spoolMaxAge: 7 days\n", "config.yml:2:16"),
        ("  spoolMaxAge: 7\n", "config.yml:2:16"),
        ("  spoolMaxFiles: -1\n", "config.yml:2:18"),
        ("  spoolMaxFiles: lots\n", "config.yml:2:18"),
    ] {
        let msg = report(body).unwrap_err();
        let key = body.trim().split(':').next().unwrap();
        assert!(
            msg.contains(line) && msg.contains(&format!("report.{key}")),
            "{body:?}: {msg}"
        );
    }
    let msg = report("  spoolMaxAge: 7 days\n").unwrap_err();
    assert!(msg.contains("like 7d"), "says days are welcome: {msg}");
}

#[test]
fn check_config_shows_the_caps() {
    let text = Config::builtin().describe();
    assert!(
        text.contains("spool caps:   7d, 100 files (older or more are dropped unsent"),
        "{text}"
    );
    let text = report("  spoolMaxAge: 36h\n  spoolMaxFiles: 0\n")
        .unwrap()
        .describe();
    assert!(
        text.contains("spool caps:   36h, any number of files"),
        "{text}"
    );
}
