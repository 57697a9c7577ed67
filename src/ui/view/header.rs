//! Two lines: where we are and how the watch is; what auto-clean is doing.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{fit, inert_line};
use crate::ui::event::ClusterLine;
use crate::ui::state::{State, WatchLine};
use crate::ui::theme;
use opc_core::worker::WorkerStatus;

/// How a watch reads, with the error cut to `room` characters.
pub(crate) fn watch_text(watch: &WatchLine, room: usize) -> (String, Style) {
    match watch {
        WatchLine::Listing => ("listing…".into(), theme::WARN),
        WatchLine::Synced => ("● synced".into(), theme::GOOD),
        WatchLine::Relisting { stale_secs: None } => ("relisting…".into(), theme::WARN),
        WatchLine::Relisting {
            stale_secs: Some(secs),
        } => (format!("relisting… (stale {secs} s)"), theme::BAD),
        WatchLine::Reconnecting { secs, error } => (
            format!("reconnecting for {secs} s: {}", fit(error, room)),
            theme::BAD,
        ),
        // The command to check it is in the table, where there is room for it.
        WatchLine::Forbidden { .. } => ("FORBIDDEN: cannot see the pods".into(), theme::BAD),
    }
}

/// One cluster: its name and watch. Several: how many are synced, then the counts, then the
/// worst of the others last, where a narrow terminal cuts (the details are behind `C`).
fn clusters(state: &State) -> Vec<Span<'static>> {
    let lines = state.cluster_lines();
    // A fed cluster sends its abnormal pods only: the total is at least what is counted.
    let fed = lines.iter().any(|c| c.source.is_worker());
    let counts = if state.blind() {
        Span::styled("  pods ?  abnormal ?", theme::BAD)
    } else {
        // A cluster that cannot be seen counts nothing: what is shown is a floor.
        let unseen = state.forbidden().is_some();
        let at_least = |floor: bool| if floor { "≥" } else { "" };
        Span::raw(format!(
            "  pods {}{}  abnormal {}{}",
            at_least(fed || unseen),
            state.total_pods,
            at_least(unseen),
            state.table.counts.iter().sum::<usize>()
        ))
    };
    let mut spans = watches(state, &lines);
    spans.push(counts);
    // After the counts: a narrow terminal cuts this first, but a wide one shows why pods
    // are stuck before any row is read.
    let silent: usize = lines.iter().map(|c| c.nodes_not_reporting).sum();
    if silent > 0 {
        let nodes = if silent == 1 { "node" } else { "nodes" };
        let silent = format!("  {silent} {nodes} not reporting");
        spans.push(Span::styled(silent, theme::BAD));
    }
    spans
}

/// Where the header says how each cluster's watch stands.
fn watches(state: &State, lines: &[&ClusterLine]) -> Vec<Span<'static>> {
    if let [one] = lines {
        let (text, style) = watch_text(&state.watch(), 48);
        let mut spans = vec![
            Span::raw("  ctx "),
            Span::styled(one.name.to_string(), theme::ACCENT),
        ];
        if let Some(tag) = super::source::tag(&one.source) {
            spans.push(Span::styled(format!(" {tag}"), theme::DIM));
        }
        spans.extend([
            Span::raw("  "),
            Span::raw(state.scope.clone()),
            Span::raw("  "),
            Span::styled(text, style),
        ]);
        return spans;
    }
    let synced = lines
        .iter()
        .filter(|c| c.watch == WatchLine::Synced)
        .count();
    let health = if synced == lines.len() {
        theme::GOOD
    } else {
        theme::DIM
    };
    let mut spans = vec![
        Span::raw("  "),
        Span::styled(format!("{} clusters", lines.len()), theme::ACCENT),
        Span::raw(" "),
        Span::styled(format!("● {synced}/{} synced", lines.len()), health),
    ];
    let fed = lines.iter().filter(|c| c.source.is_worker()).count();
    if fed > 0 {
        spans.push(Span::styled(format!(" · {fed} via worker"), theme::DIM));
    }
    // The worst first, before the counts: health is what must fit in 80 columns.
    if let Some(worst) = lines
        .iter()
        .filter(|c| c.watch != WatchLine::Synced)
        .max_by_key(|c| c.watch.severity())
    {
        let (text, style) = match &worst.watch {
            WatchLine::Reconnecting { secs, .. } => (format!("down {secs} s"), theme::BAD),
            WatchLine::Forbidden { .. } => ("forbidden".to_string(), theme::BAD),
            other => watch_text(other, 0),
        };
        spans.push(Span::styled(format!(" · {} {text} (C)", worst.name), style));
    }
    spans
}

pub(crate) fn render(state: &State, area: Rect, buf: &mut Buffer) {
    // Badges first: a narrow terminal cuts the end of the line, never them.
    let worker = state.worker();
    let mut first = vec![Span::styled("ops-pod-cleaner", theme::TITLE)];
    let flags = &state.switches.flags;
    let badges = [
        (flags.dry_run || worker.dry_run, " DRY-RUN ", Color::Yellow),
        (flags.readonly, " READONLY ", Color::Blue),
        (flags.no_audit, " NO-AUDIT ", Color::Red),
    ];
    for (_, badge, color) in badges.into_iter().filter(|(on, _, _)| *on) {
        first.extend([Span::raw(" "), Span::styled(badge, theme::badge(color))]);
    }
    first.extend(clusters(state));
    let width = usize::from(area.width);
    let lines = vec![
        fitted(Line::from(first), width),
        fitted(auto_line(state, &worker), width),
    ];
    Paragraph::new(lines).render(area, buf);
}

/// `line` cut to `width` cells, the cut marked with an ellipsis: a header that runs past the
/// terminal says there is more (`C` and the rules pane have it whole).
fn fitted(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut spans = Vec::new();
    let mut used = 0;
    for span in line.spans {
        let cells = span.width();
        if used + cells < width {
            used += cells;
            spans.push(span);
            continue;
        }
        spans.push(Span::styled(fit(&span.content, width - used), span.style));
        break;
    }
    Line::from(spans)
}

fn auto_line(state: &State, w: &WorkerStatus) -> Line<'static> {
    let mut spans = vec![Span::raw("AUTO ")];
    spans.push(if w.master_auto {
        Span::styled("ON", theme::badge(Color::Green))
    } else {
        Span::styled("off", theme::DIM)
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
        for pause in &status.paused {
            let paused = inert_line(&format!("  {rule} PAUSED {}: {}", pause.scope, pause.why()));
            spans.push(Span::styled(paused, theme::BAD));
        }
    }
    // With auto off nothing waits on the gate (a first start's lease election, say): saying
    // "blocked" then reads like an error where nothing is wrong.
    if let Some(blocked) = state.blocked().filter(|_| w.master_auto) {
        let blocked = inert_line(&format!("  blocked: {blocked}"));
        spans.push(Span::styled(blocked, theme::WARN));
    }
    Line::from(spans)
}
