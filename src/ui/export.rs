//! Writing the restart report to a file from the report pane.

use std::path::{Path, PathBuf};

use crate::Result;
use opc_core::error::IoOp;
use opc_core::report::{RestartReport, write_atomically};

/// Writes the report as Markdown (the chat and file sinks' shape); returns the path written.
/// Written beside and renamed over its name, so a link planted under that name (it is known
/// in advance) is replaced, never written through.
pub async fn write(dir: &Path, report: &RestartReport) -> Result<PathBuf> {
    let name = format!(
        "ops-pod-cleaner-report-{}.md",
        report.generated.format("%Y%m%d-%H%M%S")
    );
    let path = dir.join(name);
    let text = opc_core::report::render::markdown(report);
    let target = path.clone();
    let written =
        tokio::task::spawn_blocking(move || write_atomically(&target, text.as_bytes())).await;
    match written {
        Ok(Ok(())) => Ok(path),
        Ok(Err(e)) => Err(e.into()),
        Err(e) => Err(opc_core::Error::Io {
            path,
            op: IoOp::Write,
            source: std::io::Error::other(e.to_string()),
        }
        .into()),
    }
}
