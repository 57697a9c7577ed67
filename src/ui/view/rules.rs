//! The chain in order: enabled, auto, matches now, actions taken, why paused or held.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::{Row, Widget};

use super::inert_line;
use crate::ui::event::SourceLine;
use crate::ui::state::State;
use crate::ui::theme;

pub(crate) fn render(state: &State, area: Rect, buf: &mut Buffer) {
    // Every cluster's worker as one, merged once for the whole pane.
    let worker = state.worker();
    let block = super::titled(format!(
        " Rules (chain order) · auto master {} · ←/→ panes ",
        if worker.master_auto { "ON" } else { "off" }
    ));
    // A fed cluster's own worker holds its Lease and acts there: its switches are said, not
    // offered, since no key here changes them.
    let block = state
        .cluster_lines()
        .iter()
        .fold(block, |block, c| match &c.source {
            SourceLine::Worker { worker, .. } => block.title_bottom(format!(
                " {} ",
                super::source::worker_words(&c.name, worker)
            )),
            SourceLine::Watch(_) => block,
        });
    let rows = state.chain.iter().enumerate().map(|(i, rule)| {
        let status = worker.rules.get(&rule.kind).cloned().unwrap_or_default();
        let paused = status
            .paused
            .iter()
            .map(|p| format!("PAUSED {}: {}", p.scope, p.why()))
            .collect::<Vec<_>>()
            .join("; ");
        let note = match (paused.is_empty(), &status.held_reason, rule.enabled) {
            (_, _, false) => "disabled".to_string(),
            (false, _, _) => inert_line(&paused),
            // A hold may name the workload it held on: a name a tenant wrote.
            (true, Some(why), _) => inert_line(&format!("HELD {}: {why}", status.held)),
            (true, None, _) => String::new(),
        };
        let row = Row::new(vec![
            format!("{}", i + 1),
            rule.kind.name().to_string(),
            if rule.enabled { "on" } else { "off" }.to_string(),
            if status.auto { "ON" } else { "off" }.to_string(),
            state.table.counts.get(i).copied().unwrap_or(0).to_string(),
            status.actions_taken.to_string(),
            status.failures.to_string(),
            rule.action.name().to_string(),
            note,
        ]);
        if !status.paused.is_empty() {
            row.style(theme::BAD)
        } else if status.held_reason.is_some() {
            row.style(theme::WARN)
        } else if i == state.table.category {
            row.style(theme::TITLE)
        } else {
            row
        }
    });
    let columns = vec![
        ("#", Constraint::Length(2)),
        ("RULE", Constraint::Length(12)),
        ("ON", Constraint::Length(4)),
        ("AUTO", Constraint::Length(4)),
        ("MATCH", Constraint::Length(6)),
        ("ACTED", Constraint::Length(6)),
        ("FAIL", Constraint::Length(5)),
        ("ACTION", Constraint::Length(11)),
        ("", Constraint::Fill(1)),
    ];
    super::table(rows, columns).block(block).render(area, buf);
}
