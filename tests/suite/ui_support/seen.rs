//! The screen as a user reads it: the tests look at what is drawn, not into the state.

use ops_pod_cleaner::ui::{State, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// Wide and tall enough that no dialog line wraps and no status line is cut.
const WIDTH: u16 = 200;
const HEIGHT: u16 = 40;

/// One drawing of the screen.
pub struct Seen {
    buffer: Buffer,
}

/// A confirmation as drawn: its title, its lines, and why it offers nothing, if it does not.
#[derive(Debug)]
pub struct Dialog {
    pub title: String,
    pub lines: Vec<String>,
    pub unavailable: Option<String>,
    /// The keys in the bottom border: what `y` would do.
    pub keys: String,
}

pub fn seen(state: &State) -> Seen {
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    terminal.draw(|f| draw(state, f)).unwrap();
    Seen {
        buffer: terminal.backend().buffer().clone(),
    }
}

impl Seen {
    fn text(&self, y: u16, xs: std::ops::Range<u16>) -> String {
        xs.map(|x| self.buffer[(x, y)].symbol().to_string())
            .collect::<String>()
            .trim_end()
            .to_string()
    }

    fn line(&self, y: u16) -> String {
        self.text(y, 0..WIDTH)
    }

    /// The whole screen as text.
    pub fn all(&self) -> String {
        (0..HEIGHT).map(|y| self.line(y) + "\n").collect()
    }

    /// The box whose top-left corner is the first `┌` at `x`, as (top, bottom) rows.
    fn boxed_at(&self, x: u16, width: u16) -> Option<(u16, u16)> {
        let right = x + width - 1;
        let corner = |y: u16, c: &str| self.buffer[(x, y)].symbol() == c;
        let top =
            (0..HEIGHT).find(|&y| corner(y, "┌") && self.buffer[(right, y)].symbol() == "┐")?;
        let bottom = (top..HEIGHT).find(|&y| corner(y, "└"))?;
        Some((top, bottom))
    }

    /// The confirmation dialog, if one is open.
    pub fn dialog(&self) -> Option<Dialog> {
        let width = 96;
        let x = (WIDTH - width) / 2;
        let (top, bottom) = self.boxed_at(x, width)?;
        let border = |y: u16| {
            self.text(y, x + 1..x + width - 1)
                .trim_matches(|c| c == '─' || c == ' ')
                .to_string()
        };
        let rows = (top + 1..bottom).map(|y| self.text(y, x + 1..x + width - 1));
        let mut lines = unwrap(rows, usize::from(width - 2));
        let unavailable = match lines.last() {
            Some(last) if last.starts_with("unavailable: ") => {
                let why = last.trim_start_matches("unavailable: ").to_string();
                lines.truncate(lines.len().saturating_sub(2));
                Some(why)
            }
            _ => None,
        };
        Some(Dialog {
            title: border(top),
            lines,
            unavailable,
            keys: border(bottom),
        })
    }

    /// What a waiting box says (the API is read before a dialog can be shown).
    pub fn waiting(&self) -> Option<String> {
        let width = 80;
        let x = (WIDTH - width) / 2;
        let (top, bottom) = self.boxed_at(x, width)?;
        (bottom == top + 2).then(|| self.text(top + 1, x + 1..x + width - 1).trim().to_string())
    }

    /// Whether the owners are being checked for opt-outs before a pod dialog can be answered.
    pub fn checking(&self) -> bool {
        self.waiting().as_deref() == Some("checking the owners for opt-outs…")
    }

    /// Whether nothing is drawn over the table.
    pub fn nothing_over_the_table(&self) -> bool {
        let all = self.all();
        let boxes = [
            " Keys (Esc closes) ",
            " Clusters (C or Esc closes) ",
            " Contexts (* open) ",
        ];
        self.dialog().is_none()
            && self.waiting().is_none()
            && !boxes.iter().any(|title| all.contains(title))
    }

    /// The rows of the table that are drawn, as text.
    pub fn rows(&self) -> Vec<String> {
        self.table_rows()
            .into_iter()
            .map(|y| self.line(y))
            .collect()
    }

    /// The row of the table's title: its category, how many pods it lists, how many are marked.
    fn title_row(&self) -> Option<u16> {
        (0..HEIGHT).find(|&y| {
            let line = self.line(y);
            line.starts_with("┌ ") && line.contains(" — ")
        })
    }

    fn table_rows(&self) -> Vec<u16> {
        let Some(title) = self.title_row() else {
            return Vec::new();
        };
        let bottom = (title..HEIGHT)
            .find(|&y| self.line(y).starts_with("└"))
            .unwrap_or(HEIGHT);
        // The header is the row under the title.
        (title + 2..bottom)
            .filter(|&y| !self.text(y, 1..WIDTH - 1).trim().is_empty())
            .collect()
    }

    /// The table's title: its category, how many pods it lists, and how many are marked.
    pub fn table_title(&self) -> String {
        self.title_row().map(|y| self.line(y)).unwrap_or_default()
    }

    /// How many pods the table lists (drawn or not), from its title.
    pub fn listed(&self) -> usize {
        let title = self.table_title();
        let (_, after) = title.split_once(" — ").expect("a table title");
        after.split_whitespace().next().unwrap().parse().unwrap()
    }

    /// The pods the table's rows name, in order, out of `known`.
    pub fn names<'a>(&self, known: &[&'a str]) -> Vec<&'a str> {
        self.rows()
            .iter()
            .filter_map(|row| known.iter().find(|name| row.contains(**name)).copied())
            .collect()
    }

    /// How many abnormal pods the category bar counts for each rule, in chain order.
    pub fn counts(&self) -> Vec<usize> {
        let bar = (0..HEIGHT)
            .map(|y| self.line(y))
            .find(|line| line.trim_start().starts_with("1:"))
            .expect("the category bar");
        let words: Vec<&str> = bar.split_whitespace().collect();
        (words.windows(2))
            .filter(|pair| pair[0].contains(':'))
            .filter_map(|pair| pair[1].parse().ok())
            .collect()
    }

    /// How many abnormal pods the category bar counts for the `n`th rule (from 1).
    pub fn count(&self, n: usize) -> usize {
        self.counts()[n - 1]
    }

    /// Whether the details of a pod are shown instead of the table.
    pub fn details(&self) -> bool {
        self.all().contains(" — details (Esc back) ")
    }

    /// The row under the cursor.
    pub fn selected(&self) -> Option<String> {
        self.table_rows()
            .into_iter()
            .find(|&y| self.buffer[(1, y)].modifier.contains(Modifier::REVERSED))
            .map(|y| self.line(y))
    }

    /// The status line, and whether it is drawn as an error.
    pub fn status(&self) -> (String, bool) {
        let y = HEIGHT - 1;
        (self.line(y), self.buffer[(0, y)].fg == Color::Red)
    }
}

/// The lines a paragraph was given, from the rows it was wrapped into at `width`: a row
/// continues the one before it when the row before had no room for its first word.
fn unwrap(rows: impl Iterator<Item = String>, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for row in rows {
        let first_word = row
            .split_whitespace()
            .next()
            .map_or(0, |w| w.chars().count());
        match lines.last_mut() {
            Some(last)
                if first_word > 0
                    && !last.is_empty()
                    && last.chars().count() + 1 + first_word > width =>
            {
                last.push(' ');
                last.push_str(row.trim_start());
            }
            _ => lines.push(row),
        }
    }
    lines
}
