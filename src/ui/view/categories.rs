//! The categories with their live counts; digits and Tab switch between them.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::ui::state::State;
use crate::ui::theme;
use opc_core::rules::RuleKind;

/// Names short enough for all nine categories to fit in 80 columns.
fn short_name(kind: RuleKind) -> &'static str {
    match kind {
        RuleKind::Evicted => "evict",
        RuleKind::Terminating => "term",
        RuleKind::ImagePull => "image",
        RuleKind::CrashLoop => "crash",
        RuleKind::ConfigError => "config",
        RuleKind::Starting => "start",
        RuleKind::Pending => "pend",
        RuleKind::Failed => "fail",
        RuleKind::Unknown => "unkn",
    }
}

pub(crate) fn render(state: &State, area: Rect, buf: &mut Buffer) {
    if state.blind() {
        let said = "counts unknown: this identity may not see the pods";
        Paragraph::new(Line::from(Span::styled(said, theme::BAD))).render(area, buf);
        return;
    }
    let label = |i: usize, kind: RuleKind, short: bool| {
        let count = state.table.counts.get(i).copied().unwrap_or(0);
        if short {
            format!("{} {count}", short_name(kind))
        } else {
            format!("{}:{} {count}", i + 1, kind.name())
        }
    };
    let long: usize = state
        .chain
        .iter()
        .enumerate()
        .map(|(i, rule)| label(i, rule.kind, false).chars().count() + 1)
        .sum();
    let short = long > usize::from(area.width);
    let mut spans = Vec::new();
    for (i, rule) in state.chain.iter().enumerate() {
        let count = state.table.counts.get(i).copied().unwrap_or(0);
        let style = if i == state.table.category {
            theme::SELECTED
        } else if rule.enabled && count > 0 {
            theme::TITLE
        } else {
            theme::DIM
        };
        spans.push(Span::styled(label(i, rule.kind, short), style));
        spans.push(Span::raw(" "));
    }
    Paragraph::new(Line::from(spans)).render(area, buf);
}
