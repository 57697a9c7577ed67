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

use super::state::{BottomPane, Overlay, State, View};

/// Header, categories, main area, lower pane, status line.
struct Areas {
    header: Rect,
    categories: Rect,
    main: Rect,
    bottom: Rect,
    status: Rect,
}

fn areas(area: Rect) -> Areas {
    let bottom = if area.height <= 30 {
        8
    } else {
        area.height / 3
    };
    let [header, categories, main, bottom, status] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(1),
        Constraint::Min(5),
        Constraint::Length(bottom),
        Constraint::Length(1),
    ])
    .areas(area);
    Areas {
        header,
        categories,
        main,
        bottom,
        status,
    }
}

/// Rows of pods the table shows in a terminal of this size (borders and heading excluded).
pub(crate) fn table_height(area: Rect, _state: &State) -> usize {
    usize::from(areas(area).main.height.saturating_sub(3)).max(1)
}

pub fn draw(state: &State, frame: &mut Frame) {
    let a = areas(frame.area());
    header::render(state, a.header, frame.buffer_mut());
    categories::render(state, a.categories, frame.buffer_mut());
    match state.view {
        View::Table => table::render(state, a.main, frame.buffer_mut()),
        View::Details => details::render(state, a.main, frame.buffer_mut()),
    }
    match state.bottom {
        BottomPane::Log => log::render(a.bottom, frame.buffer_mut()),
        BottomPane::Rules => rules::render(state, a.bottom, frame.buffer_mut()),
        BottomPane::Report => report::render(state, a.bottom, frame.buffer_mut()),
    }
    status::render(state, a.status, frame.buffer_mut());
    match &state.overlay {
        None => {}
        Some(Overlay::Help) => help::render(state, frame.area(), frame.buffer_mut()),
        Some(Overlay::Confirm(c)) => dialog::confirm(c, frame.area(), frame.buffer_mut()),
        Some(Overlay::Resolving(what)) => dialog::waiting(what, frame.area(), frame.buffer_mut()),
        Some(Overlay::Checking(_)) => dialog::waiting(
            "checking the owners for opt-outs…",
            frame.area(),
            frame.buffer_mut(),
        ),
        Some(Overlay::Contexts { names, selected }) => dialog::contexts(
            names,
            *selected,
            &state.cluster_lines(),
            frame.area(),
            frame.buffer_mut(),
        ),
        Some(Overlay::Parked { list, selected }) => parked::render(
            state,
            list.as_ref(),
            *selected,
            frame.area(),
            frame.buffer_mut(),
        ),
        Some(Overlay::Clusters) => {
            dialog::clusters(&state.cluster_lines(), frame.area(), frame.buffer_mut());
        }
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

/// `text` made inert and cut to `width` terminal cells, the cut marked with an ellipsis.
fn fit(text: &str, width: usize) -> String {
    opc_core::inert::fit(text, width)
}

/// A line of text from the API (or built around it), made inert.
fn inert_line(text: &str) -> String {
    opc_core::inert::terminal(text).into_owned()
}
