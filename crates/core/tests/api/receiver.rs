//! A webhook receiver on a local port that answers one request as told: what a sink sends,
//! and how the report's delivery takes each answer, as the sink's server sees them.

use opc_core::config::{ReportConfig, Secret, Sink};
use opc_core::report::{DeliveryPolicy, DeliveryResult, Reporter, RestartReport};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

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

/// The body of the one request on `stream`: headers line by line, then as many bytes as
/// their `content-length` says.
async fn read_request(stream: &mut tokio::net::TcpStream) -> String {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        let read = reader.read_line(&mut line).await.unwrap();
        if read == 0 || line == "\r\n" {
            break;
        }
        if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = n.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.unwrap();
    String::from_utf8(body).unwrap()
}
