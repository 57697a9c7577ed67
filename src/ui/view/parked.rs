//! The parked workloads, over the screen: where, since when, why, and what undo restores.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Clear, Row, Widget};

use super::{centered, fit, inert_line, titled};
use crate::ui::state::State;
use crate::ui::theme;
use opc_core::actions::{Origin, ParkedList, ParkedRow, ParkedState};
use opc_core::rules::format_age;

pub(crate) fn render(
    state: &State,
    list: Option<&ParkedList>,
    selected: usize,
    area: Rect,
    buf: &mut Buffer,
) {
    let rows = list.map_or(0, |l| l.rows.len() + l.unread.len());
    let rect = centered(area, area.width.saturating_sub(4), rows.max(1) as u16 + 3);
    Clear.render(rect, buf);
    let block = titled(" Parked at 0 replicas ").title_bottom(" ↑/↓ · u or Enter: undo · Esc ");
    let empty = match list {
        None => "reading the parked workloads…",
        Some(l) if l.rows.is_empty() && l.unread.is_empty() => "nothing is parked",
        Some(_) => "",
    };
    let Some(list) = list.filter(|_| empty.is_empty()) else {
        let inner = block.inner(rect);
        block.render(rect, buf);
        Line::styled(empty, theme::DIM).render(inner, buf);
        return;
    };
    let several = state.several_clusters();
    let workload_width = list
        .rows
        .iter()
        .map(|r| opc_core::inert::width(&workload(r)))
        .max()
        .unwrap_or(8)
        .clamp(8, 40);
    let mut columns = vec![
        ("WORKLOAD", Constraint::Length(workload_width as u16)),
        ("BEFORE", Constraint::Length(6)),
        ("PARKED", Constraint::Length(11)),
        ("BY", Constraint::Length(14)),
        ("NOW", Constraint::Length(14)),
        ("TRIGGER", Constraint::Fill(1)),
    ];
    if several {
        columns.insert(0, ("CLUSTER", Constraint::Length(10)));
    }
    let mut table: Vec<Row> = list
        .rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut cells = cells(row, state);
            if several {
                cells.insert(0, Cell::from(inert_line(row.cluster.as_str())));
            }
            let line = Row::new(cells);
            if i == selected {
                line.style(theme::SELECTED)
            } else {
                line
            }
        })
        .collect();
    table.extend(list.unread.iter().map(|u| {
        Row::new(vec![Cell::from(inert_line(&format!(
            "cannot read {}: {}",
            u.place, u.why
        )))])
        .style(theme::BAD)
    }));
    super::table(table, columns).block(block).render(rect, buf);
}

fn cells(row: &ParkedRow, state: &State) -> Vec<Cell<'static>> {
    let parked = row
        .parked_for(state.now)
        .map_or("-".to_string(), |age| format!("for {}", format_age(age)));
    let by = match &row.origin {
        Some(Origin::Auto(rule)) => format!("auto {rule}"),
        Some(Origin::Manual) => "manual".to_string(),
        None => "-".to_string(),
    };
    let now = match &row.now {
        ParkedState::Parked => "at 0".to_string(),
        ParkedState::ScaledUp { replicas } => format!("scaled up to {replicas}"),
        ParkedState::Gone => "gone".to_string(),
        ParkedState::Unknown { why } => format!("? {}", fit(why, 12)),
    };
    let trigger = row.trigger.as_ref().map_or("-".to_string(), |t| {
        let words: Vec<&str> = [&t.pod, &t.reason, &t.message]
            .into_iter()
            .filter_map(|field| field.as_deref())
            .collect();
        words.join("  ")
    });
    vec![
        Cell::from(inert_line(&workload(row))),
        Cell::from(row.replicas_before.to_string()),
        Cell::from(parked),
        Cell::from(by),
        Cell::from(now),
        Cell::from(inert_line(&trigger)),
    ]
}

fn workload(row: &ParkedRow) -> String {
    let w = &row.workload;
    format!("{} {}/{}", w.kind().name(), w.namespace(), w.name())
}
