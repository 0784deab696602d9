//! Unit tests of [`super::gate_path`]: the edge cases of the section's shapes.

use super::{ScopeEdit, ScopeError, gate_path};

const DATE: &str = "2026-11-02";

/// The edited contract as text; panics when nothing changed.
fn edit(input: &str, path: &str, reason: Option<&str>) -> String {
    match gate_path(input.as_bytes(), path, DATE, reason).unwrap() {
        ScopeEdit::Changed(bytes) => String::from_utf8(bytes).unwrap(),
        ScopeEdit::AlreadyGated => panic!("{path}: already gated in {input:?}"),
    }
}

fn gated(input: &str, path: &str) -> bool {
    gate_path(input.as_bytes(), path, DATE, None).unwrap() == ScopeEdit::AlreadyGated
}

#[test]
fn dates_must_be_real_and_written_yyyy_mm_dd() {
    for date in [
        "2026-13-01",
        "2026-1-01",
        "20261102",
        "2026-02-30",
        "２026-11-02",
        "",
    ] {
        let err = gate_path(b"", "a.rs", date, None).unwrap_err();
        assert!(
            matches!(&err, ScopeError::InvalidDate { date: d } if d == date),
            "{date}: {err:?}"
        );
    }
    assert!(gate_path(b"", "a.rs", "2028-02-29", None).is_ok());
}

#[test]
fn reasons_are_folded_to_one_line_and_blank_ones_dropped() {
    let out = edit(
        "## FILE SCOPE\n- a.rs\n",
        "b.rs",
        Some(" needed\n  by\tthe build "),
    );
    assert_eq!(
        out,
        "## FILE SCOPE\n- a.rs\n- b.rs [gated 2026-11-02] — needed by the build\n"
    );
    let out = edit("## FILE SCOPE\n- a.rs\n", "b.rs", Some(" \n "));
    assert_eq!(out, "## FILE SCOPE\n- a.rs\n- b.rs [gated 2026-11-02]\n");
    let err = gate_path(b"", "b.rs", DATE, Some("red \u{1b}[31m")).unwrap_err();
    assert!(
        matches!(&err, ScopeError::InvalidReason { problem } if problem.contains("U+001B")),
        "{err:?}"
    );
}

#[test]
fn bullet_continuation_lines_are_part_of_their_bullet() {
    let input = "## FILE SCOPE\n- a.rs, b.rs,\n  c.rs (x)\n- d.rs\n";
    assert_eq!(
        edit(input, "c.rs", None),
        "## FILE SCOPE\n- a.rs, b.rs,\n  c.rs [gated 2026-11-02] (x)\n- d.rs\n"
    );
    assert_eq!(
        edit(input, "e.rs", None),
        format!("{input}- e.rs [gated 2026-11-02]\n")
    );
    assert!(gated(
        "## FILE SCOPE\n- [gated 2026-01-01] a.rs,\n  c.rs\n",
        "c.rs"
    ));
}

#[test]
fn a_marker_in_another_segment_does_not_cover_the_path() {
    let input = "## FILE SCOPE\na.rs · b.rs [gated 2026-01-01]\n";
    assert!(gated(input, "b.rs"));
    assert_eq!(
        edit(input, "a.rs", None),
        "## FILE SCOPE\na.rs [gated 2026-11-02] · b.rs [gated 2026-01-01]\n"
    );
}

#[test]
fn non_utf8_is_refused_in_the_section_and_kept_elsewhere() {
    let err = gate_path(b"## FILE SCOPE\n- a\xff.rs\n", "b.rs", DATE, None).unwrap_err();
    assert!(matches!(err, ScopeError::NotUtf8 { line: 2 }), "{err:?}");
    let input = b"# C \xff\n## FILE SCOPE\n- a.rs\n";
    let ScopeEdit::Changed(out) = gate_path(input, "b.rs", DATE, None).unwrap() else {
        panic!()
    };
    assert_eq!(
        out,
        b"# C \xff\n## FILE SCOPE\n- a.rs\n- b.rs [gated 2026-11-02]\n"
    );
}

#[test]
fn today_local_is_a_calendar_date() {
    let today = super::today_local();
    assert_eq!(today.len(), 10, "{today}");
    assert!(today.parse::<jiff::civil::Date>().is_ok(), "{today}");
    assert!(gate_path(b"", "a.rs", &today, None).is_ok());
}

