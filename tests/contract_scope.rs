//! Approving an out-of-scope file edits the contract's FILE SCOPE: exact
//! bytes after each edit, on disk, under races, through links, and over
//! the real contracts when they are at hand.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use loopwatch::contract::{
    ContractEditOutcome, RETRIES, ScopeEdit, ScopeError, gate_path, gate_path_in_file,
    gate_path_in_file_with_hook,
};
use loopwatch::util::sha256_tagged;

const DATE: &str = "2026-11-02";
const REASON: &str = "csv crate added";

mod support;

fn fixture(name: &str) -> Vec<u8> {
    support::fixture(&format!("contract_scope/{name}.md"))
}

/// Copies a fixture into a fresh folder; returns the folder guard and the file.
fn on_disk(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("contract.md");
    fs::write(&file, fixture(name)).unwrap();
    (dir, file)
}

/// What an edit of a contract from `before` to `after` bytes reports.
fn reported(
    before: &[u8],
    after: &[u8],
    changed: bool,
    content_changed: bool,
) -> ContractEditOutcome {
    ContractEditOutcome {
        before: sha256_tagged(before),
        after: sha256_tagged(after),
        changed,
        content_changed,
    }
}

/// Gates `path` in fixture `input` on disk; the file must then equal fixture
/// `expected`, and a second approval must leave it byte-identical.
fn assert_case(input: &str, path: &str, expected: &str) {
    let (_dir, file) = on_disk(input);
    let before = fixture(input);
    let want = fixture(expected);
    let outcome = gate_path_in_file(&file, path, DATE, Some(REASON), None).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&fs::read(&file).unwrap()),
        String::from_utf8_lossy(&want),
        "{input} + {path}"
    );
    assert_eq!(fs::read(&file).unwrap(), want, "{input} + {path}: bytes");
    assert_eq!(outcome, reported(&before, &want, true, false));
    let again = gate_path_in_file(&file, path, "2026-12-31", Some(REASON), None).unwrap();
    assert!(!again.changed, "{input} + {path}: tagged twice");
    assert_eq!(again.before, again.after);
    assert_eq!(fs::read(&file).unwrap(), want);
}

/// One test per case: `test: input + path => expected`, each pair run
/// through [`assert_case`].
macro_rules! cases {
    ($($test:ident: $($input:literal + $path:literal => $expected:literal),+;)*) => {$(
        #[test]
        fn $test() {
            $(assert_case($input, $path, $expected);)+
        }
    )*};
}

cases! {
    bullet_list_gets_a_bullet_after_its_first_list_ignoring_the_out_of_scope_line:
        "bullets" + "Cargo.lock" => "bullets.after";
    dot_list_gets_a_dot_item:
        "dots" + "Cargo.lock" => "dots.after";
    comma_list_gets_a_comma_item_on_its_last_line:
        "commas" + "Cargo.lock" => "commas.after";
    labelled_comma_lines_keep_their_final_period_and_skip_the_untouched_line:
        "commas_labelled" + "build.rs" => "commas_labelled.after";
    plain_lines_get_a_plain_line:
        "plain" + "Cargo.lock" => "plain.after";
    missing_section_is_added_at_the_end:
        "missing" + "Cargo.lock" => "missing.after";
    empty_section_gets_a_bullet_under_its_heading:
        "empty" + "Cargo.lock" => "empty.after";
    present_but_not_gated_is_tagged_once_after_the_token:
        "gated" + "docs/a.md" => "gated.after-docs-a",
        "tokens" + "src/b.rs" => "tokens.after-b",
        "tokens" + "src/a.rs" => "tokens.after-a";
    tagging_an_aligned_entry_keeps_its_comment_column:
        "aligned" + "tests/export_csv.rs" => "aligned.after";
    crlf_endings_are_kept_and_used_for_the_new_line:
        "crlf" + "Cargo.lock" => "crlf.after",
        "crlf_missing" + "Cargo.lock" => "crlf_missing.after";
    a_missing_final_newline_stays_missing:
        "no_final_newline" + "Cargo.lock" => "no_final_newline.after",
        "no_final_newline_missing" + "Cargo.lock" => "no_final_newline_missing.after";
    bom_is_kept_and_does_not_hide_the_heading:
        "bom" + "Cargo.lock" => "bom.after";
    fenced_lookalikes_are_ignored:
        "fenced" + "Cargo.lock" => "fenced.after",
        "fenced" + "example/only.rs" => "fenced.after-example";
}

