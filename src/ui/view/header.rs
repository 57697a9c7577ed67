//! Two lines: where we are and how the watch is; what auto-clean is doing.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::fit;
use crate::ui::state::{State, WatchLine};
use crate::ui::theme;

pub fn render(state: &State, area: Rect, buf: &mut Buffer) {
    let abnormal: usize = state.counts.iter().sum();
    let watch = match &state.watch {
        WatchLine::Listing => Span::styled("listing…", theme::warn()),
        WatchLine::Synced => Span::styled("● synced", theme::good()),
        WatchLine::Relisting { stale_secs: None } => Span::styled("relisting…", theme::warn()),
        WatchLine::Relisting {
            stale_secs: Some(secs),
        } => Span::styled(format!("relisting… (stale {secs} s)"), theme::bad()),
        WatchLine::Reconnecting { secs, error } => Span::styled(
            format!("reconnecting for {secs} s: {}", fit(error, 48)),
            theme::bad(),
        ),
    };
    // Badges first: a narrow terminal cuts the end of the line, never them.
    let mut first = vec![Span::styled("ops-pod-cleaner", theme::title())];
    if state.dry_run || state.worker.dry_run {
        first.push(Span::raw(" "));
        first.push(Span::styled(" DRY-RUN ", theme::badge(Color::Yellow)));
    }
    if state.readonly {
        first.push(Span::raw(" "));
        first.push(Span::styled(" READONLY ", theme::badge(Color::Blue)));
    }
    if state.no_audit {
        first.push(Span::raw(" "));
        first.push(Span::styled(" NO-AUDIT ", theme::badge(Color::Red)));
    }
    first.extend([
        Span::raw("  ctx "),
        Span::styled(state.context.clone(), theme::accent()),
        Span::raw("  "),
        Span::raw(state.scope.clone()),
        Span::raw("  "),
        watch,
        Span::raw(format!("  pods {}  abnormal {abnormal}", state.total_pods)),
    ]);
    Paragraph::new(vec![Line::from(first), auto_line(state)]).render(area, buf);
}

fn auto_line(state: &State) -> Line<'static> {
    let w = &state.worker;
    let mut spans = vec![Span::raw("AUTO ")];
    spans.push(if w.master_auto {
        Span::styled("ON", theme::badge(Color::Green))
    } else {
        Span::styled("off", theme::dim())
    });
    let on: Vec<&str> = state
        .chain
        .iter()
        .filter(|r| w.rules.get(&r.kind).is_some_and(|s| s.auto))
        .map(|r| r.kind.name())
        .collect();
    spans.push(Span::raw(if on.is_empty() {
        "  rules: none".to_string()
    } else {
        format!("  rules: {}", on.join(", "))
    }));
    for (rule, status) in &w.rules {
        if let Some(why) = &status.paused {
            spans.push(Span::styled(
                format!("  {rule} PAUSED: {why}"),
                theme::bad(),
            ));
        }
    }
    if let Some(blocked) = &w.blocked {
        spans.push(Span::styled(format!("  blocked: {blocked}"), theme::warn()));
    }
    Line::from(spans)
}
