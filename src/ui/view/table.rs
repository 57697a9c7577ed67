//! The table of the selected category. Only the visible window is turned into rows, so 15,000
//! abnormal pods cost no more per frame than 20.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Widget, Wrap};

use super::fit;
use crate::ui::state::State;
use crate::ui::theme;
use opc_core::cluster::Listed;
use opc_core::rules::format_age;

/// Below this width the node and owner columns give way (they are in the details pane).
const WIDE: u16 = 110;
/// From this width the cause's class has a column (it is in the details pane always).
const WIDER: u16 = 150;

pub(crate) fn render(state: &State, area: Rect, buf: &mut Buffer) {
    let block = super::titled(title(state));
    let columns = columns(area.width, state.several_clusters());
    // Each cell is cut to its column's width with an ellipsis, never silently.
    let inner = block.inner(area);
    let widths: Vec<usize> = Layout::horizontal(columns.iter().map(|(_, width, _)| *width))
        .spacing(1)
        .split(Rect { height: 1, ..inner })
        .iter()
        .map(|r| usize::from(r.width))
        .collect();
    let height = usize::from(area.height.saturating_sub(3));
    let rows = visible_rows(state, &columns, &widths, height);
    if rows.is_empty() {
        block.render(area, buf);
        if let Some((what, check)) = state.forbidden() {
            // Blind is not healthy: what to check first, then the API server's words.
            let lines = vec![
                Line::styled(format!(" check with: {check}"), theme::BAD),
                Line::styled(format!(" {}", super::inert_line(what)), theme::BAD),
                Line::styled(
                    " nothing here can be seen, so nothing here is known to be fine",
                    theme::BAD,
                ),
            ];
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .render(inner, buf);
            return;
        }
        Line::styled(empty_text(state), theme::DIM).render(inner, buf);
        return;
    }
    let headings = columns
        .into_iter()
        .map(|(heading, width, _)| (heading, width));
    super::table(rows, headings.collect())
        .block(block)
        .render(area, buf);
}

/// What a row shows in a column.
#[derive(Debug, Clone, Copy)]
enum Text {
    Mark,
    Cluster,
    Namespace,
    Pod,
    Reason,
    Cause,
    Age,
    Restarts,
    Node,
    Owner,
    Action,
}

/// A column's heading, its width, and what each row shows in it.
type Column = (&'static str, Constraint, Text);

/// The table's columns at one width: which show, and how wide each is.
fn columns(width: u16, several: bool) -> Vec<Column> {
    let wide = width >= WIDE;
    let mut columns = if wide {
        wide_columns()
    } else {
        narrow_columns(width, several)
    };
    if width >= WIDER {
        // Room for the longest reasons kubectl prints (`CreateContainerConfigError`,
        // `Init:CrashLoopBackOff`), before the pod's name takes the rest.
        if let Some((_, reason, _)) = columns.get_mut(3) {
            *reason = Constraint::Length(26);
        }
        columns.insert(4, ("CAUSE", Constraint::Length(21), Text::Cause));
    }
    if several {
        // Hidden with one cluster: every row would say the same.
        let width = if wide { 12 } else { 9 };
        columns.insert(1, ("CLUSTER", Constraint::Length(width), Text::Cluster));
        if !wide {
            // The rule's action is the same on every row; the pod's name needs the room.
            columns.pop();
        }
    }
    columns
}

fn wide_columns() -> Vec<Column> {
    vec![
        ("", Constraint::Length(1), Text::Mark),
        ("NAMESPACE", Constraint::Length(14), Text::Namespace),
        ("POD", Constraint::Fill(3), Text::Pod),
        ("REASON", Constraint::Length(18), Text::Reason),
        ("FOR", Constraint::Length(10), Text::Age),
        ("RST", Constraint::Length(4), Text::Restarts),
        ("NODE", Constraint::Length(11), Text::Node),
        ("OWNER", Constraint::Fill(2), Text::Owner),
        ("ACTION", Constraint::Length(ACTION_WIDTH), Text::Action),
    ]
}

/// The pod's name keeps 20 columns as the screen narrows; the reason gives way first.
fn narrow_columns(width: u16, several: bool) -> Vec<Column> {
    let others = 1 + 10 + 10 + 3 + ACTION_WIDTH + 6 + if several { 10 } else { 0 };
    let reason = width.saturating_sub(2 + others + 20).clamp(6, 17);
    vec![
        ("", Constraint::Length(1), Text::Mark),
        ("NAMESPACE", Constraint::Length(10), Text::Namespace),
        ("POD", Constraint::Fill(1), Text::Pod),
        ("REASON", Constraint::Length(reason), Text::Reason),
        ("FOR", Constraint::Length(10), Text::Age),
        ("RST", Constraint::Length(3), Text::Restarts),
        ("ACTION", Constraint::Length(ACTION_WIDTH), Text::Action),
    ]
}

/// The rows that fit in `height` from the window's offset, each cell cut to its width.
fn visible_rows<'a>(
    state: &'a State,
    columns: &[Column],
    widths: &[usize],
    height: usize,
) -> Vec<Row<'a>> {
    let table = &state.table;
    let offset = table
        .offset
        .min(table.rows.len().saturating_sub(height.max(1)));
    (table.rows.iter().enumerate())
        .skip(offset)
        .take(height)
        .filter_map(|(at, &i)| {
            let a = table.findings.get(i)?;
            let cells = columns
                .iter()
                .zip(widths)
                .map(|((_, _, text), &width)| Cell::from(fit(&cell(state, a, *text), width)));
            let mut row = Row::new(cells);
            if state.clusters.is_marked(a) {
                row = row.style(theme::MARKED);
            }
            if at == table.selected {
                row = row.style(theme::SELECTED);
            }
            Some(row)
        })
        .collect()
}

