//! Conformance of `loopwatch floor-guard`: one throwaway git repository per
//! case, the real binary, exact stdout and exit code.

mod support;

use std::fs;
use std::path::Path;
use std::process::Command;

use tempfile::TempDir;

use support::code::hermetic;

/// A repository with a base commit: a test file with three assertions, a
/// vitest config with `lines: 80`, and a source file.
struct Repo {
    dir: TempDir,
    base: String,
}

/// What one run printed.
#[derive(Debug, PartialEq)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repo {
            dir,
            base: String::new(),
        };
        repo.git(&["init", "-q"]);
        repo.write(
            "sample.test.js",
            "expect(1).toBe(1);\nexpect(2).toBe(2);\nexpect(3).toBe(3);\n",
        );
        repo.write(
            "vitest.config.ts",
            "export default {\n  coverage: {\n    lines: 80,\n  },\n};\n",
        );
        repo.write("src/index.js", "function add(a, b) {\n  return a + b;\n}\n");
        repo.write(".gitignore", "ignored.test.js\n");
        let base = repo.commit("base");
        Repo { base, ..repo }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, rel: &str, text: &str) {
        support::code::write(self.path(), rel, text);
    }

    fn append(&self, rel: &str, text: &str) {
        let p = self.path().join(rel);
        let old = fs::read_to_string(&p).unwrap();
        fs::write(p, old + text).unwrap();
    }

    /// Commits every change; returns the new commit's id.
    fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    fn git(&self, args: &[&str]) -> String {
        support::code::git(self.path(), args)
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_in(self.path(), args)
    }

    fn run_in(&self, cwd: &Path, args: &[&str]) -> Run {
        let out = hermetic(&mut Command::new(env!("CARGO_BIN_EXE_loopwatch")))
            .current_dir(cwd)
            .arg("floor-guard")
            .args(args)
            .output()
            .unwrap();
        Run {
            code: out.status.code().unwrap(),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    /// Runs against the base commit and expects exactly these stdout lines.
    fn expect(&self, code: i32, lines: &[&str]) {
        assert_run(self.run(&[&self.base]), code, lines);
    }
}

/// Expects exactly these stdout lines, exit code `code` and an empty stderr.
fn assert_run(got: Run, code: i32, lines: &[&str]) {
    assert_eq!(
        got.stdout,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
        "{got:?}"
    );
    assert_eq!((got.code, got.stderr.as_str()), (code, ""));
}

const USAGE: &str = "usage: loopwatch floor-guard <base-ref> [-- <pathspec>...]\n";

/// One test per case: `test: append|write file, text => exit code [lines]`
/// changes one file of a fresh [`Repo`] and expects exactly these stdout
/// lines against its base.
macro_rules! cases {
    ($($test:ident: $how:ident $file:literal, $text:literal => $code:literal $lines:expr;)*) => {$(
        #[test]
        fn $test() {
            let r = Repo::new();
            r.$how($file, $text);
            r.expect($code, &$lines);
        }
    )*};
}

cases! {
    suppress: append "src/index.js", "// eslint-disable-next-line no-console\n" => 2 [
        "FLOOR SUPPRESS src/index.js:4 // eslint-disable-next-line no-console",
        "FLOOR GUARD: 1 finding(s), 0 waived",
    ];
    skip: append "sample.test.js", "it.skip('later', () => {});\n" => 2 [
        "FLOOR SKIP sample.test.js:4 it.skip('later', () => {});",
        "FLOOR GUARD: 1 finding(s), 0 waived",
    ];
    assert_drop: write "sample.test.js", "expect(1).toBe(1);\n" => 2 [
        "FLOOR ASSERT_DROP sample.test.js:1 assertion lines 2 -> 0",
        "FLOOR GUARD: 1 finding(s), 0 waived",
    ];
    stub: append "src/index.js", "function todo() { throw new Error('not implemented'); }\n" => 2 [
        "FLOOR STUB src/index.js:4 function todo() { throw new Error('not implemented'); }",
        "FLOOR GUARD: 1 finding(s), 0 waived",
    ];
    threshold_down: write "vitest.config.ts",
        "export default {\n  coverage: {\n    lines: 60,\n  },\n};\n" => 2 [
            "FLOOR THRESHOLD_DOWN vitest.config.ts:3 lines: 60,",
            "FLOOR GUARD: 1 finding(s), 0 waived",
        ];
    threshold_up_is_clean: write "vitest.config.ts",
        "export default {\n  coverage: {\n    lines: 85,\n  },\n};\n" => 0 [
            "FLOOR GUARD: clean",
        ];
    waiver_is_printed_and_not_counted: append "src/index.js",
        "// eslint-disable-next-line no-console -- floor-guard: allow legacy shim\n" => 0 [
            "WAIVED SUPPRESS src/index.js:4 // eslint-disable-next-line no-console -- floor-guard: allow legacy shim",
            "FLOOR GUARD: clean",
        ];
    waived_and_counted_findings_are_both_summed: append "src/index.js",
        "// @ts-ignore floor-guard: allow typed later\n// @ts-ignore\n" => 2 [
            "WAIVED SUPPRESS src/index.js:4 // @ts-ignore floor-guard: allow typed later",
            "FLOOR SUPPRESS src/index.js:5 // @ts-ignore",
            "FLOOR GUARD: 1 finding(s), 1 waived",
        ];
    exit_and_fit_lookalikes_never_flag: append "sample.test.js",
        "process.exit(1);\nsys.exit(1)\nexit(0)\nmodel.fit(x);\nprofit(1)\nraise SystemExit(2)\n"
        => 0 [
            "FLOOR GUARD: clean",
        ];
    bare_jasmine_skips_and_focuses_flag: append "sample.test.js",
        "  xit('skipped', () => {});\nfit('focused', () => {});\nwrap((fit('inner')));\nxdescribe('s', f);\nfdescribe('s', f);\n"
        => 2 [
            "FLOOR SKIP sample.test.js:4 xit('skipped', () => {});",
            "FLOOR SKIP sample.test.js:5 fit('focused', () => {});",
            "FLOOR SKIP sample.test.js:6 wrap((fit('inner')));",
            "FLOOR SKIP sample.test.js:7 xdescribe('s', f);",
            "FLOOR SKIP sample.test.js:8 fdescribe('s', f);",
            "FLOOR GUARD: 5 finding(s), 0 waived",
        ];
    skip_outside_test_paths_is_ignored: append "src/index.js", "it.only('x');\nxit('y');\n" => 0 [
        "FLOOR GUARD: clean",
    ];
    clean_diff: append "src/index.js", "// helper\n" => 0 [
        "FLOOR GUARD: clean",
    ];
    a_test_file_emptied_of_every_line_reports_line_1: write "sample.test.js", "" => 2 [
        "FLOOR ASSERT_DROP sample.test.js:1 assertion lines 3 -> 0",
        "FLOOR GUARD: 1 finding(s), 0 waived",
    ];
}

#[test]
fn deleted_test() {
    let r = Repo::new();
    fs::remove_file(r.path().join("sample.test.js")).unwrap();
    r.expect(
        2,
        &[
            "FLOOR DELETED_TEST sample.test.js:1 sample.test.js",
            "FLOOR GUARD: 1 finding(s), 0 waived",
        ],
    );
}

#[test]
fn untracked_files_count_and_ignored_ones_do_not() {
    let r = Repo::new();
    r.write("new.test.js", "// fresh\nit.only('x', f);\n");
    r.write("my spec/a b.test.js", "xit('spaced', f);\n");
    r.write("ignored.test.js", "it.skip('hidden', f);\n");
    r.expect(
        2,
        &[
            "FLOOR SKIP my spec/a b.test.js:1 xit('spaced', f);",
            "FLOOR SKIP new.test.js:2 it.only('x', f);",
            "FLOOR GUARD: 2 finding(s), 0 waived",
        ],
    );
}

#[test]
fn pathspec_restricts_tracked_and_untracked_files() {
    let r = Repo::new();
    r.append("src/index.js", "# noqa\n");
    r.append("sample.test.js", "it.skip('x');\n");
    r.write("src/extra.js", "x = 1  # type: ignore\n");
    r.write("other.js", "# nosec\n");
    let got = r.run(&[&r.base, "--", "src"]);
    assert_eq!(
        got.stdout,
        "FLOOR SUPPRESS src/extra.js:1 x = 1  # type: ignore\nFLOOR SUPPRESS src/index.js:4 # noqa\nFLOOR GUARD: 2 finding(s), 0 waived\n"
    );
    assert_eq!(got.code, 2);
}

#[test]
fn several_kinds_committed_and_uncommitted_sorted_by_path_line_kind() {
    let r = Repo::new();
    r.write(
        "tests/sp ace.test.js",
        "expect(a).toBe(1);\nexpect(b).toBe(2);\n",
    );
    let base = r.commit("more tests");
    // Committed after the base...
    r.write(
        "vitest.config.ts",
        "export default {\n  coverage: {\n    lines: 70,\n  },\n};\n",
    );
    r.commit("lower the bar");
    // ...and in the working tree.
    r.write("tests/sp ace.test.js", "it.only('a', f); // @ts-ignore\n");
    r.append("src/index.js", "try { add() } catch (e) {}\n");
    r.append("sample.test.js", "xit('later');\n");
    assert_run(
        r.run(&[&base]),
        2,
        &[
            "FLOOR SKIP sample.test.js:4 xit('later');",
            "FLOOR STUB src/index.js:4 try { add() } catch (e) {}",
            "FLOOR ASSERT_DROP tests/sp ace.test.js:1 assertion lines 2 -> 0",
            "FLOOR SKIP tests/sp ace.test.js:1 it.only('a', f); // @ts-ignore",
            "FLOOR SUPPRESS tests/sp ace.test.js:1 it.only('a', f); // @ts-ignore",
            "FLOOR THRESHOLD_DOWN vitest.config.ts:3 lines: 70,",
            "FLOOR GUARD: 6 finding(s), 0 waived",
        ],
    );
}

#[test]
fn paths_are_from_the_repository_root_when_run_in_a_subfolder() {
    let r = Repo::new();
    r.append("sample.test.js", "it.skip('x');\n");
    r.write("src/new.spec.js", "fdescribe('y');\n");
    let got = r.run_in(&r.path().join("src"), &[&r.base]);
    assert_eq!(
        got.stdout,
        "FLOOR SKIP sample.test.js:4 it.skip('x');\nFLOOR SKIP src/new.spec.js:1 fdescribe('y');\nFLOOR GUARD: 2 finding(s), 0 waived\n"
    );
}

#[test]
fn usage_errors_exit_3_with_the_usage_line() {
    let r = Repo::new();
    for args in [
        &[][..],
        &["HEAD", "src"][..],
        &["no-such-ref"][..],
        &["HEAD", "x", "--", "src"][..],
    ] {
        let got = r.run(args);
        assert_eq!(
            got,
            Run {
                code: 3,
                stdout: String::new(),
                stderr: USAGE.into()
            },
            "{args:?}"
        );
    }
    // A blob is not a commit.
    let blob = r
        .git(&["rev-parse", "HEAD:src/index.js"])
        .trim()
        .to_string();
    assert_eq!(r.run(&[&blob]).code, 3);
    // Outside any repository nothing resolves.
    let outside = tempfile::tempdir().unwrap();
    assert_eq!(r.run_in(outside.path(), &["HEAD"]).code, 3);
}

#[test]
fn an_empty_pathspec_after_the_separator_is_the_whole_tree() {
    let r = Repo::new();
    r.append("src/index.js", "raise NotImplementedError\n");
    let got = r.run(&[&r.base, "--"]);
    assert_eq!(
        got.stdout,
        "FLOOR STUB src/index.js:4 raise NotImplementedError\nFLOOR GUARD: 1 finding(s), 0 waived\n"
    );
}

#[test]
fn a_deleted_empty_or_binary_test_file_is_not_a_deleted_test() {
    let r = Repo::new();
    r.write("tests/__init__.py", "");
    fs::write(
        r.path().join("tests/.cart.test.js.swp"),
        b"b0VIM 9.0\0\0\x01\x02\xff",
    )
    .unwrap();
    r.write("tests/test_cart.py", "def test_total():\n    assert 1\n");
    let base = r.commit("more tests");
    for gone in [
        "tests/__init__.py",
        "tests/.cart.test.js.swp",
        "tests/test_cart.py",
    ] {
        fs::remove_file(r.path().join(gone)).unwrap();
    }
    let want = [
        "FLOOR DELETED_TEST tests/test_cart.py:1 tests/test_cart.py",
        "FLOOR GUARD: 1 finding(s), 0 waived",
    ];
    assert_run(r.run(&[&base]), 2, &want);
    // Committed deletions are judged the same way.
    r.commit("drop them");
    assert_run(r.run(&[&base]), 2, &want);
}

#[test]
fn a_file_name_or_line_cannot_forge_output_lines_or_reach_a_terminal_raw() {
    let r = Repo::new();
    r.write("q\nFLOOR GUARD: clean\n.test.js", "it.only('x');\n");
    r.write("src/cr.js", "x = 1 \r # noqa\r\n");
    r.write("src/esc.js", "y = 2 \u{1b}[2J\u{202e} # noqa\n");
    r.expect(
        2,
        &[
            "FLOOR SKIP q\\nFLOOR GUARD: clean\\n.test.js:1 it.only('x');",
            "FLOOR SUPPRESS src/cr.js:1 x = 1 \\r # noqa",
            "FLOOR SUPPRESS src/esc.js:1 y = 2 \\u{1b}[2J\\u{202e} # noqa",
            "FLOOR GUARD: 3 finding(s), 0 waived",
        ],
    );
}

#[test]
fn non_ascii_names_are_printed_as_they_are_tracked_untracked_or_deleted() {
    let r = Repo::new();
    r.write("tests/café_spec.js", "expect(1).toBe(1);\n");
    r.write("tests/naïve.test.js", "expect(2).toBe(2);\n");
    let base = r.commit("accents");
    r.write("tests/café_spec.js", "it.only('é', f);\n");
    fs::remove_file(r.path().join("tests/naïve.test.js")).unwrap();
    r.write("tests/über.test.js", "xit('ü', f);\n");
    assert_run(
        r.run(&[&base]),
        2,
        &[
            "FLOOR ASSERT_DROP tests/café_spec.js:1 assertion lines 1 -> 0",
            "FLOOR SKIP tests/café_spec.js:1 it.only('é', f);",
            "FLOOR DELETED_TEST tests/naïve.test.js:1 tests/naïve.test.js",
            "FLOOR SKIP tests/über.test.js:1 xit('ü', f);",
            "FLOOR GUARD: 4 finding(s), 0 waived",
        ],
    );
}

#[test]
fn lines_starting_with_plus_plus_or_dash_dash_are_content() {
    let r = Repo::new();
    r.write(
        "sample.test.js",
        "-- a note\nexpect(1).toBe(1);\nexpect(2).toBe(2);\nexpect(3).toBe(3);\n",
    );
    let base = r.commit("note");
    r.write("sample.test.js", "++ b/other.js\nexpect(1).toBe(1);\n");
    r.append("src/index.js", "++count; // eslint-disable-line\n");
    assert_run(
        r.run(&[&base]),
        2,
        &[
            "FLOOR ASSERT_DROP sample.test.js:1 assertion lines 2 -> 0",
            "FLOOR SUPPRESS src/index.js:4 ++count; // eslint-disable-line",
            "FLOOR GUARD: 2 finding(s), 0 waived",
        ],
    );
}

#[test]
fn user_diff_configuration_changes_nothing() {
    let r = Repo::new();
    r.write("tests/old.test.js", "expect(1).toBe(1);\n");
    let base = r.commit("old test");
    fs::remove_file(r.path().join("tests/old.test.js")).unwrap();
    r.append("src/index.js", "// @ts-ignore\n");
    r.write("new.test.js", "it.skip('later', f);\n");
    let want = [
        "FLOOR SKIP new.test.js:1 it.skip('later', f);",
        "FLOOR SUPPRESS src/index.js:4 // @ts-ignore",
        "FLOOR DELETED_TEST tests/old.test.js:1 tests/old.test.js",
        "FLOOR GUARD: 3 finding(s), 0 waived",
        "",
    ]
    .join("\n");
    for (key, value) in [
        ("color.ui", "always"),
        ("color.diff", "always"),
        ("diff.mnemonicPrefix", "true"),
        ("diff.noprefix", "true"),
        ("diff.external", "false"),
        ("core.quotePath", "true"),
    ] {
        r.git(&["config", key, value]);
        let got = r.run(&[&base]);
        assert_eq!(
            (got.code, got.stdout.as_str()),
            (2, want.as_str()),
            "{key}={value}"
        );
    }
}

#[test]
fn a_pathspec_git_rejects_is_an_error_not_a_clean_result() {
    let r = Repo::new();
    r.append("src/index.js", "// @ts-ignore\n");
    for spec in ["../outside", ":(bad)x"] {
        let got = r.run(&[&r.base, "--", spec]);
        assert_eq!((got.code, got.stdout.as_str()), (3, ""), "{spec}");
        assert!(
            got.stderr.starts_with("loopwatch floor-guard: `git diff ")
                && got.stderr.contains(spec)
                && got.stderr.contains("fatal: "),
            "{spec}: {}",
            got.stderr
        );
    }
}

#[test]
fn a_pathspec_given_in_a_subfolder_is_relative_to_it_and_paths_to_the_root() {
    let r = Repo::new();
    r.append("sample.test.js", "it.skip('x');\n");
    r.append("src/index.js", "// @ts-ignore\n");
    r.write("src/new.spec.js", "fdescribe('y');\n");
    let got = r.run_in(&r.path().join("src"), &[&r.base, "--", "."]);
    assert_eq!(
        got.stdout,
        "FLOOR SUPPRESS src/index.js:4 // @ts-ignore\nFLOOR SKIP src/new.spec.js:1 fdescribe('y');\nFLOOR GUARD: 2 finding(s), 0 waived\n"
    );
}
