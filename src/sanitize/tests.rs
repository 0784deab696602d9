//! Tests of the sanitiser: exact outputs for hostile inputs, and properties.

use proptest::prelude::*;

use super::*;

#[test]
fn hostile_text_is_shown_not_sent() {
    for (text, shown) in [
        // Escape sequences are shown, not sent.
        ("a\u{1b}[31mred\u{1b}[0m", "a␛[31mred␛[0m"),
        // OSC 8 hyperlink ended by BEL, then by ST.
        ("\u{1b}]8;;http://x\u{7}t", "␛]8;;http://x␇t"),
        ("\u{1b}]0;title\u{1b}\\", "␛]0;title␛\\"),
        // DCS, APC, PM, SOS as ESC P / _ / ^ / X.
        ("\u{1b}P1$r\u{1b}_a\u{1b}^b\u{1b}Xc", "␛P1$r␛_a␛^b␛Xc"),
        // C1 forms: CSI (U+009B), OSC (U+009D), NEL (U+0085).
        ("\u{9b}31m\u{9d}x\u{85}", "<U+009B>31m<U+009D>x<U+0085>"),
        // Carriage return and controls are visible.
        ("ok\rFAIL", "ok␍FAIL"),
        ("a\u{0}b\u{8}c\u{7f}", "a␀b␈c␡"),
        ("x\ny", "x␊y"),
        // Bidi and zero-width characters are named.
        ("abc\u{202e}fed", "abc<U+202E>fed"),
        (
            "\u{2066}x\u{2069}\u{200f}\u{61c}",
            "<U+2066>x<U+2069><U+200F><U+061C>",
        ),
        (
            "a\u{200b}b\u{feff}\u{2060}\u{200d}",
            "a<U+200B>b<U+FEFF><U+2060><U+200D>",
        ),
        // Tabs expand to the next stop.
        ("\tx", "    x"),
        ("ab\tc", "ab  c"),
        ("abcd\te", "abcd    e"),
    ] {
        assert_eq!(sanitize(text), shown, "{text:?}");
    }
}

#[test]
fn invalid_utf8_becomes_replacement() {
    assert_eq!(
        sanitize_bytes(b"ok\xff\xfeend", 80),
        "ok\u{fffd}\u{fffd}end"
    );
    assert_eq!(sanitize_bytes(b"\xe2\x82", 80), "\u{fffd}");
}

#[test]
fn long_lines_are_cut_at_the_width() {
    assert_eq!(sanitize_line("abcdefgh", 5), "abcd…");
    assert_eq!(sanitize_line("abcde", 5), "abcde");
    assert_eq!(sanitize_line("abcdef", 0), "");
    assert_eq!(sanitize_line("abcdef", 1), "…");
    // Wide characters take two columns: a wide char that would straddle is dropped.
    assert_eq!(sanitize_line("日本語テキスト", 6), "日本…");
    assert_eq!(sanitize_line("日本語", 6), "日本語");
    // Combining marks take no column.
    assert_eq!(
        sanitize_line("e\u{301}e\u{301}e\u{301}", 3),
        "e\u{301}e\u{301}e\u{301}"
    );
    // A visible escape is never split in the middle.
    assert_eq!(sanitize_line("ab\u{202e}cd", 6), "ab…");
}

#[test]
fn ten_megabyte_line_is_cut_cheaply() {
    let big = "\u{1b}[2J".repeat(2_500_000);
    let out = sanitize_line(&big, 40);
    assert_eq!(width(&out), 40);
    assert!(out.starts_with("␛[2J␛[2J"));
    assert!(out.ends_with('…'));
}

#[test]
fn lines_split_on_newline_and_keep_lone_cr_visible() {
    assert_eq!(sanitize_lines("a\r\nb\rc\n", 80), vec!["a", "b␍c", ""]);
}

#[test]
fn input_keeps_one_line() {
    assert_eq!(
        sanitize_input("fine\nby me\u{1b}\u{13}\u{202e}\t!"),
        "fine by me !"
    );
}

fn allowed_output(c: char) -> bool {
    let u = c as u32;
    u >= 0x20 && u != 0x7f && !(0x80..=0x9f).contains(&u) && !invisible(c)
}

proptest! {
    #[test]
    fn output_is_inert_and_fits(input in any::<Vec<u8>>(), max in 0usize..120) {
        let out = sanitize_bytes(&input, max);
        prop_assert!(out.chars().all(allowed_output), "{out:?}");
        prop_assert!(width(&out) <= max, "{out:?} is {} wide, limit {max}", width(&out));
    }

    #[test]
    fn text_output_is_inert_and_fits(input in "\\PC*|[\u{0}-\u{9f}\u{200b}-\u{202e}\u{2060}-\u{2069}\u{fe0f}]*", max in 0usize..60) {
        let out = sanitize_line(&input, max);
        prop_assert!(out.chars().all(allowed_output), "{out:?}");
        prop_assert!(width(&out) <= max);
    }

    #[test]
    fn short_printable_text_is_unchanged(input in "[a-zA-Z0-9 .:/-]{0,40}") {
        prop_assert_eq!(sanitize_line(&input, 40), input);
    }
}

#[test]
fn a_field_shows_every_control_and_line_break() {
    assert_eq!(
        field("id\nNEXT: done\r\t\u{1b}[2J\u{9b}\u{202e}x"),
        "id␊NEXT: done␍␉␛[2J<U+009B><U+202E>x"
    );
    assert_eq!(field("café — ✓ 日本"), "café — ✓ 日本");
}

#[test]
fn terminal_text_keeps_only_its_own_line_feeds() {
    assert_eq!(
        terminal_text(b"a\x1b]0;t\x07\nb\r\n\xff\x7f"),
        "a␛]0;t␇\nb␍\n\u{fffd}␡"
    );
}

proptest! {
    #[test]
    fn the_escape_table_is_one(c in any::<char>()) {
        // What JSON escapes is exactly what the printer replaces.
        prop_assert_eq!(needs_escape(c), stand_in(c).is_some());
        let f = field(&c.to_string());
        prop_assert!(!f.chars().any(needs_escape));
    }
}
