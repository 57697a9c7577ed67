//! Drawing: `draw(&State, &mut Frame)`, one module per pane or dialog.

mod categories;
mod details;
mod dialog;
mod header;
mod help;
mod log;
mod parked;
mod report;
mod rules;
mod source;
mod status;
mod table;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Row, Table};

use super::state::{BottomPane, Overlay, State};
use opc_core::inert::fit;

/// Header, categories, main area, lower pane, status line.
fn areas(area: Rect) -> [Rect; 5] {
    let bottom = if area.height <= 30 {
        8
    } else {
        area.height / 3
    };
    Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(1),
        Constraint::Min(5),
        Constraint::Length(bottom),
        Constraint::Length(1),
    ])
    .areas(area)
}

/// Rows of pods the table shows in a terminal of this size (borders and heading excluded).
pub(crate) fn table_height(area: Rect) -> usize {
    let [_, _, main, _, _] = areas(area);
    usize::from(main.height.saturating_sub(3)).max(1)
}

pub fn draw(state: &State, frame: &mut Frame) {
    let (area, buf) = (frame.area(), frame.buffer_mut());
    let [header, categories, main, bottom, status] = areas(area);
    header::render(state, header, buf);
    categories::render(state, categories, buf);
    match &state.details {
        None => table::render(state, main, buf),
        Some(details) => details::render(state, details, main, buf),
    }
    match state.bottom {
        BottomPane::Log => log::render(bottom, buf),
        BottomPane::Rules => rules::render(state, bottom, buf),
        BottomPane::Report => report::render(state, bottom, buf),
    }
    status::render(state, status, buf);
    match &state.overlay {
        None => {}
        Some(Overlay::Help) => help::render(state, area, buf),
        Some(Overlay::Confirm(c)) => dialog::confirm(c, area, buf),
        Some(Overlay::Resolving(what)) => dialog::waiting(what, area, buf),
        Some(Overlay::Checking(_)) => {
            dialog::waiting("checking the owners for opt-outs…", area, buf);
        }
        Some(Overlay::Contexts { names, selected }) => {
            dialog::contexts(names, *selected, &state.cluster_lines(), area, buf);
        }
        Some(Overlay::Parked { list, selected }) => {
            parked::render(state, list.as_ref(), *selected, area, buf);
        }
        Some(Overlay::Clusters) => dialog::clusters(&state.cluster_lines(), area, buf),
    }
}

/// A rectangle of at most `width` × `height`, centred in `area`.
fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    )
}

/// A table under `columns`' headings, each column as wide as it says.
fn table<'a>(
    rows: impl IntoIterator<Item = Row<'a>>,
    columns: Vec<(&'a str, Constraint)>,
) -> Table<'a> {
    let (heading, widths): (Vec<&str>, Vec<Constraint>) = columns.into_iter().unzip();
    Table::new(rows, widths).header(Row::new(heading).style(super::theme::TITLE))
}

/// A bordered pane or dialog under a bold title.
fn titled<'a>(title: impl Into<Line<'a>>) -> Block<'a> {
    Block::bordered()
        .title(title)
        .title_style(super::theme::TITLE)
}

/// A line of text from the API (or built around it), made inert.
fn inert_line(text: &str) -> String {
    opc_core::inert::terminal(text).into_owned()
}
