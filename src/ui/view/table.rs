//! The table of the selected category. Only the visible window is turned into rows, so 15,000
//! abnormal pods cost no more per frame than 20.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Cell, Row, Table, Widget};

use super::fit;
use crate::cluster::Abnormal;
use crate::rules::{ActionKind, format_age};
use crate::ui::state::State;
use crate::ui::theme;

/// Below this width the node and owner columns give way (they are in the details pane).
const WIDE: u16 = 110;

pub(crate) fn render(state: &State, area: Rect, buf: &mut Buffer) {
    let block = Block::bordered()
        .title(title(state))
        .title_style(theme::title());
    let wide = area.width >= WIDE;
    let several = state.several_clusters();
    let mut heading = if wide {
        vec![
            "",
            "NAMESPACE",
            "POD",
            "REASON",
            "FOR",
            "RST",
            "NODE",
            "OWNER",
            "ACTION",
        ]
    } else {
        vec!["", "NAMESPACE", "POD", "REASON", "FOR", "RST", "ACTION"]
    };
    let mut widths: Vec<Constraint> = if wide {
        vec![
            Constraint::Length(1),
            Constraint::Length(14),
            Constraint::Fill(3),
            Constraint::Length(18),
            Constraint::Length(10),
            Constraint::Length(4),
            Constraint::Length(11),
            Constraint::Fill(2),
            Constraint::Length(11),
        ]
    } else {
        vec![
            Constraint::Length(1),
            Constraint::Length(10),
            Constraint::Fill(1),
            Constraint::Length(17),
            Constraint::Length(10),
            Constraint::Length(3),
            Constraint::Length(10),
        ]
    };
    if several {
        // Hidden with one cluster: every row would say the same.
        heading.insert(1, "CLUSTER");
        widths.insert(1, Constraint::Length(if wide { 12 } else { 9 }));
        if !wide {
            // The rule's action is the same on every row; the pod's name needs the room.
            heading.pop();
            widths.pop();
        }
    }
    let height = usize::from(area.height.saturating_sub(3));
    let offset = state
        .offset
        .min(state.rows.len().saturating_sub(height.max(1)));
    let rows: Vec<Row> = state
        .rows
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .filter_map(|(at, &i)| {
            let a = state.findings.get(i)?;
            let mut row = Row::new(cells(state, a, wide, several));
            if state.is_marked(a) {
                row = row.style(theme::marked());
            }
            if at == state.selected {
                row = row.style(theme::selected());
            }
            Some(row)
        })
        .collect();
    if rows.is_empty() {
        let empty = match state.current_rule() {
            Some(rule) if !rule.enabled => format!(" rule {} is disabled in the config", rule.kind),
            _ if !state.filter.is_empty() => " no pod matches the filter (Esc clears it)".into(),
            _ => " nothing abnormal here".into(),
        };
        let inner = block.inner(area);
        block.render(area, buf);
        Line::styled(empty, theme::dim()).render(inner, buf);
        return;
    }
    Table::new(rows, widths)
        .header(Row::new(heading).style(theme::title()))
        .column_spacing(1)
        .block(block)
        .render(area, buf);
}

fn title(state: &State) -> String {
    let Some(rule) = state.current_rule() else {
        return " no rules ".into();
    };
    let count = state.rows.len();
    let mut title = format!(
        " {} — {count} pod{}",
        rule.kind,
        if count == 1 { "" } else { "s" }
    );
    if !state.marks.is_empty() {
        title.push_str(&format!(" · {} marked", state.marks.len()));
    }
    title.push_str(&format!(" · by {}", state.sort.label()));
    if state.filtering || !state.filter.is_empty() {
        title.push_str(&format!(
            " · /{}{}",
            state.filter,
            if state.filtering { "▏" } else { "" }
        ));
    }
    title.push(' ');
    title
}

fn cells<'a>(state: &State, a: &'a Abnormal, wide: bool, several: bool) -> Vec<Cell<'a>> {
    let mark = if state.is_marked(a) { "●" } else { " " };
    let reason = a.finding.reason.clone();
    let age = format!("for {}", format_age(a.finding.time_in_state(state.now)));
    let action = match a.finding.action {
        ActionKind::None => "-".to_string(),
        other => other.name().to_string(),
    };
    let mut cells = vec![
        Cell::from(mark),
        Cell::from(fit(&a.pod.namespace, 14)),
        Cell::from(&*a.pod.name),
        Cell::from(reason),
        Cell::from(age),
        Cell::from(a.pod.total_restarts().to_string()),
    ];
    if several {
        cells.insert(1, Cell::from(&*a.cluster));
        if !wide {
            return cells;
        }
    }
    if wide {
        cells.push(Cell::from(a.pod.node.as_deref().unwrap_or("-").to_string()));
        cells.push(Cell::from(
            a.pod
                .owner
                .as_ref()
                .map_or("-".to_string(), |o| format!("{}/{}", o.kind, o.name)),
        ));
    }
    cells.push(Cell::from(action));
    cells
}
