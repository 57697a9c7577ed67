use std::borrow::Cow;
use std::process::Command;

use opc_core::inert::{
    csv, fit, is_hazard, lark, markdown, pad, shell, slack, terminal, width, wrap,
};
use proptest::prelude::*;
use unicode_width::UnicodeWidthStr;

/// The owner name of the issue: clears the screen, writes the clipboard through OSC 52, and
/// forges a table row on a new line.
const HOSTILE: &str =
    "x\x1b[2J\x1b[1;1HALL CLEAR\x1b]52;c;Y3VybCBldmls\x07\nimagePull  ns  fake-row";

#[test]
fn the_terminal_sees_escapes_and_newlines_as_text() {
    let shown = terminal(HOSTILE);
    assert_eq!(
        shown,
        r"x\e[2J\e[1;1HALL CLEAR\e]52;c;Y3VybCBldmls\a\nimagePull  ns  fake-row"
    );
    assert_eq!(terminal("web-1"), Cow::Borrowed("web-1"));
}

#[test]
fn bidi_overrides_and_zero_width_characters_are_shown() {
    assert_eq!(terminal("evil\u{202e}txt.exe"), r"evil\u{202e}txt.exe");
    assert_eq!(
        terminal("a\u{200b}b\u{feff}\u{2066}"),
        r"a\u{200b}b\u{feff}\u{2066}"
    );
    assert_eq!(terminal("nel\u{85}"), r"nel\x85");
}

#[test]
fn widths_are_terminal_cells() {
    assert_eq!(width("支付服务"), 8);
    assert_eq!(fit("支付服务-web", 6), "支付…");
    assert_eq!(fit("web-1", 5), "web-1");
    assert_eq!(fit("web-12", 5), "web-…");
    assert_eq!(fit("a\u{1b}b", 3), r"a\…");
    assert_eq!(pad("支付", 6), "支付  ");
    assert_eq!(wrap("支付服务", 5), ["支付", "服务"]);
    assert_eq!(wrap("a\nb", 2), [r"a\", "nb"]);
}

#[test]
fn markdown_cannot_open_a_link_a_tag_or_a_new_cell() {
    assert_eq!(
        markdown("[x](http://e) <b>|*a*"),
        r"\[x\](http://e) \<b\>\|\*a\*"
    );
    assert_eq!(markdown("a\nb"), r"a\\nb");
}

#[test]
fn slack_mentions_and_links_are_escaped_as_slack_documents() {
    assert_eq!(
        slack("<!channel> <@U123> <http://e|ok> & co"),
        "&lt;!channel&gt; &lt;@U123&gt; &lt;http://e|ok&gt; &amp; co"
    );
}

#[test]
fn lark_cannot_mention_everyone_or_link() {
    assert_eq!(
        lark("<at id=all></at>[go](http://e)"),
        "&lt;at id=all&gt;&lt;/at&gt;&#91;go&#93;(http://e)"
    );
}

#[test]
fn csv_formulas_are_defused_and_quoted() {
    assert_eq!(csv("=cmd|' /C calc'!A0"), r#""'=cmd|' /C calc'!A0""#);
    assert_eq!(csv("  @SUM(1)"), r#""'  @SUM(1)""#);
    assert_eq!(csv("\t=1"), r"\t=1");
    assert_eq!(csv("a,\"b\""), r#""a,""b""""#);
    assert_eq!(csv("web-1"), "web-1");
}

#[test]
fn shell_words_are_quoted_or_refused() {
    assert_eq!(shell("db-creds").as_deref(), Some("db-creds"));
    assert_eq!(shell("a b;rm -rf ~").as_deref(), Some("'a b;rm -rf ~'"));
    assert_eq!(shell("it's").as_deref(), Some(r"'it'\''s'"));
    assert_eq!(shell("").as_deref(), Some("''"));
    assert_eq!(shell("--from-file=/etc/shadow"), None);
    assert_eq!(shell("a\nb"), None);
}

/// Control and format characters, bidi, zero-width, wide CJK, emoji and the markup each sink
/// guards against, mixed with plain text.
fn hostile_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z0-9 .-]{0,6}",
        "[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}]",
        "[\\u{200b}-\\u{200f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}\\u{feff}\\u{fe0f}\\u{e0041}]",
        "[支付服务ｱｲ한글]",
        "[😀👍🏽🇫🇷❤]",
        "[=+@<>&|*_\\[\\]`'\"\\\\~!#$;(){}]",
        Just("<!channel>".to_string()),
        Just("<at id=all></at>".to_string()),
        Just("\u{1b}]52;c;".to_string()),
        any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

/// `text` split as `sh` splits a command line, through a real shell.
fn shell_words(line: &str) -> Vec<String> {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s\\0' {line}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{line}");
    let text = String::from_utf8(out.stdout).unwrap();
    text.split_terminator('\0').map(String::from).collect()
}

proptest! {
    #[test]
    fn the_terminal_sink_lets_no_hazard_through(text in hostile_text(), max in 0usize..40) {
        let shown = terminal(&text);
        prop_assert!(!shown.chars().any(is_hazard), "{shown:?}");
        let cut = fit(&text, max);
        prop_assert!(!cut.chars().any(is_hazard));
        prop_assert!(cut.width() <= max, "{cut:?} is {} cells, over {max}", cut.width());
        prop_assert!(width(&text) >= shown.width());
        prop_assert_eq!(terminal(&shown), shown.clone(), "escaping twice changes nothing");
        let lines = wrap(&text, max.max(2));
        prop_assert_eq!(lines.concat(), shown.clone().into_owned());
        prop_assert!(lines.iter().all(|l| l.width() <= max.max(2)), "{lines:?}");
    }

    #[test]
    fn markdown_has_no_bare_markup(text in hostile_text()) {
        let md = markdown(&text);
        prop_assert!(!md.chars().any(is_hazard));
        let mut escaped = false;
        for c in md.chars() {
            prop_assert!(escaped || !"<>|[]*_`&".contains(c), "{md:?}");
            escaped = !escaped && c == '\\';
        }
    }

    #[test]
    fn slack_and_lark_cannot_mention_or_tag(text in hostile_text()) {
        let s = slack(&text);
        prop_assert!(!s.contains('<') && !s.contains('>') && !s.chars().any(is_hazard), "{s:?}");
        let l = lark(&text);
        prop_assert!(!l.contains("<at") && !l.contains('<') && !l.contains('['), "{l:?}");
        prop_assert!(!l.chars().any(is_hazard));
    }

    #[test]
    fn csv_cells_never_start_a_formula(text in hostile_text()) {
        let field = csv(&text);
        prop_assert!(!field.chars().any(is_hazard));
        let cell = match field.strip_prefix('"').and_then(|f| f.strip_suffix('"')) {
            Some(quoted) => quoted.replace("\"\"", "\""),
            None => {
                prop_assert!(!field.contains([',', '"']), "{field:?}");
                field.clone()
            }
        };
        let first = cell.trim_start_matches(' ').chars().next();
        prop_assert!(!first.is_some_and(|c| "=+-@\t\r".contains(c)), "{field:?}");
    }

    #[test]
    fn a_shell_word_splits_back_to_itself_or_is_refused(text in hostile_text()) {
        match shell(&text) {
            None => prop_assert!(text.starts_with('-') || text.chars().any(is_hazard)),
            Some(word) => {
                prop_assert!(!word.chars().any(is_hazard));
                prop_assert_eq!(shell_words(&word), vec![text.clone()]);
            }
        }
    }
}
