//! Log text made matchable: ANSI escape sequences removed, carriage-return
//! overwrites resolved, and test names cut into path segments.

use std::sync::LazyLock;

use regex::Regex;

// Invariant: a constant pattern that compiles (exercised by every test).
static ANSI: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
        .expect("valid ANSI regex")
});

/// The log's lines without colour codes; of a line a terminal would have
/// overwritten with `\r`, only the last non-empty part is kept.
pub(super) fn clean_lines(log: &str) -> Vec<String> {
    let plain = ANSI.replace_all(log, "");
    plain
        .split('\n')
        .map(|line| {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let last = line
                .rsplit('\r')
                .find(|part| !part.is_empty())
                .unwrap_or("");
            last.trim_end().to_string()
        })
        .collect()
}

/// The last `::` segment of a test name, without a trailing `()`.
pub(super) fn last_segment(name: &str) -> &str {
    let seg = name.rsplit("::").next().unwrap_or(name);
    seg.strip_suffix("()").unwrap_or(seg)
}

/// The names a test reference may stand for by its last segment
/// (`a/b.rs::name`, `Suite/Class/test`, `Class#test` all give their last part).
pub(super) fn reference_keys(reference: &str) -> Vec<&str> {
    let seg = last_segment(reference);
    let mut keys = vec![seg];
    for sep in ['/', '#'] {
        if let Some((_, tail)) = seg.rsplit_once(sep) {
            keys.push(tail.strip_suffix("()").unwrap_or(tail));
        }
    }
    keys.retain(|k| !k.is_empty());
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_overwrites_are_removed() {
        let log = "\u{1b}[32mtest a ... \u{1b}[0mok\r\nprogress 10%\rprogress 100%\r\n\u{1b}]0;title\u{7}x";
        assert_eq!(clean_lines(log), ["test a ... ok", "progress 100%", "x"]);
    }

    #[test]
    fn reference_keys_take_the_last_segment() {
        assert_eq!(reference_keys("tests/a.rs::name"), ["name"]);
        assert_eq!(
            reference_keys("MyTests/CalcTests/testAdd()"),
            ["MyTests/CalcTests/testAdd", "testAdd"]
        );
        assert_eq!(reference_keys("CalcTest#adds"), ["CalcTest#adds", "adds"]);
        assert_eq!(last_segment("mod::tests::x()"), "x");
    }
}
