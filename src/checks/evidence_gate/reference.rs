//! `--test` references matched against the tests of a log: by the file
//! the runner places each test in (a file, a go package, a cargo target, a
//! class), by the path of groups and name, by the runner's own spelling of
//! names (go's subtests, pytest's parameters).

use super::runners::{Place, TestLine, split_outside_brackets};
use super::text::is_file;

/// The last `::` segment of a test name (outside brackets: pytest's
/// `test_x[a::b]` is one), without a trailing `()`.
pub(super) fn last_segment(name: &str) -> &str {
    let mut depth = 0usize;
    let mut from = 0;
    for (i, c) in name.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ':' if depth == 0 && name[i..].starts_with("::") => from = i + 2,
            _ => {}
        }
    }
    let seg = &name[from.min(name.len())..];
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

/// The file a reference names is the file a runner printed: the same path,
/// or (`tail`: the run names no file of that very path) the runner's path
/// is the reference's without its first folders, a runner that prints
/// paths from its own root below the worktree's.
fn same_file(want: &str, have: &str, tail: bool) -> bool {
    let want = want.strip_prefix("./").unwrap_or(want);
    let have = have.strip_prefix("./").unwrap_or(have);
    want == have || tail && want.ends_with(&format!("/{have}"))
}

/// The folder of a file (`""` at the top).
fn folder(file: &str) -> &str {
    file.rsplit_once('/').map_or("", |(d, _)| d)
}

/// A file's name without its folder and extensions.
fn stem(file: &str) -> &str {
    let base = file.rsplit('/').next().unwrap_or(file);
    base.split_once('.').map_or(base, |(s, _)| s)
}

/// The module path of a cargo source file inside its target
/// (`src/money.rs` → `money`, `src/a/mod.rs` → `a`, `tests/it/x.rs` → `x`,
/// a target's root → nothing).
fn cargo_module(file: &str) -> Vec<String> {
    let parts: Vec<&str> = file
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let Some(i) = parts
        .iter()
        .rposition(|p| matches!(*p, "src" | "tests" | "examples" | "benches"))
    else {
        return Vec::new();
    };
    let mut inner: &[&str] = &parts[i + 1..];
    // The target's own folder: `src/bin/<name>/`, `tests/<name>/`.
    if parts[i] == "src" && inner.first() == Some(&"bin") {
        inner = inner.get(2..).unwrap_or(&[]);
    } else if parts[i] != "src" {
        inner = inner.get(1..).unwrap_or(&[]);
    }
    module_path(&inner.join("/"))
}

/// The module path of a Rust file inside its target's folder
/// (`money/cents.rs` → `money`, `cents`; `a/mod.rs` → `a`; `lib.rs`,
/// `main.rs` → nothing).
pub fn module_path(inner: &str) -> Vec<String> {
    let parts: Vec<&str> = inner.split('/').filter(|p| !p.is_empty()).collect();
    let mut module: Vec<String> = Vec::new();
    for (k, p) in parts.iter().enumerate() {
        let last = k + 1 == parts.len();
        let p = if last {
            p.strip_suffix(".rs").unwrap_or(p)
        } else {
            p
        };
        if last && matches!(p, "lib" | "main" | "mod") {
            continue;
        }
        module.push(p.to_string());
    }
    module
}

/// go's name for a subtest: blanks become `_` (as `testing` rewrites them).
fn go_name(segment: &str) -> String {
    segment
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

/// `a` is `b` with segments left out (in order, possibly none).
fn is_subsequence(a: &[&str], b: &[&str]) -> bool {
    let mut it = b.iter();
    a.iter().all(|x| it.any(|y| y == x))
}

/// A `--test` reference: `tests/a.py::Class::test`, `src/a.test.js::name`,
/// `group > nested passes`, `Suite/Class/test()`, `cart/x_test.go::TestX/sub`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Reference {
    /// The file part, when the reference starts with one.
    file: Option<String>,
    /// The name's segments (`::` and ` > ` both separate; brackets keep
    /// pytest's parameters whole).
    segments: Vec<String>,
}

/// What a reference is matched in.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Scope {
    /// The run tested a single go package (a file at a go module's top
    /// folder names the package it is in, whose import path the log gives
    /// without that folder).
    pub single_package: bool,
    /// The run names no file of the reference's very path: a file it
    /// names by the end of that path may be it.
    pub tail: bool,
}

