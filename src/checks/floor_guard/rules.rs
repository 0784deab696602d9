//! The pattern tables of floor-guard: which files are tests or coverage
//! configs, and which added lines silence a checker, skip a test, stub
//! code, assert, carry a waiver or set a numeric key.

use std::sync::LazyLock;

use regex::Regex;

/// Substrings that make a path a test path.
const TEST_MARKERS: [&str; 3] = ["test", "spec", "__tests__"];

/// Basename prefixes of coverage and quality configs.
const CONFIG_PREFIXES: [&str; 5] = [
    "jest.config",
    "vitest.config",
    ".nycrc",
    "codecov",
    "lighthouserc",
];

/// Exact basenames of coverage and quality configs.
const CONFIG_NAMES: [&str; 2] = ["sonar-project.properties", "CONSTRAINTS.md"];

/// Checker-silencing comments.
const SUPPRESS_MARKERS: [&str; 7] = [
    "@ts-ignore",
    "eslint-disable",
    "# noqa",
    "# type: ignore",
    "nosemgrep",
    "nosec",
    "shellcheck disable",
];

/// A TypeScript expected error, a suppression only when no reason follows it.
const TS_EXPECT_ERROR: &str = "@ts-expect-error";

/// Skipped or focused tests, matched anywhere in a test-path line.
const SKIP_MARKERS: [&str; 6] = [
    ".skip(",
    ".only(",
    "it.todo(",
    "@pytest.mark.skip",
    "@unittest.skip",
    "t.Skip(",
];

/// Not-implemented markers.
const STUB_MARKERS: [&str; 2] = ["not implemented", "NotImplementedError"];

/// Substrings of an assertion line.
const ASSERT_MARKERS: [&str; 4] = ["expect(", "assert", "should", ".toBe"];

/// Bare Jasmine-style `xit(`/`fit(`/`xdescribe(`/`fdescribe(`, not part of a
/// longer identifier or a method call (`exit(`, `model.fit(`, `profit(`).
static BARE_SKIP: LazyLock<Regex> =
    static_regex!(r"(?:^|[^A-Za-z0-9_.])(?:xit|fit|xdescribe|fdescribe)\(");
static EMPTY_CATCH: LazyLock<Regex> = static_regex!(r"catch\s*\([^)]*\)\s*\{\s*\}");
static EXCEPT_PASS: LazyLock<Regex> = static_regex!(r"except\b[^:\n]*:\s*pass\b");
static WAIVER: LazyLock<Regex> = static_regex!(r"floor-guard:\s*allow\s+(\S.*)$");
static KEY_VALUE: LazyLock<Regex> =
    static_regex!(r#"["']?([A-Za-z0-9_.\-]+)["']?\s*[:=]\s*(-?\d+(?:\.\d+)?)"#);

/// A path is a test path when it contains `test`, `spec` or `__tests__`.
pub(super) fn is_test_path(path: &str) -> bool {
    TEST_MARKERS.iter().any(|m| path.contains(m))
}

/// A coverage or quality config, by basename.
pub(super) fn is_config_path(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    CONFIG_PREFIXES.iter().any(|p| base.starts_with(p)) || CONFIG_NAMES.contains(&base)
}

/// The line silences a checker.
pub(super) fn is_suppress(text: &str) -> bool {
    let bare_expect_error = text
        .split_once(TS_EXPECT_ERROR)
        .is_some_and(|(_, after)| after.trim().is_empty());
    bare_expect_error || SUPPRESS_MARKERS.iter().any(|m| text.contains(m))
}

/// The line skips or focuses a test (meaningful on test paths only).
pub(super) fn is_skip(text: &str) -> bool {
    SKIP_MARKERS.iter().any(|m| text.contains(m)) || BARE_SKIP.is_match(text)
}

/// The line stubs code out.
pub(super) fn is_stub(text: &str) -> bool {
    STUB_MARKERS.iter().any(|m| text.contains(m))
        || EMPTY_CATCH.is_match(text)
        || EXCEPT_PASS.is_match(text)
}

/// The line carries a `floor-guard: allow <reason>` waiver.
pub(super) fn is_waived(text: &str) -> bool {
    WAIVER.is_match(text)
}

/// The line is an assertion.
pub(super) fn is_assertion(text: &str) -> bool {
    ASSERT_MARKERS.iter().any(|m| text.contains(m))
}

/// The first `key: number` / `key = number` of a line.
pub(super) fn key_value(text: &str) -> Option<(String, f64)> {
    let caps = KEY_VALUE.captures(text)?;
    let value = caps[2].parse().ok()?;
    Some((caps[1].to_string(), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_skip_needs_an_identifier_boundary() {
        for yes in [
            "  xit('a', f)",
            "fit('a')",
            "(fit(x)",
            "xdescribe('s')",
            "a;fdescribe('s')",
        ] {
            assert!(is_skip(yes), "{yes}");
        }
        for no in [
            "exit(1)",
            "sys.exit(1)",
            "process.exit(1)",
            "model.fit(x)",
            "profit(1)",
            "SystemExit(2)",
        ] {
            assert!(!is_skip(no), "{no}");
        }
    }

    #[test]
    fn ts_expect_error_is_suppress_only_without_reason() {
        assert!(is_suppress("// @ts-expect-error"));
        assert!(!is_suppress("// @ts-expect-error: upstream type is wrong"));
        assert!(is_suppress("x = 1  # type: ignore"));
    }

    #[test]
    fn stubs_waivers_configs_and_values() {
        assert!(is_stub("try { f() } catch (e) { }"));
        assert!(is_stub("except ValueError: pass"));
        assert!(!is_stub("except ValueError: passthrough()"));
        assert!(is_waived("x # floor-guard: allow legacy"));
        assert!(!is_waived("x # floor-guard: allow   "));
        assert!(is_config_path("web/jest.config.ts") && is_config_path("CONSTRAINTS.md"));
        assert!(!is_config_path("docs/CONSTRAINTS.md.bak") && !is_config_path("jest.config/x.ts"));
        assert_eq!(
            key_value(r#"  "lines": 80.5,"#),
            Some(("lines".into(), 80.5))
        );
        assert_eq!(key_value("branches = -1"), Some(("branches".into(), -1.0)));
        assert!(is_test_path("src/__tests__/a.js") && !is_test_path("src/lib.rs"));
    }
}
