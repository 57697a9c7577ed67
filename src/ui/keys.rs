//! From a key to what it means: the configured map first, then the fixed navigation keys.

use super::confirm::PodVerb;
use opc_core::config::{KeyBinding, KeyCode, UiConfig};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    NextCategory,
    PrevCategory,
    Category(usize),
    NextPane,
    PrevPane,
    Sort,
    ReverseSort,
    Logs,
    Filter,
    Details,
    Back,
    Mark,
    Help,
    Quit,
    Pod(PodVerb),
    ScaleToZero,
    Undo,
    ToggleAuto,
    MasterAuto,
    SendReport,
    ExportReport,
    SwitchContext,
    /// Each open cluster's health in full.
    Clusters,
    /// The workloads scaled to zero, with undo.
    Parked,
    Refresh,
}

/// Configured action names (see `config::UI_ACTIONS`), what they do, and the help's words.
const CONFIGURED: [(&str, Command, &str); 20] = [
    ("up", Command::Up, "move up"),
    ("down", Command::Down, "move down"),
    ("next_category", Command::NextCategory, "next category"),
    ("prev_category", Command::PrevCategory, "previous category"),
    ("filter", Command::Filter, "filter the table"),
    ("details", Command::Details, "details of the pod"),
    ("mark", Command::Mark, "mark / unmark, move down"),
    ("help", Command::Help, "this help"),
    ("quit", Command::Quit, "quit"),
    ("delete", Command::Pod(PodVerb::Delete), "delete"),
    (
        "force_delete",
        Command::Pod(PodVerb::ForceDelete),
        "force delete (grace 0)",
    ),
    (
        "scale_to_zero",
        Command::ScaleToZero,
        "scale the owner to 0",
    ),
    ("undo", Command::Undo, "undo the last scale to 0"),
    (
        "remove_finalizers",
        Command::Pod(PodVerb::RemoveFinalizers),
        "remove finalizers",
    ),
    (
        "toggle_auto",
        Command::ToggleAuto,
        "auto-clean for this rule",
    ),
    (
        "master_auto",
        Command::MasterAuto,
        "auto-clean master switch",
    ),
    ("send_report", Command::SendReport, "send the report now"),
    ("export_report", Command::ExportReport, "export the report"),
    (
        "switch_context",
        Command::SwitchContext,
        "contexts: switch, add, drop",
    ),
    ("refresh", Command::Refresh, "reclassify now"),
];

/// Keys that always work unless the config gives them to an action, with their help text.
pub(crate) const FIXED: [(&str, &str); 15] = [
    ("↑/↓", "move"),
    ("PgUp/PgDn", "move a page"),
    ("Home/End", "first / last row"),
    ("1..9", "show that category"),
    ("←/→ h", "lower pane: log, rules, report"),
    ("l", "the pod's logs (a crash: its last run)"),
    ("s", "sort by the next column"),
    ("S", "reverse the sort"),
    ("E", "evict (honours PDBs)"),
    ("C", "each open cluster's health"),
    ("P", "workloads parked at 0, undo"),
    ("Esc", "back, close, clear filter/marks"),
    ("y/Enter", "confirm a dialog"),
    ("n/Esc", "cancel a dialog"),
    ("ctrl-c", "quit"),
];

pub(crate) fn command_for(key: &KeyBinding, ui: &UiConfig) -> Option<Command> {
    if let Some(action) = ui.action_for(key) {
        return CONFIGURED
            .iter()
            .find(|(name, _, _)| *name == action)
            .map(|(_, c, _)| *c);
    }
    if key.ctrl {
        return (key.code == KeyCode::Char('c')).then_some(Command::Quit);
    }
    Some(match key.code {
        KeyCode::Up => Command::Up,
        KeyCode::Down => Command::Down,
        KeyCode::PageUp => Command::PageUp,
        KeyCode::PageDown => Command::PageDown,
        KeyCode::Home | KeyCode::Char('g') => Command::Top,
        KeyCode::End | KeyCode::Char('G') => Command::Bottom,
        KeyCode::Left | KeyCode::Char('h') => Command::PrevPane,
        KeyCode::Right => Command::NextPane,
        KeyCode::Char('l') => Command::Logs,
        KeyCode::Esc => Command::Back,
        KeyCode::Char('s') => Command::Sort,
        KeyCode::Char('S') => Command::ReverseSort,
        KeyCode::Char('E') => Command::Pod(PodVerb::Evict),
        KeyCode::Char('C') => Command::Clusters,
        KeyCode::Char('P') => Command::Parked,
        KeyCode::Char(c @ '1'..='9') => Command::Category(c as usize - '1' as usize),
        _ => return None,
    })
}

/// Help lines: configured actions with their keys, then the fixed keys.
pub(crate) fn help_lines(ui: &UiConfig) -> Vec<(String, String)> {
    let mut lines: Vec<(String, String)> = CONFIGURED
        .iter()
        .filter_map(|(a, _, what)| Some((ui.key(a)?.to_string(), what.to_string())))
        .collect();
    lines.extend(FIXED.iter().map(|(k, d)| (k.to_string(), d.to_string())));
    lines
}
