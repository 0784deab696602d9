//! A repro test's file and name, checked, and the name the way each runner
//! spells and filters it: path segments, regular expressions escaped and
//! anchored, go's rewriting of blanks, globs escaped.

use super::SingleTestError;

/// Bytes of a test name loopwatch passes to a runner at most.
pub const MAX_NAME: usize = 2048;

fn bad(why: String) -> SingleTestError {
    SingleTestError::BadReference(why)
}

/// A name or file in a message: control characters visible, cut.
pub fn shown(s: &str) -> String {
    crate::sanitize::sanitize_line(s, 160)
}

/// A file relative to the worktree that stays inside it.
pub fn check_file(file: &str) -> Result<&str, SingleTestError> {
    let file = file.strip_prefix("./").unwrap_or(file);
    if file.is_empty() {
        return Err(bad("no test file given".into()));
    }
    if file.chars().any(char::is_control) {
        return Err(bad(format!(
            "test file {} holds a control character",
            shown(file)
        )));
    }
    if file.starts_with('/') || file.starts_with('-') {
        return Err(bad(format!(
            "test file {} must be a relative path inside the worktree",
            shown(file)
        )));
    }
    if file.split('/').any(|c| c == ".." || c.is_empty()) {
        return Err(bad(format!(
            "test file {} must stay inside the worktree (no `..`, no empty part)",
            shown(file)
        )));
    }
    if file.len() > MAX_NAME {
        return Err(bad(format!("test file {} is too long", shown(file))));
    }
    Ok(file)
}

/// The test's name from its reference: `file::name`, or the name alone.
pub fn test_name(file: &str, test_ref: &str) -> Result<String, SingleTestError> {
    let r = test_ref.trim();
    let r = r.strip_prefix("./").unwrap_or(r);
    let name = match r.strip_prefix(file).and_then(|n| n.strip_prefix("::")) {
        Some(n) => n,
        None => {
            let first = r.split("::").next().unwrap_or(r);
            if r.contains("::") && looks_like_file(first) {
                return Err(bad(format!(
                    "testRef {} names the file {}, not {}",
                    shown(r),
                    shown(first),
                    shown(file)
                )));
            }
            r
        }
    };
    if name.is_empty() {
        return Err(bad(format!("testRef {} names no test", shown(test_ref))));
    }
    if name.starts_with('-') {
        return Err(bad(format!(
            "test name {} would be read as an option",
            shown(name)
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(bad(format!(
            "test name {} holds a control character (a runner cannot be asked for it)",
            shown(name)
        )));
    }
    if name.len() > MAX_NAME {
        return Err(bad(format!(
            "test name {} is longer than {MAX_NAME} bytes",
            shown(name)
        )));
    }
    Ok(name.to_string())
}

/// A reference's first part names a file.
fn looks_like_file(s: &str) -> bool {
    !s.contains(' ')
        && (s.contains('/')
            || s.rsplit_once('.').is_some_and(|(a, ext)| {
                !a.is_empty()
                    && matches!(
                        ext,
                        "rs" | "py"
                            | "js"
                            | "jsx"
                            | "ts"
                            | "tsx"
                            | "mjs"
                            | "cjs"
                            | "mts"
                            | "cts"
                            | "go"
                            | "java"
                            | "kt"
                            | "swift"
                    )
            }))
}

/// The segments of a JavaScript test's name (`group > nested > name`, or
/// `group::name`); a name holding `::` but no ` > ` may also be one name.
pub fn js_paths(name: &str) -> Vec<Vec<String>> {
    let whole = vec![name.to_string()];
    if name.contains(" > ") {
        return vec![name.split(" > ").map(str::to_string).collect()];
    }
    if name.contains("::") {
        return vec![name.split("::").map(str::to_string).collect(), whole];
    }
    vec![whole]
}

/// go's name of a test and its subtests (`TestX/sub name` → `TestX`,
/// `sub_name`): `testing` rewrites blanks to `_`.
pub fn go_path(name: &str) -> Vec<String> {
    name.split('/')
        .map(|s| {
            s.chars()
                .map(|c| if c.is_whitespace() { '_' } else { c })
                .collect()
        })
        .collect()
}

/// `s` as a regular expression that matches exactly it (JavaScript, RE2
/// and Java syntax alike).
pub fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `^s$`, escaped.
pub fn anchored(s: &str) -> String {
    format!("^{}$", regex_escape(s))
}

/// A path as a glob (picomatch) that matches exactly it.
pub fn glob_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\*?[]{}()!+@".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_split_the_runners_way() {
        assert_eq!(js_paths("a > b c > d"), [["a", "b c", "d"]]);
        assert_eq!(js_paths("a::b"), [vec!["a", "b"], vec!["a::b"]]);
        assert_eq!(
            go_path("TestX/rounds [half] up"),
            ["TestX", "rounds_[half]_up"]
        );
        assert_eq!(anchored("(a|b) $1"), r"^\(a\|b\) \$1$");
        assert_eq!(glob_escape("we[b]/a*.ts"), r"we\[b\]/a\*.ts");
    }

    #[test]
    fn hostile_names_are_refused_with_a_reason() {
        for name in ["a\nb", "-x", "", &"x".repeat(MAX_NAME + 1)] {
            assert!(test_name("t.py", name).is_err(), "{name:?}");
        }
        assert_eq!(test_name("t.py", "t.py::a b").unwrap(), "a b");
        assert_eq!(test_name("t.py", "./t.py::x").unwrap(), "x");
        let e = test_name("t.py", "u.py::x").unwrap_err().to_string();
        assert_eq!(e, "testRef u.py::x names the file u.py, not t.py");
    }
}