impl Reference {
    /// Reads a reference.
    pub(super) fn parse(reference: &str) -> Reference {
        let normal = reference.replace(" > ", "::");
        let mut segments = split_outside_brackets(&normal, "::");
        let file = match segments.as_slice() {
            [first, _, ..] if is_file(first) => Some(segments.remove(0)),
            _ => None,
        };
        Reference { file, segments }
    }

    /// Whether a test of the log is the one referred to.
    ///
    /// A reference that names a file matches only a test the log places in
    /// that file: a file the runner printed it under, the go package of the
    /// file's folder, the cargo target the file belongs to (a module file
    /// stands for its module path in that target), the JVM or XCTest class
    /// the file is named after. A one-segment name matches a test by its
    /// last segment (or the last `/` or `#` part of it); a longer one needs
    /// its segments to be the test's with some of its groups left out and
    /// the same last segment, so that `group > b` never stands for
    /// `other > b`. A name without pytest `[parameters]` stands for every
    /// parametrization.
    pub(super) fn matches(&self, test: &TestLine, scope: Scope) -> bool {
        let mut path: Vec<&str> = test.path.iter().map(String::as_str).collect();
        let mut wanted: Vec<String> = self.segments.clone();
        if let Some(want) = &self.file {
            match &test.place {
                Some(Place::File(have)) if same_file(want, have, scope.tail) => {}
                Some(Place::Package(package)) => {
                    let dir = folder(want);
                    let ok = if dir.is_empty() {
                        scope.single_package
                    } else {
                        package == dir || package.ends_with(&format!("/{dir}"))
                    };
                    if !ok {
                        return false;
                    }
                }
                Some(Place::Target(target)) => {
                    if super::runners::target_id(want).as_deref() != Some(target.as_str()) {
                        return false;
                    }
                    let module = cargo_module(want);
                    if !path.starts_with(&module.iter().map(String::as_str).collect::<Vec<_>>()) {
                        return false;
                    }
                    // `src/money.rs::tests::x` names `money::tests::x`.
                    if !wanted.starts_with(&module) {
                        wanted.splice(0..0, module);
                    }
                }
                Some(Place::Class(class)) => {
                    let simple = class.rsplit('.').next().unwrap_or(class);
                    if simple != stem(want) {
                        return false;
                    }
                }
                _ => return false,
            }
        }
        if matches!(test.place, Some(Place::Package(_))) {
            // go names subtests `Parent/sub`, blanks rewritten.
            wanted = wanted
                .iter()
                .flat_map(|s| s.split('/').map(go_name).collect::<Vec<_>>())
                .collect();
        }
        let Some(want_last) = wanted.last().cloned() else {
            return false;
        };
        let Some(last) = path.last_mut() else {
            return false;
        };
        *last = last.strip_suffix("()").unwrap_or(last);
        // A reference without parameters stands for every parametrization
        // (`test_x` for `test_x[1-2]`); all of them must then agree.
        if !want_last.contains('[') {
            *last = without_parameters(last);
        }
        let last = *last;
        match wanted.as_slice() {
            [] => false,
            [one] => reference_keys(one).contains(&last),
            many => {
                let mine: Vec<&str> = many.iter().map(String::as_str).collect();
                let want_last = last_segment(mine[mine.len() - 1]);
                want_last == last && is_subsequence(&mine, &path)
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
    use crate::checks::evidence_gate::runners::Outcome;

    fn test(place: Option<Place>, path: &str) -> TestLine {
        TestLine {
            place,
            path: split_outside_brackets(path, "::"),
            outcome: Outcome::Passed,
        }
    }

    fn file(f: &str) -> Option<Place> {
        Some(Place::File(f.to_string()))
    }

    fn matches(reference: &str, t: &TestLine) -> bool {
        Reference::parse(reference).matches(t, Scope::default())
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
        assert_eq!(last_segment("C::test_p[c::d]"), "test_p[c::d]");
    }

    #[test]
    fn a_file_part_needs_a_test_placed_in_that_file() {
        let r = "src/cart.test.js::total";
        assert!(matches(r, &test(file("src/cart.test.js"), "total")));
        let tail = Scope {
            tail: true,
            ..Scope::default()
        };
        let below = test(file("cart.test.js"), "total");
        assert!(
            Reference::parse(r).matches(&below, tail),
            "a runner's root below"
        );
        assert!(!matches(r, &below), "unless the run names the file itself");
        assert!(!matches(r, &test(file("web/src/cart.test.js"), "total")));
        assert!(!matches(r, &test(file("src/other.test.js"), "total")));
        assert!(
            !matches(r, &test(None, "total")),
            "a line that names no file"
        );
        assert!(matches("total", &test(None, "total")));
        let r = "tests/test_a.py::TestA::test_b";
        assert!(matches(r, &test(file("tests/test_a.py"), "TestA::test_b")));
        assert!(!matches(r, &test(file("tests/test_c.py"), "TestA::test_b")));
    }

    #[test]
    fn nested_names_never_stand_for_another_groups_test() {
        let r = "group > nested passes";
        assert!(matches(r, &test(None, "group::nested passes")));
        assert!(matches(r, &test(None, "outer::group::nested passes")));
        assert!(!matches(r, &test(None, "other::nested passes")));
        assert!(!matches(r, &test(None, "nested passes::x")));
        // A line whose groups the runner did not name proves no nested name.
        assert!(!matches(r, &test(None, "::nested passes")));
        let r = "src/a.test.ts::cart > total > keeps the tip";
        assert!(!matches(
            r,
            &test(file("src/a.test.ts"), "::::keeps the tip")
        ));
    }

    #[test]
    fn go_packages_cargo_targets_and_classes_stand_for_their_files() {
        let pkg = |p: &str| Some(Place::Package(p.to_string()));
        let r = "cart/cart_test.go::TestDiscount/rounds [half] up";
        assert!(matches(
            r,
            &test(
                pkg("example.com/shop/cart"),
                "TestDiscount::rounds_[half]_up"
            )
        ));
        assert!(!matches(
            r,
            &test(
                pkg("example.com/shop/invoice"),
                "TestDiscount::rounds_[half]_up"
            )
        ));
        assert!(!matches(
            r,
            &test(pkg("example.com/shop/cart"), "TestOther::rounds_[half]_up")
        ));
        let top = Reference::parse("x_test.go::TestX");
        let t = test(pkg("example.com/shop"), "TestX");
        assert!(!top.matches(&t, Scope::default()));
        assert!(top.matches(
            &t,
            Scope {
                single_package: true,
                tail: false
            }
        ));
        let target = |t: &str| Some(Place::Target(t.to_string()));
        assert!(matches(
            "src/money.rs::tests::works",
            &test(target("src/lib.rs"), "money::tests::works")
        ));
        assert!(matches(
            "src/lib.rs::money::tests::works",
            &test(target("src/lib.rs"), "money::tests::works")
        ));
        assert!(!matches(
            "src/money.rs::tests::works",
            &test(target("src/lib.rs"), "tests::works")
        ));
        assert!(!matches(
            "src/money.rs::tests::works",
            &test(target("src/bin/till"), "money::tests::works")
        ));
        assert!(matches(
            "tests/it/nested.rs::deep",
            &test(target("tests/it"), "nested::deep")
        ));
        assert!(matches(
            "tests/cart.rs::works",
            &test(target("tests/cart"), "works")
        ));
        assert!(!matches(
            "tests/cart.rs::works",
            &test(target("tests/invoice"), "works")
        ));
        let class = |c: &str| Some(Place::Class(c.to_string()));
        assert!(matches(
            "src/test/java/com/a/CartTest.java::adds",
            &test(class("com.a.CartTest"), "com.a.CartTest::adds")
        ));
        assert!(!matches(
            "src/test/java/com/a/CartTest.java::adds",
            &test(class("com.a.BillTest"), "com.a.BillTest::adds")
        ));
    }

    #[test]
    fn parameters_are_optional_in_a_reference() {
        let r = "tests/test_a.py::test_x";
        assert!(matches(r, &test(file("tests/test_a.py"), "test_x[1-2]")));
        assert!(!matches(r, &test(file("tests/test_a.py"), "test_xy[1]")));
        let r = "tests/test_a.py::test_x[1-2]";
        assert!(!matches(r, &test(file("tests/test_a.py"), "test_x[3-4]")));
        let r = "tests/test_a.py::test_p[c::d-3]";
        assert!(matches(r, &test(file("tests/test_a.py"), "test_p[c::d-3]")));
        assert!(!is_file("cart") && is_file("cart.test.ts") && !is_file(".ts"));
    }
}
