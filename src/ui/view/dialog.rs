//! Dialogs: confirm a destructive action, wait for the API, pick a context.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use super::{centered, fit, inert_line, titled};
use crate::ui::confirm::{Confirmation, Offer};
use crate::ui::event::{ClusterLine, SourceLine};
use crate::ui::theme;
use opc_core::cluster::ClusterName;
use opc_core::fleet::WatchWhy;

/// The keys sit on the bottom border, so no amount of wrapped text can push them out of sight.
pub(crate) fn confirm(c: &Confirmation, area: Rect, buf: &mut Buffer) {
    let mut lines: Vec<Line> = c.lines.iter().map(|l| Line::raw(inert_line(l))).collect();
    let keys = match &c.offer {
        Offer::Unavailable(why) => {
            lines.push(Line::raw(""));
            let unavailable = inert_line(&format!("unavailable: {why}"));
            lines.push(Line::styled(unavailable, theme::BAD));
            Line::styled(" Esc closes ", theme::DIM)
        }
        Offer::Ready { dry_run: true, .. } => Line::styled(
            " y / Enter: record what would be done    n / Esc: cancel ",
            theme::WARN,
        ),
        Offer::Ready { .. } | Offer::Resume(_) | Offer::MasterOn => {
            Line::styled(" y / Enter: do it    n / Esc: cancel ", theme::WARN)
        }
    };
    let width = area.width.saturating_sub(4).min(96);
    let rect = centered(area, width, bordered_height(&lines, width));
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .block(titled(inert_line(&format!(" {} ", c.title))).title_bottom(keys))
        .wrap(Wrap { trim: false })
        .render(rect, buf);
}

pub(crate) fn waiting(what: &str, area: Rect, buf: &mut Buffer) {
    let rect = centered(area, area.width.saturating_sub(4).min(80), 3);
    Clear.render(rect, buf);
    Paragraph::new(Line::styled(inert_line(what), theme::DIM))
        .block(Block::bordered())
        .render(rect, buf);
}

pub(crate) fn contexts(
    names: &[ClusterName],
    selected: usize,
    open: &[&ClusterLine],
    area: Rect,
    buf: &mut Buffer,
) {
    let lines: Vec<Line> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let is_open = open.iter().any(|c| c.name == *name);
            let text = format!("{} {name}", if is_open { "*" } else { " " });
            if i == selected {
                Line::styled(text, theme::SELECTED)
            } else {
                Line::raw(text)
            }
        })
        .collect();
    let rect = centered(area, 60, names.len() as u16 + 2);
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .block(
            titled(" Contexts (* open) ")
                .title_bottom(" Enter: only this one · Space: add/drop · Esc "),
        )
        .render(rect, buf);
}

/// Each open cluster's watch in full: what the header only summarises.
pub(crate) fn clusters(open: &[&ClusterLine], area: Rect, buf: &mut Buffer) {
    let mut lines: Vec<Line> = Vec::new();
    for c in open {
        let (text, style) = super::header::watch_text(&c.watch, 200);
        let name = format!("{:<16} ", fit(c.name.as_str(), 16));
        let wire = c.wire.map_or(String::new(), |w| format!("  {}", w.name()));
        lines.push(Line::from(vec![
            Span::styled(name, theme::ACCENT),
            Span::styled(text, style),
            Span::raw(format!("  pods {}", c.pods)),
            Span::styled(wire, theme::DIM),
        ]));
        // Every source but a watch chosen as one says how it stands, or why it fell back.
        if !matches!(c.source, SourceLine::Watch(WatchWhy::Chosen)) {
            let words = format!("{:<17}{}", "", super::source::words(&c.source));
            lines.push(Line::styled(words, theme::DIM));
        }
        // Its own line: it explains causes that come from pods alone, and must not be cut.
        if let Some(why) = &c.nodes_unreadable {
            let why = format!("{:<17}nodes not watched: {}", "", fit(why, 160));
            lines.push(Line::styled(why, theme::WARN));
        }
    }
    // Tall enough for every line as wrapped: a long reason (a missing permission) must show.
    let rect = centered(area, 100, bordered_height(&lines, area.width.min(100)));
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(titled(" Clusters (C or Esc closes) "))
        .render(rect, buf);
}

/// How tall a bordered box `width` wide is with `lines` wrapped in it.
fn bordered_height(lines: &[Line], width: u16) -> u16 {
    let inner = usize::from(width.saturating_sub(2)).max(1);
    let rows: usize = lines.iter().map(|l| l.width().div_ceil(inner).max(1)).sum();
    u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2)
}
