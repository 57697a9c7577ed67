//! Dialogs: confirm a destructive action, wait for the API, pick a context.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use super::centered;
use crate::ui::confirm::Confirmation;
use crate::ui::theme;

pub fn confirm(c: &Confirmation, area: Rect, buf: &mut Buffer) {
    let mut lines: Vec<Line> = c.lines.iter().map(|l| Line::raw(l.clone())).collect();
    lines.push(Line::raw(""));
    match &c.unavailable {
        Some(why) => {
            lines.push(Line::styled(format!("unavailable: {why}"), theme::bad()));
            lines.push(Line::styled("Esc closes", theme::dim()));
        }
        None => lines.push(Line::styled(
            "y / Enter: do it    n / Esc: cancel",
            theme::warn(),
        )),
    }
    let height = (lines.len() as u16 + 3).min(area.height);
    let rect = centered(area, area.width.saturating_sub(4).min(96), height);
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .block(
            Block::bordered()
                .title(format!(" {} ", c.title))
                .title_style(theme::title()),
        )
        .wrap(Wrap { trim: false })
        .render(rect, buf);
}

pub fn waiting(what: &str, area: Rect, buf: &mut Buffer) {
    let rect = centered(area, area.width.saturating_sub(4).min(80), 3);
    Clear.render(rect, buf);
    Paragraph::new(Line::styled(what.to_string(), theme::dim()))
        .block(Block::bordered())
        .render(rect, buf);
}

pub fn contexts(names: &[String], selected: usize, current: &str, area: Rect, buf: &mut Buffer) {
    let lines: Vec<Line> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let text = format!("{} {name}", if name == current { "*" } else { " " });
            if i == selected {
                Line::styled(text, theme::selected())
            } else {
                Line::raw(text)
            }
        })
        .collect();
    let rect = centered(area, 50, names.len() as u16 + 2);
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .block(
            Block::bordered()
                .title(" Switch context (Enter connects, Esc cancels) ")
                .title_style(theme::title()),
        )
        .render(rect, buf);
}
