//! The restart report as it stands now, grouped by workload.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use super::inert_line;
use crate::ui::state::State;
use crate::ui::theme;
use opc_core::rules::format_age;

pub(crate) fn render(state: &State, area: Rect, buf: &mut Buffer) {
    let send = state.keys.key("send_report").map(|k| k.to_string());
    let export = state.keys.key("export_report").map(|k| k.to_string());
    let block = super::titled(format!(
        " Restart report · {} send · {} export ",
        send.unwrap_or_default(),
        export.unwrap_or_default()
    ));
    let mut lines = Vec::new();
    if let Some(last) = &state.worker().last_report {
        lines.push(Line::styled(format!("last delivery: {last}"), theme::DIM));
    }
    // A fed cluster's pods are not here: its worker counts its restarts, and serves them.
    for line in (state.clusters.lines()).filter(|line| line.source.is_worker()) {
        let said = format!(
            "{} is read through its worker: its restarts are as the worker counts them",
            line.name
        );
        lines.push(Line::styled(inert_line(&said), theme::DIM));
    }
    match &state.report {
        None => lines.push(Line::styled("building…", theme::DIM)),
        Some(r) if r.groups.is_empty() => lines.push(Line::styled(
            "no container restarts often enough to report",
            theme::DIM,
        )),
        Some(r) => {
            if let Some(terms) = &r.terms {
                let bar = format!("too often: {}", terms.describe());
                lines.push(Line::styled(bar, theme::DIM));
            }
            let first = r.terms.as_ref().is_some_and(|t| t.first);
            for group in &r.groups {
                let cluster = group
                    .cluster
                    .as_ref()
                    .map_or(String::new(), |c| format!("{c}  "));
                let workload = format!("{cluster}{} {}", group.namespace, group.workload);
                lines.push(Line::styled(inert_line(&workload), theme::TITLE));
                for row in &group.rows {
                    let since = (row.since(first)).map_or(String::new(), |s| format!(" ({s})"));
                    let reason = row.last_reason.as_deref().unwrap_or("-");
                    let exit = (row.exit_code).map_or(String::new(), |c| format!(" exit {c}"));
                    let ago = (row.last_restart).map_or(String::new(), |t| {
                        format!(" {} ago", format_age(state.now - t))
                    });
                    let node = row.node.as_deref().unwrap_or("-");
                    lines.push(Line::raw(inert_line(&format!(
                        "  {}/{}  restarts {}{since}  {reason}{exit}{ago}  {node}",
                        row.pod, row.container, row.restarts,
                    ))));
                }
            }
        }
    }
    Paragraph::new(lines).block(block).render(area, buf);
}
