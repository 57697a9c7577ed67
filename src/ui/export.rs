//! Writing the restart report to a file from the report pane.

use std::path::Path;

use crate::report::RestartReport;

/// Writes the report as JSON next to the others; returns the path written.
pub async fn write(dir: &Path, report: &RestartReport) -> Result<String, String> {
    let name = format!(
        "ops-pod-cleaner-report-{}.json",
        report.generated.format("%Y%m%d-%H%M%S")
    );
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    tokio::fs::write(&path, text)
        .await
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path.display().to_string())
}
