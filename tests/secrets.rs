//! Secrets never appear in output (issue 11, item 2): a canary token and a canary signing
//! secret pushed through every output path this crate has.

use std::process::{Command, Output};

use ops_pod_cleaner::config::{self, Config, Secret, SecretSource};

const TOKEN: &str = "CANARYtok3n9f2d";
const SIGNING: &str = "CANARYs1gn7a4e";

fn leaks(text: &str) -> Option<&'static str> {
    [TOKEN, SIGNING, "9f2d", "7a4e"]
        .into_iter()
        .find(|c| text.contains(c))
}

fn assert_clean(what: &str, text: &str) {
    if let Some(canary) = leaks(text) {
        panic!("{what} leaks {canary:?}:\n{text}");
    }
}

fn config_error(text: &str) -> String {
    match Config::from_yaml(text, "config.yml") {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected an error for:\n{text}"),
    }
}

fn check_config(text: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yml");
    std::fs::write(&path, text).unwrap();
    Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
        .arg("check-config")
        .arg(&path)
        .output()
        .expect("the binary runs")
}

#[test]
fn repro_a_mistyped_scheme_is_not_echoed() {
    let text = format!(
        "report:\n  sinks:\n    - {{type: feishu, url: \"htps://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}\"}}\n"
    );
    let out = check_config(&text);
    assert_eq!(out.status.code(), Some(2));
    assert_clean("check-config stderr", &String::from_utf8_lossy(&out.stderr));
}

#[test]
fn repro_a_numeric_secret_is_not_echoed() {
    let msg = config_error(
        "report:\n  sinks:\n    - {type: feishu, url: \"https://x.test/h\", secret: 8675309042}\n",
    );
    assert!(msg.contains("report.sinks[0].secret"), "{msg}");
    assert!(!msg.contains("8675309042"), "{msg}");
}

#[test]
fn repro_masking_hides_the_token_in_every_url_shape() {
    for url in [
        format!("https://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}/"),
        format!("https://hooks.slack.com/services/{TOKEN}/B0/xyz"),
        format!("https://example.com/hook/{TOKEN}?x=1"),
    ] {
        let text = format!("report:\n  sinks:\n    - {{type: webhook, url: \"{url}\"}}\n");
        let config = Config::from_yaml(&text, "config.yml").unwrap();
        assert_clean(&url, &config.describe());
    }
}

#[test]
fn mask_url_shows_scheme_and_host_only_for_every_shape() {
    let cases = [
        (
            format!("https://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}"),
            "https://open.feishu.cn/…",
        ),
        (
            format!("https://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}/"),
            "https://open.feishu.cn/…",
        ),
        (
            format!("https://hooks.slack.com/services/{TOKEN}/B0/xyz"),
            "https://hooks.slack.com/…",
        ),
        (
            format!("https://example.com/hook?token={TOKEN}&a=b"),
            "https://example.com/…",
        ),
        (
            format!("https://example.com/hook#{TOKEN}"),
            "https://example.com/…",
        ),
        (
            format!("https://bot:{TOKEN}@example.com/hook"),
            "https://example.com/…",
        ),
        (
            format!("https://{TOKEN}@example.com/hook"),
            "https://example.com/…",
        ),
        (
            format!("http://127.0.0.1:8080/{TOKEN}"),
            "http://127.0.0.1:8080/…",
        ),
        (format!("http://[::1]:9/{TOKEN}"), "http://[::1]:9/…"),
        (
            format!("  HTTPS://Open.Feishu.CN/{TOKEN}  "),
            "https://open.feishu.cn/…",
        ),
        (
            format!("htps://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}"),
            "htps://open.feishu.cn/…",
        ),
        (
            "https://open.feishu.cn".to_string(),
            "https://open.feishu.cn/…",
        ),
        (format!("not a url {TOKEN}"), "…"),
        (TOKEN.to_string(), "…"),
        (format!("{TOKEN}:rest"), "…"),
        (format!("https://exa mple.com/{TOKEN}"), "…"),
        (String::new(), "…"),
    ];
    for (url, want) in cases {
        assert_eq!(config::mask_url(&url), want, "{url}");
    }
}

#[test]
fn scrub_removes_what_a_server_may_echo() {
    let url = Secret::new(format!(
        "https://bot:pw{TOKEN}@example.com/open-apis/hook/{TOKEN}/x?sig={TOKEN}a&k=v"
    ));
    let signing = Secret::new(SIGNING);
    let answers = [
        format!("Cannot POST /open-apis/hook/{TOKEN}/x?sig={TOKEN}a&k=v"),
        format!("invalid token {TOKEN}"),
        format!("bad sig {TOKEN}a"),
        format!("sign for {SIGNING} does not match"),
        format!("user pw{TOKEN} unknown"),
        url.expose().to_string(),
    ];
    for answer in answers {
        assert_clean(&answer, &config::scrub(&answer, &[&url, &signing]));
    }
    assert_eq!(
        config::scrub("no_service", &[&url, &signing]),
        "no_service",
        "the rest stays readable"
    );
}

#[test]
fn secrets_redact_themselves_when_printed() {
    let secret = Secret::from_source(TOKEN, SecretSource::Env("FEISHU_URL".into()));
    assert_eq!(format!("{secret:?}"), "Secret(<redacted>, env FEISHU_URL)");
    assert_eq!(format!("{secret}"), "<redacted>");
    assert_eq!(
        format!("{:#?}", Secret::new(SIGNING)),
        "Secret(<redacted>, inline)"
    );
    assert_eq!(
        secret.expose(),
        TOKEN,
        "the value is there for whoever asks by name"
    );
}
