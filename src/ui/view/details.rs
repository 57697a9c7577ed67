//! One pod in full: conditions, containers with messages and exit codes, finalizers, owners,
//! events. Fetched from the API when opened.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Widget, Wrap};

use super::inert_line;
use crate::ui::state::{DetailsContent, State};
use crate::ui::theme;

pub(crate) fn render(state: &State, area: Rect, buf: &mut Buffer) {
    let Some(details) = &state.details else {
        return;
    };
    let block = Block::bordered()
        .title(inert_line(&format!(
            " {}/{} — details (Esc back) ",
            details.pod.namespace, details.pod.name
        )))
        .title_style(theme::title());
    let mut lines: Vec<Line> = Vec::new();
    // What the cache knows is shown at once; the API adds the rest.
    if let Some(a) = state
        .findings
        .iter()
        .find(|a| *a.pod.uid == *details.pod.uid)
    {
        lines.push(Line::styled(
            inert_line(&format!(
                "{}: {}{}",
                a.finding.rule,
                a.finding.reason,
                a.finding
                    .message
                    .as_deref()
                    .map(|m| format!(" — {m}"))
                    .unwrap_or_default()
            )),
            theme::warn(),
        ));
        // Why, on what it rests, and what next: from the cached status and Events, or as the
        // cluster's worker told it, at once.
        let cause = a.full_cause(state.now);
        lines.push(Line::styled(
            inert_line(&format!("cause: {} — {}", cause.class, cause.detail)),
            theme::title(),
        ));
        for evidence in &cause.evidence {
            lines.push(Line::raw(inert_line(&format!(
                "  {}: {}",
                evidence.source, evidence.text
            ))));
        }
        lines.push(Line::raw(inert_line(&format!("  next: {}", cause.next))));
    }
    match &details.content {
        DetailsContent::Loading => lines.push(Line::styled("fetching the pod…", theme::dim())),
        DetailsContent::Failed(why) => {
            lines.push(Line::styled(inert_line(&why.to_string()), theme::bad()));
        }
        DetailsContent::Loaded(d) => lines.extend(d.lines().into_iter().map(|(heading, text)| {
            let text = inert_line(&text);
            if heading {
                Line::styled(text, theme::title())
            } else {
                Line::raw(text)
            }
        })),
    }
    Paragraph::new(lines)
        .block(block)
        .wrap(Wrap { trim: false })
        .scroll((details.scroll, 0))
        .render(area, buf);
}
