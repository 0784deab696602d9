//! Log text made matchable: ANSI escape sequences removed, carriage-return
//! overwrites resolved, and test names cut into path segments to match a
//! `--test` reference against.

use std::sync::LazyLock;

use regex::Regex;

static ANSI: LazyLock<Regex> =
    static_regex!(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]");

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

/// Extensions of a test file's name (the file part of a reference).
const SOURCE_EXTENSIONS: [&str; 21] = [
    "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "py", "rs", "go", "java", "kt", "kts",
    "swift", "rb", "php", "cs", "scala", "m", "mm",
];

/// A segment names a file: it holds a `/` or ends in a source extension.
fn is_file(segment: &str) -> bool {
    segment.contains('/')
        || segment
            .rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && SOURCE_EXTENSIONS.contains(&ext))
}

/// Two spellings of one file: equal, or one is the other's path tail.
fn same_file(a: &str, b: &str) -> bool {
    let a = a.strip_prefix("./").unwrap_or(a);
    let b = b.strip_prefix("./").unwrap_or(b);
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}

/// `file::a::b` as its file (when the first of several segments is one)
/// and its name segments.
fn split(name: &str) -> (Option<&str>, Vec<&str>) {
    let segments: Vec<&str> = name.split("::").collect();
    match segments.split_first() {
        Some((first, rest)) if !rest.is_empty() && is_file(first) => (Some(first), rest.to_vec()),
        _ => (None, segments),
    }
}

/// `a` is `b` with segments left out (in order, possibly none).
fn is_subsequence(a: &[&str], b: &[&str]) -> bool {
    let mut it = b.iter();
    a.iter().all(|x| it.any(|y| y == x))
}

/// A `--test` reference: `tests/a.py::Class::test`, `src/a.test.js::name`,
/// `group > nested passes`, `Suite/Class/test()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Reference {
    /// The file part, when the reference starts with one.
    file: Option<String>,
    /// The name's segments (`::` and ` > ` both separate).
    segments: Vec<String>,
}

impl Reference {
    /// Reads a reference.
    pub(super) fn parse(reference: &str) -> Reference {
        let normal = reference.replace(" > ", "::");
        let (file, segments) = split(&normal);
        Reference {
            file: file.map(str::to_string),
            segments: segments.into_iter().map(str::to_string).collect(),
        }
    }

    /// Whether a test of the log (in `file` when the runner printed one
    /// apart) is the one referred to. The file must agree when both sides
    /// give one. A one-segment reference matches a test by its last segment
    /// (or the last `/` or `#` part of it); a longer one also needs its
    /// segments to be those of the test with some left out, or the reverse,
    /// so that `group > b` never stands for `other > b`.
    pub(super) fn matches(&self, file: Option<&str>, name: &str) -> bool {
        let (own_file, segments) = match file {
            Some(f) => (Some(f), name.split("::").collect()),
            None => split(name),
        };
        if let (Some(want), Some(have)) = (&self.file, own_file)
            && !same_file(want, have)
        {
            return false;
        }
        let mut segments = segments;
        let (Some(last), Some(want)) = (segments.last_mut(), self.segments.last()) else {
            return false;
        };
        *last = last.strip_suffix("()").unwrap_or(last);
        // A reference without parameters stands for every parametrization
        // (`test_x` for `test_x[1-2]`); all of them must then agree.
        if !want.contains('[') {
            *last = without_parameters(last);
        }
        let last = *last;
        match self.segments.as_slice() {
            [] => false,
            [one] => reference_keys(one).contains(&last),
            many => {
                let mine: Vec<&str> = many.iter().map(String::as_str).collect();
                let want_last = last_segment(mine[mine.len() - 1]);
                want_last == last
                    && (is_subsequence(&mine, &segments) || is_subsequence(&segments, &mine))
            }
        }
    }
}

/// A test name without its `[...]` parameters (pytest's parametrization).
fn without_parameters(name: &str) -> &str {
    match name.find('[') {
        Some(i) if i > 0 && name.ends_with(']') => &name[..i],
        _ => name,
    }
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

    #[test]
    fn references_agree_on_file_and_path() {
        let r = Reference::parse("src/cart.test.js::total");
        assert!(r.matches(Some("src/cart.test.js"), "total"));
        assert!(r.matches(Some("web/src/cart.test.js"), "cart::total"));
        assert!(!r.matches(Some("src/other.test.js"), "total"));
        assert!(r.matches(None, "total"), "a runner that names no file");
        let r = Reference::parse("group > nested passes");
        assert!(r.matches(None, "group::nested passes"));
        assert!(r.matches(None, "outer::group::nested passes"));
        assert!(!r.matches(None, "other::nested passes"));
        assert!(!r.matches(None, "nested passes::x"));
        let r = Reference::parse("tests/test_a.py::TestA::test_b");
        assert!(r.matches(None, "test_a.py::TestA::test_b"));
        assert!(!r.matches(None, "tests/test_c.py::TestA::test_b"));
        let r = Reference::parse("csv::header_order");
        assert!(r.matches(None, "export::csv::tests::header_order"));
        assert!(!r.matches(None, "export::json::tests::header_order"));
        let r = Reference::parse("MyTests/CalcTests/testAdd()");
        assert!(r.matches(None, "MyTests.CalcTests::testAdd"));
        assert!(!is_file("cart") && is_file("cart.test.ts") && !is_file(".ts"));
        let r = Reference::parse("tests/test_a.py::test_x");
        assert!(r.matches(None, "tests/test_a.py::test_x[1-2]"));
        assert!(!r.matches(None, "tests/test_a.py::test_xy[1]"));
        let r = Reference::parse("tests/test_a.py::test_x[1-2]");
        assert!(!r.matches(None, "tests/test_a.py::test_x[3-4]"));
    }
}
