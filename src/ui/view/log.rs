//! The action log: tui-logger's widget over this process's `tracing` events, formatted here,
//! made inert: the library's own formatter let a name holding a newline forge an action line.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::Widget;
use tui_logger::{ExtLogRecord, LogFormatter, TuiLoggerWidget};

use opc_core::inert;

/// Continuation lines start under the message, past `HH:MM:SS L `.
const INDENT: usize = 11;

pub(crate) fn render(area: Rect, buf: &mut Buffer) {
    TuiLoggerWidget::default()
        .block(super::titled(" Log (actions and warnings) · ←/→ panes "))
        .formatter(Box::new(InertLines))
        .render(area, buf);
}

/// `HH:MM:SS L message`, the message escaped and wrapped in terminal cells.
struct InertLines;

impl LogFormatter for InertLines {
    fn min_width(&self) -> u16 {
        INDENT as u16 + 4
    }

    fn format(&self, width: usize, evt: &ExtLogRecord) -> Vec<Line<'_>> {
        let (level, style) = match evt.level.as_str() {
            "ERROR" => ("E", Style::new().fg(Color::Red)),
            "WARN" => ("W", Style::new().fg(Color::Yellow)),
            "INFO" => ("I", Style::new()),
            "DEBUG" => ("D", Style::new()),
            _ => ("T", Style::new()),
        };
        let head = format!("{} {level} ", evt.timestamp.strftime("%H:%M:%S"));
        let room = width.saturating_sub(INDENT).max(1);
        inert::wrap(evt.msg(), room)
            .into_iter()
            .enumerate()
            .map(|(i, part)| {
                let lead = if i == 0 {
                    head.clone()
                } else {
                    " ".repeat(INDENT)
                };
                Line::styled(format!("{lead}{part}"), style)
            })
            .collect()
    }
}