/// Why the table has no rows.
fn empty_text(state: &State) -> String {
    let listing = state
        .cluster_lines()
        .iter()
        .any(|c| c.watch == crate::ui::state::WatchLine::Listing);
    match state.current_rule() {
        Some(rule) if !rule.enabled => format!(" rule {} is disabled in the config", rule.kind),
        _ if !state.table.filter.is_empty() => " no pod matches the filter (Esc clears it)".into(),
        _ if listing => " listing pods… (nothing to show until the first list is in)".into(),
        _ => " nothing abnormal here".into(),
    }
}

fn title(state: &State) -> String {
    let Some(rule) = state.current_rule() else {
        return " no rules ".into();
    };
    let table = &state.table;
    let count = table.rows.len();
    // A filter reaches every category.
    let scope = if table.filter.is_empty() {
        rule.kind.name()
    } else {
        "every category"
    };
    let plural = if count == 1 { "" } else { "s" };
    let mut title = format!(" {scope} — {count} pod{plural}");
    let marked = state.marked_count();
    if marked > 0 {
        title.push_str(&format!(" · {marked} marked"));
    }
    let way = table.sort.direction(table.sort_reversed);
    title.push_str(&format!(" · by {}, {way}", table.sort.label()));
    if table.filtering || !table.filter.is_empty() {
        let cursor = if table.filtering { "▏" } else { "" };
        title.push_str(&format!(" · /{}{cursor}", table.filter));
    }
    title.push(' ');
    title
}

/// Room for the longest action name (`scaleToZero`, `forceDelete`).
const ACTION_WIDTH: u16 = 11;

fn cell(state: &State, a: &Listed, text: Text) -> String {
    match text {
        Text::Mark if state.clusters.is_marked(a) => "●".to_string(),
        Text::Mark => " ".to_string(),
        Text::Cluster => a.cluster().to_string(),
        Text::Namespace => a.namespace().to_string(),
        Text::Pod => a.name().to_string(),
        Text::Reason => a.reason().to_string(),
        Text::Cause => a.cause().to_string(),
        Text::Age => format!("for {}", format_age(a.time_in_state(state.now))),
        Text::Restarts => a.restarts().to_string(),
        Text::Node => a.node().unwrap_or("-").to_string(),
        // The workload the engineer thinks in: the Deployment, not its ReplicaSet (the
        // details pane has the chain).
        Text::Owner => match a.owner() {
            Some(_) => a.workload().label(),
            None => "-".to_string(),
        },
        Text::Action => state.shown_action(a).to_string(),
    }
}
