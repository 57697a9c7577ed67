//! TUI key bindings: action name → key, with k9s/gitui-like defaults.

use std::collections::BTreeMap;
use std::fmt;

use super::Result;
use super::read::{Field, MapReader};

/// Every action the TUI binds, in help-screen order, with its default key.
pub const ACTIONS: [(&str, &str); 20] = [
    ("up", "k"),
    ("down", "j"),
    ("next_category", "Tab"),
    ("prev_category", "BackTab"),
    ("filter", "/"),
    ("details", "Enter"),
    ("mark", "Space"),
    ("help", "?"),
    ("quit", "q"),
    ("delete", "d"),
    ("force_delete", "D"),
    ("scale_to_zero", "z"),
    ("undo", "u"),
    ("remove_finalizers", "F"),
    ("toggle_auto", "a"),
    ("master_auto", "A"),
    ("send_report", "r"),
    ("export_report", "e"),
    ("switch_context", "c"),
    ("refresh", "ctrl-r"),
];

/// A key, as the TUI matches it (maps one-to-one onto crossterm's `KeyCode`). The named keys
/// are written as their variant's name, in any case.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, strum::EnumString, strum::IntoStaticStr,
)]
#[strum(ascii_case_insensitive)]
pub enum KeyCode {
    /// A printable character; `Space` is `Char(' ')`.
    #[strum(disabled)]
    Char(char),
    Enter,
    Esc,
    Tab,
    /// Shift-Tab.
    BackTab,
    Backspace,
    Delete,
    Insert,
    Home,
    End,
    PageUp,
    PageDown,
    Up,
    Down,
    Left,
    Right,
    /// F1..F12.
    #[strum(disabled)]
    F(u8),
}

/// One key with modifiers, written `q`, `D`, `Enter`, `F5`, `ctrl-r`, `alt-x`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct KeyBinding {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

impl KeyBinding {
    /// Parses the key syntax; the error lists what is accepted.
    pub fn parse(text: &str) -> Result<KeyBinding, UnknownKey> {
        let mut rest = text;
        let (mut ctrl, mut alt) = (false, false);
        loop {
            if let Some(tail) = strip_prefix_ci(rest, "ctrl-") {
                (ctrl, rest) = (true, tail);
            } else if let Some(tail) = strip_prefix_ci(rest, "alt-") {
                (alt, rest) = (true, tail);
            } else {
                break;
            }
        }
        let code = key_code(rest).ok_or_else(|| UnknownKey(text.to_string()))?;
        // Terminals send the same byte for ctrl-R and ctrl-r.
        let code = match code {
            KeyCode::Char(c) if ctrl => KeyCode::Char(c.to_ascii_lowercase()),
            other => other,
        };
        Ok(KeyBinding { code, ctrl, alt })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected a key: one character, Space, Enter, Esc, Tab, BackTab, an arrow (Up, Down, Left, Right), \
     Home, End, PageUp, PageDown, Backspace, Delete, Insert or F1..F12, \
     optionally prefixed with ctrl- or alt-; found {0:?}"
)]
pub struct UnknownKey(pub String);

fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    (head.eq_ignore_ascii_case(prefix) && text.len() > prefix.len()).then(|| &text[prefix.len()..])
}

fn key_code(text: &str) -> Option<KeyCode> {
    let mut chars = text.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return (!c.is_control() && c != ' ').then_some(KeyCode::Char(c));
    }
    if text.eq_ignore_ascii_case("Space") {
        return Some(KeyCode::Char(' '));
    }
    if let Some(n) = text
        .strip_prefix(['F', 'f'])
        .and_then(|n| n.parse::<u8>().ok())
    {
        return (1..=12).contains(&n).then_some(KeyCode::F(n));
    }
    text.parse().ok()
}

impl fmt::Display for KeyBinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        match &self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "F{n}"),
            named => f.write_str(named.into()),
        }
    }
}

/// The TUI's key map. Arrow keys always move as well; the map adds to them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UiConfig {
    /// Action name (see [`ACTIONS`]) → key; always holds every action.
    pub keys: BTreeMap<String, KeyBinding>,
}

impl UiConfig {
    pub fn key(&self, action: &str) -> Option<&KeyBinding> {
        self.keys.get(action)
    }

    pub fn action_for(&self, key: &KeyBinding) -> Option<&str> {
        self.keys
            .iter()
            .find(|(_, k)| *k == key)
            .map(|(a, _)| a.as_str())
    }
}

impl Default for UiConfig {
    fn default() -> Self {
        let keys = ACTIONS
            .iter()
            .filter_map(|(action, key)| Some((action.to_string(), KeyBinding::parse(key).ok()?)))
            .collect();
        UiConfig { keys }
    }
}

/// Reads `ui: {keys: {action: key}}` over the defaults; two actions may not share a key.
pub(crate) fn read(field: &Field) -> Result<UiConfig> {
    let mut ui = UiConfig::default();
    let Some(keys) = field.map(&["keys"])?.get("keys") else {
        return Ok(ui);
    };
    let names = ACTIONS.map(|(name, _)| name);
    let m = keys.map(&names)?;
    for action in names {
        if let Some(key) = m.get(action) {
            let text = key.string()?;
            let binding = KeyBinding::parse(&text).map_err(|why| key.error(why))?;
            ui.keys.insert(action.to_string(), binding);
        }
    }
    check_conflicts(ui, &m)
}

/// Two actions on one key would make one of them unreachable.
fn check_conflicts(ui: UiConfig, m: &MapReader) -> Result<UiConfig> {
    for (action, key) in &ui.keys {
        let other = ui.keys.iter().find(|(a, k)| *a != action && *k == key);
        if let (Some((other, _)), Some(field)) = (other, m.get(action)) {
            return Err(field.error(format!(
                "key \"{key}\" is also bound to {other}; bind {other} to another key too"
            )));
        }
    }
    Ok(ui)
}
