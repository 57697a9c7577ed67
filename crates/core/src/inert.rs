//! Text a tenant wrote, made inert for each place it is shown. Names, reasons, messages, Event
//! texts, images and finalizers all come from the API, where anyone who may create a pod or
//! an Event in one namespace writes them: on their way to a terminal, a log, a chat message,
//! a spreadsheet or a suggested command they pass through one function here. JSON needs
//! none: its encoding already quotes every character.

use std::borrow::Cow;
use std::fmt::Write;

use unicode_width::UnicodeWidthChar;

/// Marks a cut: one cell wide.
const ELLIPSIS: char = '…';

/// Characters that move the cursor, ring, switch modes, break lines, reorder text or hide
/// it: C0, DEL and C1 controls, the line and paragraph separators, and the invisible format
/// characters (bidi overrides and isolates, zero-width spaces and joiners, variation
/// selectors, the BOM, tags, interlinear annotations).
pub fn is_hazard(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{0600}'..='\u{0605}'
                | '\u{061C}'
                | '\u{06DD}'
                | '\u{070F}'
                | '\u{08E2}'
                | '\u{115F}'..='\u{1160}'
                | '\u{17B4}'..='\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFFB}'
                | '\u{110BD}'
                | '\u{110CD}'
                | '\u{13430}'..='\u{1343F}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// One line for a terminal, a table or a text log: every hazard shown escaped (`\e`, `\n`,
/// `\u{202e}`), so nothing a tenant wrote can clear the screen, write the clipboard, start a
/// forged line or turn text around. Backslashes stay as they are: escaping is idempotent.
pub fn terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hazard) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            _ if !is_hazard(c) => out.push(c),
            '\x1b' => out.push_str("\\e"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x07' => out.push_str("\\a"),
            '\0' => out.push_str("\\0"),
            c if u32::from(c) <= 0xff => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    Cow::Owned(out)
}

/// Terminal cells `c` takes once escaped text holds no hazard: wide CJK and emoji take two,
/// combining marks none.
fn cells(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// The cells `text` takes on a terminal once made inert.
pub fn width(text: &str) -> usize {
    terminal(text).chars().map(cells).sum()
}

/// `text` made inert and cut to at most `max` terminal cells, the cut marked with `…`.
pub fn fit(text: &str, max: usize) -> String {
    let text = terminal(text);
    if text.chars().map(cells).sum::<usize>() <= max {
        return text.into_owned();
    }
    let room = max.saturating_sub(1);
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = cells(c);
        if used + w > room {
            break;
        }
        used += w;
        out.push(c);
    }
    if max > 0 {
        out.push(ELLIPSIS);
    }
    out
}

/// `text` made inert and split into lines of at most `max` terminal cells (at least one
/// character each, so a character wider than `max` still moves on).
pub fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut used = 0;
    for c in terminal(text).chars() {
        let w = cells(c);
        if used + w > max && used > 0 {
            lines.push(String::new());
            used = 0;
        }
        if let Some(line) = lines.last_mut() {
            line.push(c);
        }
        used += w;
    }
    lines
}

/// `text` made inert and padded with spaces to `cells` terminal cells (never cut).
pub fn pad(text: &str, cells: usize) -> String {
    let text = terminal(text);
    let short = cells.saturating_sub(width(&text));
    format!("{text}{}", " ".repeat(short))
}

/// Inline Markdown (report files, `report --output markdown`, a table cell): one line, and
/// every character that could open emphasis, a link, an HTML tag or entity, or end a table
/// cell shown as itself.
pub fn markdown(text: &str) -> String {
    escape_each(&terminal(text), |c| match c {
        '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '!' | '#' => {
            Some(Cow::Owned(format!("\\{c}")))
        }
        _ => None,
    })
}

/// Slack mrkdwn: `&`, `<` and `>` as Slack documents their escaping, so no `<!channel>`,
/// `<@U…>` mention or `<url|text>` link can be written.
pub fn slack(text: &str) -> String {
    escape_each(&terminal(text), html_entity)
}

/// Lark/Feishu card markdown: no `<at id=all>` or `<font>` tag, and no `[text](url)` link.
/// Brackets go as entities too: a client that shows them literally is still no link.
pub fn lark(text: &str) -> String {
    escape_each(&terminal(text), |c| match c {
        '[' => Some(Cow::Borrowed("&#91;")),
        ']' => Some(Cow::Borrowed("&#93;")),
        c => html_entity(c),
    })
}

fn html_entity(c: char) -> Option<Cow<'static, str>> {
    match c {
        '&' => Some(Cow::Borrowed("&amp;")),
        '<' => Some(Cow::Borrowed("&lt;")),
        '>' => Some(Cow::Borrowed("&gt;")),
        _ => None,
    }
}

fn escape_each(text: &str, escape: impl Fn(char) -> Option<Cow<'static, str>>) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match escape(c) {
            Some(escaped) => out.push_str(&escaped),
            None => out.push(c),
        }
    }
    out
}

/// What a spreadsheet reads as the start of a formula (tab and CR, which it may skip first,
/// are escaped before this is looked at).
const FORMULA_START: [char; 4] = ['=', '+', '-', '@'];

/// One CSV field: made inert, a leading formula character (after any spaces) defused with
/// `'` and the field quoted, as OWASP advises; quoted too where it holds a comma or a quote.
pub fn csv(text: &str) -> String {
    let text = terminal(text);
    let formula = text.trim_start_matches(' ').starts_with(FORMULA_START);
    let text = match formula {
        true => Cow::Owned(format!("'{text}")),
        false => text,
    };
    if formula || text.contains([',', '"']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.into_owned()
    }
}

/// Characters a POSIX shell reads as themselves, anywhere in a word.
fn shell_plain(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '.' | '_' | '/' | ':' | '=' | '@' | '%' | '+' | ',' | '-')
}

/// One argument of a suggested command, as a POSIX shell needs it: as is when every
/// character is plain, else in single quotes. `None` (suggest no command) when it holds a
/// hazard, which no quoting makes safe to show and paste, or starts with `-`, which a
/// command would read as an option however it is quoted.
pub fn shell(word: &str) -> Option<Cow<'_, str>> {
    if word.chars().any(is_hazard) || word.starts_with('-') {
        return None;
    }
    if !word.is_empty() && word.chars().all(shell_plain) {
        return Some(Cow::Borrowed(word));
    }
    Some(Cow::Owned(format!("'{}'", word.replace('\'', r"'\''"))))
}
