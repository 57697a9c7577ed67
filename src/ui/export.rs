//! Writing the restart report to a file from the report pane.

use std::path::Path;

use crate::report::RestartReport;

/// Writes the report as Markdown (the chat and file sinks' shape); returns the path written.
pub(crate) async fn write(dir: &Path, report: &RestartReport) -> Result<String, String> {
    let name = format!(
        "ops-pod-cleaner-report-{}.md",
        report.generated.format("%Y%m%d-%H%M%S")
    );
    let path = dir.join(name);
    let text = crate::report::render::markdown(report);
    tokio::fs::write(&path, text)
        .await
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path.display().to_string())
}
