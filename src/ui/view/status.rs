//! The bottom line: the last outcome, or the keys that matter most.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Widget;

use super::fit;
use crate::ui::state::State;
use crate::ui::theme;

pub(crate) fn render(state: &State, area: Rect, buf: &mut Buffer) {
    let width = usize::from(area.width);
    let line = match &state.status {
        Some(s) => Line::styled(
            fit(&s.text, width),
            if s.error { theme::BAD } else { theme::GOOD },
        ),
        None => {
            let key = |a: &str| state.keys.key(a).map(|k| k.to_string()).unwrap_or_default();
            let hint = format!(
                "{} help  {} filter  {} mark  {} delete  {} force  {} scale→0  {} auto  {} quit",
                key("help"),
                key("filter"),
                key("mark"),
                key("delete"),
                key("force_delete"),
                key("scale_to_zero"),
                key("toggle_auto"),
                key("quit"),
            );
            Line::styled(fit(&hint, width), theme::DIM)
        }
    };
    line.render(area, buf);
}