/// One test per case: `test: input + path => expected`, each pair edited
/// through [`edit`] without a reason.
macro_rules! cases {
    ($($test:ident: $($input:literal + $path:literal => $expected:literal),+;)*) => {$(
        #[test]
        fn $test() {
            $(
                let got = edit($input, $path, None);
                assert_eq!(got, $expected, "{:?} + {}", $input, $path);
            )+
        }
    )*};
}

cases! {
    empty_and_bom_only_files_get_a_section:
        "" + "a.rs" => "## FILE SCOPE\n- a.rs [gated 2026-11-02]\n",
        "\u{feff}" + "a.rs" => "\u{feff}## FILE SCOPE\n- a.rs [gated 2026-11-02]\n";
    loose_bullet_lists_get_the_bullet_after_their_last_item:
        "## FILE SCOPE\n- a.rs\n\n- b.rs\n\nSee above.\n" + "c.rs"
            => "## FILE SCOPE\n- a.rs\n\n- b.rs\n- c.rs [gated 2026-11-02]\n\nSee above.\n";
    bullets_under_an_out_of_scope_label_are_not_entries:
        "## FILE SCOPE\n- src/a.rs\nOut of scope:\n- Cargo.lock\n" + "Cargo.lock"
            => "## FILE SCOPE\n- src/a.rs\n- Cargo.lock [gated 2026-11-02]\nOut of scope:\n- Cargo.lock\n",
        "## FILE SCOPE\nOut of scope:\n- Cargo.lock\n" + "Cargo.lock"
            => "## FILE SCOPE\n- Cargo.lock [gated 2026-11-02]\nOut of scope:\n- Cargo.lock\n";
    an_out_of_scope_paragraph_excludes_its_continuation_lines:
        "## FILE SCOPE\n- a.rs\n\nOut of scope: the lockfile,\nCargo.lock and docs.\n" + "Cargo.lock"
            => "## FILE SCOPE\n- a.rs\n- Cargo.lock [gated 2026-11-02]\n\nOut of scope: the lockfile,\nCargo.lock and docs.\n";
    a_path_only_named_in_commentary_gets_its_own_entry:
        "## FILE SCOPE\n- a.rs (needs b.rs) — see b.rs too\n" + "b.rs"
            => "## FILE SCOPE\n- a.rs (needs b.rs) — see b.rs too\n- b.rs [gated 2026-11-02]\n";
    appended_items_go_before_trailing_whitespace:
        "## FILE SCOPE\na.rs · b.rs  \n" + "c.rs"
            => "## FILE SCOPE\na.rs · b.rs · c.rs [gated 2026-11-02]  \n";
    only_the_first_file_scope_section_is_edited:
        "## FILE SCOPE\n- a.rs\n## FILE SCOPE (old)\n- b.rs\n" + "b.rs"
            => "## FILE SCOPE\n- a.rs\n- b.rs [gated 2026-11-02]\n## FILE SCOPE (old)\n- b.rs\n";
    // Two spaces of padding: one is taken, one stays; a single space is not
    // padding: nothing is taken.
    the_alignment_padding_never_disappears:
        "## FILE SCOPE\n- a.rs  (new)\n" + "a.rs"
            => "## FILE SCOPE\n- a.rs [gated 2026-11-02] (new)\n",
        "## FILE SCOPE\n- a.rs (new)\n" + "a.rs"
            => "## FILE SCOPE\n- a.rs [gated 2026-11-02] (new)\n";
    a_run_of_list_lines_stops_at_an_excluded_line:
        "## FILE SCOPE\nTests: a.rs, b.rs\nUntouched: c.rs\nProd: d.rs\n" + "e.rs"
            => "## FILE SCOPE\nTests: a.rs, b.rs, e.rs [gated 2026-11-02]\nUntouched: c.rs\nProd: d.rs\n";
    a_heading_at_the_very_end_takes_the_file_line_ending:
        "# C\r\n## REQUEST\r\nx\r\n## FILE SCOPE" + "a.rs"
            => "# C\r\n## REQUEST\r\nx\r\n## FILE SCOPE\r\n- a.rs [gated 2026-11-02]";
}