#[test]
fn already_gated_leaves_the_file_byte_identical() {
    let original = fixture("gated");
    for path in [
        "Cargo.lock",
        "Cargo.toml",
        "build.rs",
        "docs/b.md",
        "src/b.rs",
    ] {
        assert_eq!(
            gate_path(&original, path, DATE, Some(REASON)).unwrap(),
            ScopeEdit::AlreadyGated
        );
        let (_dir, file) = on_disk("gated");
        let outcome = gate_path_in_file(&file, path, DATE, Some(REASON), None).unwrap();
        assert_eq!(
            outcome,
            reported(&original, &original, false, false),
            "{path}"
        );
        assert_eq!(fs::read(&file).unwrap(), original, "{path}");
    }
}

/// Approves `Cargo.lock` in `file` as the person saw it when it held `shown`.
fn approve_as_shown(file: &Path, shown: &[u8]) -> ContractEditOutcome {
    let hash = sha256_tagged(shown);
    gate_path_in_file(file, "Cargo.lock", DATE, None, Some(&hash)).unwrap()
}

#[test]
fn content_changed_since_the_dialog_read_it_is_still_edited_and_reported() {
    let shown = fixture("dots");
    let (_dir, file) = on_disk("dots");
    // Someone added a note after the person's dialog read the contract.
    let now = [shown.clone(), b"Late note.\n".to_vec()].concat();
    fs::write(&file, &now).unwrap();
    let outcome = approve_as_shown(&file, &shown);
    let want = [fixture("dots.after"), b"Late note.\n".to_vec()].concat();
    assert_eq!(fs::read(&file).unwrap(), want);
    assert_eq!(outcome, reported(&now, &want, true, true));
}

#[test]
fn content_changed_and_already_gated_meanwhile_is_left_alone() {
    let shown = fixture("dots");
    let (_dir, file) = on_disk("dots.after");
    let gated = fixture("dots.after");
    let outcome = approve_as_shown(&file, &shown);
    assert_eq!(outcome, reported(&gated, &gated, false, true));
    assert_eq!(fs::read(&file).unwrap(), gated);
}

#[test]
fn a_rewrite_between_read_and_rename_is_redone_on_the_new_content() {
    let (_dir, file) = on_disk("plain");
    let rewritten = [fixture("plain"), b"Added meanwhile.\n".to_vec()].concat();
    let mut attempts = Vec::new();
    let outcome = gate_path_in_file_with_hook(&file, "Cargo.lock", DATE, None, None, &mut |n| {
        attempts.push(n);
        if n == 1 {
            fs::write(&file, &rewritten).unwrap();
        }
    })
    .unwrap();
    assert_eq!(attempts, vec![1, 2]);
    let want = [fixture("plain.after"), b"Added meanwhile.\n".to_vec()].concat();
    assert_eq!(fs::read(&file).unwrap(), want);
    assert_eq!(outcome, reported(&rewritten, &want, true, true));
}

#[test]
fn a_file_rewritten_at_every_attempt_is_a_conflict_and_is_not_written() {
    let (_dir, file) = on_disk("plain");
    let mut last = Vec::new();
    let err = gate_path_in_file_with_hook(&file, "Cargo.lock", DATE, None, None, &mut |n| {
        last = format!("rewrite {n}\n").into_bytes();
        fs::write(&file, &last).unwrap();
    })
    .unwrap_err();
    assert!(
        matches!(&err, ScopeError::Conflict { contract, attempts } if *contract == file && *attempts == RETRIES + 1),
        "{err:?}"
    );
    assert_eq!(fs::read(&file).unwrap(), b"rewrite 4\n");
    assert_eq!(last, b"rewrite 4\n");
    assert!(
        err.to_string()
            .contains("contract.md: the file changed during each of 4 attempts"),
        "{err}"
    );
}

#[test]
fn a_symlinked_contract_has_its_target_edited_and_keeps_its_link() {
    let (dir, target) = on_disk("bullets");
    let link = dir.path().join("link.md");
    symlink(&target, &link).unwrap();
    let outcome = gate_path_in_file(&link, "Cargo.lock", DATE, Some(REASON), None).unwrap();
    assert!(outcome.changed);
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_link(&link).unwrap(), target);
    assert_eq!(fs::read(&target).unwrap(), fixture("bullets.after"));
}

#[test]
fn permissions_are_kept() {
    let (_dir, file) = on_disk("commas");
    fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
    gate_path_in_file(&file, "Cargo.lock", DATE, None, None).unwrap();
    assert_eq!(
        fs::metadata(&file).unwrap().permissions().mode() & 0o7777,
        0o640
    );
    assert_eq!(fs::read(&file).unwrap(), fixture("commas.after"));
}

