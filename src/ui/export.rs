//! Writing the restart report to a file from the report pane.

use std::path::{Path, PathBuf};

use crate::error::IoOp;
use crate::report::RestartReport;
use crate::{Error, Result};

/// Writes the report as Markdown (the chat and file sinks' shape); returns the path written.
pub(crate) async fn write(dir: &Path, report: &RestartReport) -> Result<PathBuf> {
    let name = format!(
        "ops-pod-cleaner-report-{}.md",
        report.generated.format("%Y%m%d-%H%M%S")
    );
    let path = dir.join(name);
    let text = crate::report::render::markdown(report);
    match tokio::fs::write(&path, text).await {
        Ok(()) => Ok(path),
        Err(source) => Err(Error::Io {
            path,
            op: IoOp::Write,
            source,
        }),
    }
}
