//! The command line that runs one test of one file with a runner found by
//! [`super::single_test::detect`]: the file and the name checked (relative,
//! inside the worktree, never an option, no control character), then each
//! runner's own way of naming one test.

use super::single_test::{Invocation, Runner, SingleTestError, TestCommand};

/// The command line that runs the test `test_ref` of `file` (both relative
/// to the worktree) alone.
pub fn invocation(
    cmd: &TestCommand,
    file: &str,
    test_ref: &str,
) -> Result<Invocation, SingleTestError> {
    let file = check_file(file)?;
    let name = test_name(file, test_ref)?;
    let mut args: Vec<String> = cmd.words[1..].to_vec();
    let env = cmd.env.clone();
    match cmd.runner {
        Runner::Cargo => {
            let (dir, target, module) = cargo_target(file);
            if !dir.is_empty()
                && !args.iter().any(|a| {
                    a.starts_with("--manifest-path") || a == "-p" || a.starts_with("--package")
                })
            {
                args.push("--manifest-path".into());
                args.push(format!("{dir}/Cargo.toml"));
            }
            args.extend(target);
            let path = match module {
                Some(m) if !m.is_empty() && !name.starts_with(&format!("{m}::")) => {
                    format!("{m}::{name}")
                }
                _ => name,
            };
            args.extend([path, "--".into(), "--exact".into()]);
        }
        Runner::Pytest => {
            args.extend(["-v".into(), format!("{file}::{name}")]);
        }
        Runner::Jest | Runner::Vitest => {
            let full = name.replace(" > ", " ").replace("::", " ");
            if cmd.runner == Runner::Jest {
                args.extend(["--runTestsByPath".into(), file.to_string()]);
            } else {
                args.push(file.to_string());
            }
            args.extend(["-t".into(), format!("^{}$", regex_escape(&full))]);
        }
        Runner::Go => {
            let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
            let pattern: Vec<String> = name
                .split('/')
                .map(|part| format!("^{}$", regex_escape(part)))
                .collect();
            let pkg = if dir.is_empty() {
                ".".to_string()
            } else {
                format!("./{dir}")
            };
            args.extend([
                "-count=1".into(),
                "-v".into(),
                "-run".into(),
                pattern.join("/"),
                pkg,
            ]);
        }
        Runner::Gradle => {
            if name.contains('*') {
                return Err(bad(format!(
                    "test name {name:?} holds a wildcard: it would select more than one test"
                )));
            }
            let filter = if name.contains('.') {
                name
            } else {
                format!("{}.{}", jvm_class(file), name.trim_end_matches("()"))
            };
            args.extend(["--tests".into(), filter]);
        }
        Runner::Xcodebuild => {
            let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty()).collect();
            let target = file.split('/').next().unwrap_or(file);
            let stem = stem(file);
            let id = match parts.as_slice() {
                [t, c, m] => format!("{t}/{c}/{}", m.trim_end_matches("()")),
                [c, m] => format!("{target}/{c}/{}", m.trim_end_matches("()")),
                _ => format!("{target}/{stem}/{}", name.trim_end_matches("()")),
            };
            args.push(format!("-only-testing:{id}"));
        }
        Runner::Node => {
            let leaf = name.rsplit(" > ").next().unwrap_or(&name);
            let leaf = leaf.rsplit("::").next().unwrap_or(leaf);
            args.extend([
                "--test-name-pattern".into(),
                format!("{}$", regex_escape(leaf)),
                file.to_string(),
            ]);
        }
    }
    Ok(Invocation {
        runner: cmd.runner,
        env,
        program: cmd.words[0].clone(),
        args,
    })
}

fn bad(why: String) -> SingleTestError {
    SingleTestError::BadReference(why)
}

/// A file relative to the worktree that stays inside it.
fn check_file(file: &str) -> Result<&str, SingleTestError> {
    let file = file.strip_prefix("./").unwrap_or(file);
    if file.is_empty() {
        return Err(bad("no test file given".into()));
    }
    if file.starts_with('/') || file.starts_with('-') {
        return Err(bad(format!(
            "test file {file:?} must be a relative path inside the worktree"
        )));
    }
    if file.split('/').any(|c| c == ".." || c.is_empty()) {
        return Err(bad(format!(
            "test file {file:?} must stay inside the worktree (no `..`, no empty part)"
        )));
    }
    if file.chars().any(char::is_control) {
        return Err(bad(format!("test file {file:?} holds a control character")));
    }
    Ok(file)
}

/// The test's name from its reference: `file::name`, or the name alone.
fn test_name(file: &str, test_ref: &str) -> Result<String, SingleTestError> {
    let r = test_ref.trim();
    let name = match r.strip_prefix(file).and_then(|n| n.strip_prefix("::")) {
        Some(n) => n,
        None => {
            let first = r.split("::").next().unwrap_or(r);
            if r.contains("::") && looks_like_file(first) {
                return Err(bad(format!(
                    "testRef {r:?} names the file {first}, not {file}"
                )));
            }
            r
        }
    };
    if name.is_empty() {
        return Err(bad(format!("testRef {test_ref:?} names no test")));
    }
    if name.starts_with('-') {
        return Err(bad(format!(
            "test name {name:?} would be read as an option"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(bad(format!("test name {name:?} holds a control character")));
    }
    Ok(name.to_string())
}

fn looks_like_file(s: &str) -> bool {
    s.contains('/')
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
                        | "go"
                        | "java"
                        | "kt"
                        | "swift"
                )
        })
}

/// For a cargo test file: the package folder (empty at the root), the
/// target options and, for a file under `src/`, its module path.
fn cargo_target(file: &str) -> (String, Vec<String>, Option<String>) {
    let parts: Vec<&str> = file.split('/').collect();
    let at = |name: &str| parts.iter().rposition(|p| *p == name);
    if let Some(i) = at("tests").filter(|i| i + 1 < parts.len()) {
        let dir = parts[..i].join("/");
        let stem = match &parts[i + 1..] {
            [one] => one.strip_suffix(".rs").unwrap_or(one).to_string(),
            [folder, ..] => folder.to_string(),
            [] => String::new(),
        };
        return (dir, vec!["--test".into(), stem], None);
    }
    if let Some(i) = at("src") {
        let dir = parts[..i].join("/");
        let inner = &parts[i + 1..];
        let mut module: Vec<String> = Vec::new();
        if inner.first() != Some(&"bin") {
            for (k, p) in inner.iter().enumerate() {
                let last = k + 1 == inner.len();
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
        }
        return (dir, Vec::new(), Some(module.join("::")));
    }
    (String::new(), Vec::new(), None)
}

/// `com.acme.CartTest` from `app/src/test/java/com/acme/CartTest.java`.
fn jvm_class(file: &str) -> String {
    let parts: Vec<&str> = file.split('/').collect();
    let root = parts
        .iter()
        .rposition(|p| matches!(*p, "java" | "kotlin" | "groovy" | "scala"))
        .map_or(0, |i| i + 1);
    let mut class: Vec<String> = parts[root..].iter().map(|p| p.to_string()).collect();
    if let Some(last) = class.last_mut() {
        *last = stem(last).to_string();
    }
    class.join(".")
}

fn stem(file: &str) -> &str {
    let base = file.rsplit('/').next().unwrap_or(file);
    base.split_once('.').map_or(base, |(s, _)| s)
}

/// Escapes what JavaScript, Go and Java regexes read as syntax.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
