//! The action log: tui-logger's widget over the `tracing` events of this process.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::widgets::{Block, Widget};
use tui_logger::{TuiLoggerLevelOutput, TuiLoggerWidget};

use crate::ui::theme;

pub(crate) fn render(area: Rect, buf: &mut Buffer) {
    TuiLoggerWidget::default()
        .block(
            Block::bordered()
                .title(" Log (actions and warnings) · ←/→ panes ")
                .title_style(theme::title()),
        )
        .output_separator(' ')
        .output_timestamp(Some("%H:%M:%S".to_string()))
        .output_level(Some(TuiLoggerLevelOutput::Abbreviated))
        .output_target(false)
        .output_file(false)
        .output_line(false)
        .style_error(ratatui::style::Style::new().fg(Color::Red))
        .style_warn(ratatui::style::Style::new().fg(Color::Yellow))
        .render(area, buf);
}
