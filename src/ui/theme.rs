//! Styles: the terminal's own colours, modifiers, and foreground accents only, so the screen
//! reads on dark and light backgrounds alike. No background colour is ever set.

use ratatui::style::{Color, Modifier, Style};

pub(crate) const TITLE: Style = Style::new().add_modifier(Modifier::BOLD);
pub(crate) const DIM: Style = Style::new().add_modifier(Modifier::DIM);
pub(crate) const SELECTED: Style = Style::new().add_modifier(Modifier::REVERSED);
pub(crate) const MARKED: Style = Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD);
pub(crate) const GOOD: Style = Style::new().fg(Color::Green);
pub(crate) const WARN: Style = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
pub(crate) const BAD: Style = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);
pub(crate) const ACCENT: Style = Style::new().fg(Color::Cyan);

/// A badge such as DRY-RUN: reversed, so it stands out on any background.
pub(crate) fn badge(color: Color) -> Style {
    Style::new()
        .fg(color)
        .add_modifier(Modifier::REVERSED | Modifier::BOLD)
}
