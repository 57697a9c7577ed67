//! Every key, from the config's key map and the fixed navigation keys.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::{centered, fit, titled};
use crate::ui::keys::help_lines;
use crate::ui::state::State;

pub(crate) fn render(state: &State, area: Rect, buf: &mut Buffer) {
    let lines = help_lines(&state.keys);
    let key_width = lines
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    let rows = usize::from(area.height.saturating_sub(2));
    let columns = if lines.len() > rows { 2 } else { 1 };
    let per_column = lines.len().div_ceil(columns);
    let width = if columns == 2 {
        area.width
    } else {
        area.width.min(60)
    };
    let column_width = usize::from(width.saturating_sub(2)) / columns;
    let text: Vec<Line> = (0..per_column)
        .map(|r| {
            let mut s = String::new();
            for c in 0..columns {
                if let Some((k, d)) = lines.get(c * per_column + r) {
                    let cell = fit(&format!("{k:>key_width$}  {d}"), column_width - 1);
                    s.push_str(&format!("{cell:<column_width$}"));
                }
            }
            Line::raw(s.trim_end().to_string())
        })
        .collect();
    let rect = centered(area, width, per_column as u16 + 2);
    Clear.render(rect, buf);
    Paragraph::new(text)
        .block(titled(" Keys (Esc closes) "))
        .render(rect, buf);
}
