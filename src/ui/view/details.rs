//! One pod in full, fetched from the API when opened.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

use chrono::{DateTime, Utc};

use super::inert_line;
use crate::ui::state::{DetailsContent, DetailsView, State};
use crate::ui::theme;
use opc_core::cluster::Listed;
use opc_core::fleet::WorkerAnswer;
use opc_core::rules::Cause;

pub(crate) fn render(state: &State, details: &DetailsView, area: Rect, buf: &mut Buffer) {
    let block = super::titled(inert_line(&format!(
        " {}/{} — details (Esc back) ",
        details.pod.item.namespace, details.pod.item.name
    )));
    let mut lines: Vec<Line> = Vec::new();
    // What the cache knows is shown at once; the API adds the rest.
    if let Some(a) = state
        .table
        .findings
        .iter()
        .find(|a| a.uid() == details.pod.item.uid && *a.cluster() == details.pod.cluster)
    {
        let message = a.message().map_or(String::new(), |m| format!(" — {m}"));
        let said = format!("{}: {}{message}", a.rule(), a.reason());
        lines.push(Line::styled(inert_line(&said), theme::WARN));
        lines.extend(cause_lines(a, details, state.now));
    }
    match &details.content {
        DetailsContent::Loading => lines.push(Line::styled("fetching the pod…", theme::DIM)),
        DetailsContent::Failed(why) => {
            lines.push(Line::styled(inert_line(&why.to_string()), theme::BAD));
        }
        DetailsContent::Loaded(d) => lines.extend(d.lines.iter().map(|(heading, text)| {
            let text = inert_line(text);
            if *heading {
                Line::styled(text, theme::TITLE)
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

/// Why, on what it rests, and what next: from the cache, or as a cluster's worker tells it.
fn cause_lines(a: &Listed, details: &DetailsView, now: DateTime<Utc>) -> Vec<Line<'static>> {
    let answer = match (a.full_cause(now), &details.content) {
        (Some(cause), _) => return lines_of(&cause),
        (None, DetailsContent::Loaded(d)) => d.worker.as_ref(),
        (None, DetailsContent::Loading) => {
            return vec![class_line(a, "asking the cluster's worker why…")];
        }
        (None, DetailsContent::Failed(_)) => None,
    };
    match answer {
        Some(WorkerAnswer::Cause(cause)) => lines_of(cause),
        Some(WorkerAnswer::NotAbnormal) => vec![class_line(
            a,
            "its worker lists the pod as abnormal no more",
        )],
        Some(WorkerAnswer::Unanswered(why)) => {
            vec![class_line(a, &format!("its worker did not say why: {why}"))]
        }
        None => vec![class_line(a, "")],
    }
}

fn lines_of(cause: &Cause) -> Vec<Line<'static>> {
    let heading = format!("cause: {} — {}", cause.class, cause.detail);
    let mut lines = vec![Line::styled(inert_line(&heading), theme::TITLE)];
    for evidence in &cause.evidence {
        let said = format!("  {}: {}", evidence.source, evidence.text);
        lines.push(Line::raw(inert_line(&said)));
    }
    lines.push(Line::raw(inert_line(&format!("  next: {}", cause.next))));
    lines
}

/// The cause's class, which the row carries, and a word on where its words are.
fn class_line(a: &Listed, note: &str) -> Line<'static> {
    let text = match note {
        "" => format!("cause: {}", a.cause()),
        note => format!("cause: {} — {note}", a.cause()),
    };
    Line::styled(inert_line(&text), theme::TITLE)
}
