//! A webhook receiver on a local port that answers one request as told: what a sink sends,
//! and how the report's delivery takes each answer, as the sink's server sees them.

use opc_core::config::{ReportConfig, Secret, Sink};
use opc_core::report::{DeliveryPolicy, DeliveryResult, Reporter, RestartReport};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Delivers `report` once to the sink `sink` makes of the receiver's URL at `path`, which
/// answers `status` with `answer`; returns the body it received and what became of the report.
pub(crate) async fn deliver(
    sink: impl FnOnce(Secret) -> Sink,
    path: &str,
    report: &RestartReport,
    status: u16,
    answer: &str,
) -> (String, DeliveryResult) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = Secret::new(format!("http://{}{path}", listener.local_addr().unwrap()));
    let answer = format!(
        "HTTP/1.1 {status} Answer\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
        answer.len()
    );
    let receiver = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let body = read_request(&mut stream).await;
        stream.write_all(answer.as_bytes()).await.unwrap();
        body
    });
    let dir = tempfile::tempdir().unwrap();
    let config = ReportConfig {
        sinks: vec![sink(url)],
        spool_dir: dir.path().join("spool"),
        state_file: dir.path().join("state.json"),
        ..ReportConfig::default()
    };
    let policy = DeliveryPolicy {
        attempts: 1,
        ..DeliveryPolicy::default()
    };
    let reporter = Reporter::new(&config, policy).unwrap();
    let mut deliveries = reporter.deliver(report).await;
    (receiver.await.unwrap(), deliveries.remove(0).result)
}

/// The body of the one request on `stream`.
async fn read_request(stream: &mut tokio::net::TcpStream) -> String {
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await.unwrap();
        got.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")?
                        .trim()
                        .parse()
                        .ok()
                })
                .unwrap_or(0);
            if body.len() >= length {
                return body.to_string();
            }
        }
    }
}
