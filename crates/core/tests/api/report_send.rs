//! One try at one sink, and what its answer means: taken, worth trying again (spooled), or
//! refused for good (a dead letter).

use opc_core::config::{Secret, Sink};
use opc_core::report::DeliveryResult;

use crate::receiver;
use crate::report_inert::report_with;

fn kind(answer: DeliveryResult) -> &'static str {
    match answer {
        DeliveryResult::Sent => "taken",
        DeliveryResult::Spooled { .. } => "transient",
        DeliveryResult::DeadLettered { .. } => "permanent",
        other => panic!("neither taken, spooled nor refused: {other:?}"),
    }
}

/// What becomes of a report at a sink whose server answers `status` with `body`.
async fn answered(sink: fn(Secret) -> Sink, status: u16, body: &str) -> DeliveryResult {
    let report = report_with("web");
    receiver::deliver(sink, "/hook", &report, status, body)
        .await
        .1
}

fn slack(url: Secret) -> Sink {
    Sink::Slack { url }
}

fn feishu(url: Secret) -> Sink {
    Sink::Feishu { url, secret: None }
}

/// A server that echoes the hook's URL puts its token wherever the body has it; a cut
/// made before scrubbing leaves a piece of it that no longer matches the secret.
#[tokio::test]
async fn a_token_split_where_the_answer_is_cut_is_still_scrubbed() {
    let token = "T0k3nAbCdEfGhIjKlMnOpQrStUvWxYz123456";
    let path = format!("/services/{token}");
    let body = format!("{}/services/{token} not found", "x".repeat(180));
    let report = report_with("web");
    let (_, result) = receiver::deliver(slack, &path, &report, 404, &body).await;
    let DeliveryResult::DeadLettered { why: message, .. } = result else {
        panic!("a 404 is permanent");
    };
    assert!(!message.contains(&token[..6]), "{message}");
    assert!(message.starts_with("answered 404: xxx"), "{message}");
}

#[tokio::test]
async fn statuses_sort_into_taken_transient_and_permanent() {
    let cases: [(&[u16], &str); 3] = [
        (&[200, 204], "taken"),
        (&[400, 401, 403, 404, 410], "permanent"),
        (&[408, 429, 500, 502, 503, 304], "transient"),
    ];
    for (codes, want) in cases {
        for &code in codes {
            assert_eq!(kind(answered(slack, code, "x").await), want, "{code}");
        }
    }
}

#[tokio::test]
async fn feishu_codes_refuse_except_the_rate_limit() {
    let ok = 200;
    let bad = 400;
    let cases = [
        (ok, r#"{"code":0,"msg":"success"}"#, "taken"),
        (ok, r#"{"StatusCode":0}"#, "taken"),
        (ok, "", "taken"),
        (ok, r#"{"code":19021,"msg":"sign match fail"}"#, "permanent"),
        (
            ok,
            r#"{"code":19024,"msg":"Key Words Not Found"}"#,
            "permanent",
        ),
        (
            ok,
            r#"{"code":11232,"msg":"frequency limited"}"#,
            "transient",
        ),
        (
            bad,
            r#"{"code":11232,"msg":"frequency limited"}"#,
            "transient",
        ),
        (bad, r#"{"code":9499,"msg":"Bad Request"}"#, "permanent"),
        (502, "", "transient"),
    ];
    for (status, body, want) in cases {
        let got = kind(answered(feishu, status, body).await);
        assert_eq!(got, want, "{status} {body}");
    }
}
