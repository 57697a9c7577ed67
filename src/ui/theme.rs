//! Styles: the terminal's own colours, modifiers, and foreground accents only, so the screen
//! reads on dark and light backgrounds alike. No background colour is ever set.

use ratatui::style::{Color, Modifier, Style};

pub fn title() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

pub fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

pub fn selected() -> Style {
    Style::new().add_modifier(Modifier::REVERSED)
}

pub fn marked() -> Style {
    Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD)
}

pub fn good() -> Style {
    Style::new().fg(Color::Green)
}

pub fn warn() -> Style {
    Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD)
}

pub fn bad() -> Style {
    Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
}

pub fn accent() -> Style {
    Style::new().fg(Color::Cyan)
}

/// A badge such as DRY-RUN: reversed, so it stands out on any background.
pub fn badge(color: Color) -> Style {
    Style::new()
        .fg(color)
        .add_modifier(Modifier::REVERSED | Modifier::BOLD)
}