#[test]
fn hostile_paths_are_refused_and_nothing_is_written() {
    let cases = [
        ("src/a.rs\n## REQUEST", "it holds a line break (U+000A)"),
        ("src/a.rs\r", "it holds a line break (U+000D)"),
        (
            "src/\u{1b}[31mred.rs",
            "it holds a control or invisible character (U+001B)",
        ),
        (
            "src/\u{202e}sr.exe",
            "it holds a control or invisible character (U+202E)",
        ),
        ("", "it is empty"),
        (" src/a.rs", "it starts or ends with whitespace"),
        (
            "## NOTES",
            "it would read as a heading, fence, quote or bullet on its own line",
        ),
        (
            "```",
            "it would read as a heading, fence, quote or bullet on its own line",
        ),
        ("a [gated 2026-01-01]", "it holds a [gated marker"),
    ];
    for (path, problem) in cases {
        let (_dir, file) = on_disk("plain");
        let err = gate_path_in_file(&file, path, DATE, None, None).unwrap_err();
        let ScopeError::InContract { contract, source } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(contract, &file);
        assert!(
            matches!(&**source, ScopeError::InvalidPath { path: p, problem: q } if p == path && q == problem),
            "{path:?}: {source:?}"
        );
        assert!(err.to_string().contains(problem), "{err}");
        assert_eq!(fs::read(&file).unwrap(), fixture("plain"), "{path:?}");
    }
}

#[test]
fn a_missing_contract_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nope.md");
    let err = gate_path_in_file(&file, "a.rs", DATE, None, None).unwrap_err();
    assert!(
        matches!(&err, ScopeError::Io { op: "read", contract, .. } if *contract == file),
        "{err:?}"
    );
}

/// Every line of `old` but one is in `new` in the same order, and `new` has
/// at most one more line: exactly one line changed or one was added.
fn one_line_changed_or_added(old: &[u8], new: &[u8]) -> bool {
    let old: Vec<&[u8]> = old.split(|&b| b == b'\n').collect();
    let new: Vec<&[u8]> = new.split(|&b| b == b'\n').collect();
    let differing = |a: &[&[u8]], b: &[&[u8]]| a.iter().zip(b).filter(|(x, y)| x != y).count();
    match new.len().checked_sub(old.len()) {
        Some(0) => differing(&old, &new) == 1,
        Some(1) => (0..new.len()).any(|skip| {
            let rest: Vec<&[u8]> = new
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, l)| *l)
                .collect();
            rest == old
        }),
        _ => false,
    }
}

/// Path-like words of a FILE SCOPE section, crudely: what a person would approve.
fn scope_words(contract: &str) -> Vec<String> {
    let mut in_scope = false;
    let mut words = Vec::new();
    for line in contract.lines() {
        if line.starts_with("## ") {
            in_scope = line.starts_with("## FILE SCOPE");
            continue;
        }
        if !in_scope {
            continue;
        }
        for w in line.split_whitespace() {
            let w = w.trim_matches(|c: char| ",;.()`:".contains(c));
            let pathy =
                w.contains('/') || w.ends_with(".md") || w.ends_with(".sh") || w.ends_with(".json");
            if pathy && !w.contains(['*', '{', '<', '[', ']', '~', '(', ')']) {
                words.push(w.to_owned());
            }
        }
    }
    words
}

#[test]
#[cfg_attr(
    not(loopwatch_corpus),
    ignore = "the shared corpus of real contracts (../shared/corpus) is not beside the project"
)]
fn real_contracts_change_by_one_line_and_are_never_tagged_twice() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/contracts");
    let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut checked = 0;
    for entry in entries {
        let file = entry.unwrap().path();
        let original = fs::read(&file).unwrap();
        let mut paths = scope_words(&String::from_utf8_lossy(&original));
        paths.push("loopwatch-probe/new-file.rs".to_owned());
        for path in paths {
            let ctx = format!("{} + {path}", file.display());
            let edited = match gate_path(&original, &path, DATE, Some(REASON)).expect(&ctx) {
                ScopeEdit::Changed(edited) => edited,
                ScopeEdit::AlreadyGated => continue,
            };
            assert!(one_line_changed_or_added(&original, &edited), "{ctx}");
            let marker = format!("{path} [gated {DATE}]");
            assert!(String::from_utf8_lossy(&edited).contains(&marker), "{ctx}");
            assert_eq!(
                gate_path(&edited, &path, DATE, Some(REASON)).expect(&ctx),
                ScopeEdit::AlreadyGated,
                "{ctx}"
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} edits were checked");
}
