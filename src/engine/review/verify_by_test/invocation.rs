//! The command line that runs one test of one file with a runner found by
//! [`super::runner::detect`]: the file and the name checked (relative,
//! inside the worktree, never an option, no control character), then each
//! runner's own way of selecting exactly that test and of writing the
//! machine-readable report loopwatch judges it by, TEST's own options kept.

use std::path::{Path, PathBuf};

use super::runner::argv::Arg;
use super::runner::{
    Invocation, OneTest, Report, ReportFormat, Runner, Selected, SingleTestError, TestCommand,
    Worktree,
};
use super::runner::{cargo, names};

/// Namesake files of a vitest repro excluded by name at most.
const MAX_EXCLUDED: usize = 100;

/// The command line that runs the test `test_ref` of `file` (both relative
/// to the worktree) alone. `report` is where its report goes, without an
/// extension (the runner's is added).
pub fn invocation(
    cmd: &TestCommand,
    tree: &dyn Worktree,
    file: &str,
    test_ref: &str,
    report: &Path,
) -> Result<OneTest, SingleTestError> {
    let file = names::check_file(file)?;
    if let Some(why) = tree.outside(file) {
        return Err(SingleTestError::BadReference(format!("not run: {why}")));
    }
    let name = names::test_name(file, test_ref)?;
    let report_file = |format: ReportFormat| Report {
        path: with_extension(report, format.extension()),
        format,
    };
    let mut args: Vec<String> = cmd.words[1..].to_vec();
    let mut report_of = None;
    let selected;
    match cmd.runner {
        Runner::Cargo => {
            let target = cargo::target(tree, file)?;
            args.extend(cmd.option_words());
            if !target.package.is_empty() {
                args.push("--manifest-path".into());
                args.push(format!("{}/Cargo.toml", target.package));
            }
            args.extend(target.options);
            let mut path: Vec<String> = name.split("::").map(str::to_string).collect();
            if !path.starts_with(&target.module) {
                path.splice(0..0, target.module);
            }
            args.push(path.join("::"));
            args.push("--".into());
            args.extend(cmd.harness.iter().flat_map(|a| a.words.clone()));
            args.push("--exact".into());
            selected = selection(file, vec![path]);
        }
        Runner::Pytest => {
            let r = report_file(ReportFormat::JunitXml);
            args.extend(cmd.option_words());
            args.extend(
                ["-p", "no:cacheprovider", "-o", "junit_family=xunit1"].map(str::to_string),
            );
            args.push(format!("--junitxml={}", r.path.display()));
            let wanted = 1 - verbosity(&cmd.options).min(1);
            args.extend(std::iter::repeat_n(
                "-v".to_string(),
                wanted.max(0) as usize,
            ));
            args.push(format!("{file}::{name}"));
            let path = crate::checks::evidence_gate::report::split_name(&name);
            let every = path.last().is_some_and(|l| !l.contains('['));
            selected = Selected {
                every_parametrization: every,
                ..selection(file, vec![path])
            };
            report_of = Some(r);
        }
        Runner::Jest => {
            let r = report_file(ReportFormat::JestJson);
            let paths = names::js_paths(&name);
            args.extend(cmd.option_words());
            if !cmd.options.iter().any(|a| a.name == "--verbose") {
                args.push("--verbose".into());
            }
            args.extend([
                "--json".into(),
                format!("--outputFile={}", r.path.display()),
                "--runTestsByPath".into(),
                file.to_string(),
                "-t".into(),
                full_name_pattern(&paths),
            ]);
            selected = selection(file, paths);
            report_of = Some(r);
        }
        Runner::Vitest => {
            let r = report_file(ReportFormat::VitestJson);
            let paths = names::js_paths(&name);
            args.extend(vitest_options(&cmd.options)?);
            args.push("--reporter=json".into());
            args.push(format!("--outputFile.json={}", r.path.display()));
            // vitest's file filter is a substring of the path: the other
            // files it would also run are excluded by name.
            let lower = file.to_lowercase();
            let namesakes: Vec<String> = tree
                .files()
                .into_iter()
                .filter(|f| f != file && f.to_lowercase().contains(&lower))
                .take(MAX_EXCLUDED)
                .collect();
            for f in namesakes {
                args.push("--exclude".into());
                args.push(names::glob_escape(&f));
            }
            args.extend([file.to_string(), "-t".into(), full_name_pattern(&paths)]);
            selected = selection(file, paths);
            report_of = Some(r);
        }
        Runner::Go => {
            let (dir, _) = file.rsplit_once('/').unwrap_or(("", file));
            let module = go_module(tree, dir);
            let rel = match module.as_str() {
                "" => dir.to_string(),
                m => dir
                    .strip_prefix(m)
                    .unwrap_or(dir)
                    .trim_start_matches('/')
                    .to_string(),
            };
            if !module.is_empty() {
                // go -C (go 1.20 and later): the module in a folder of the worktree.
                args.splice(0..0, ["-C".to_string(), module]);
            }
            let path = names::go_path(&name);
            let pattern: Vec<String> = path.iter().map(|p| names::anchored(p)).collect();
            args.extend(cmd.option_words());
            args.extend([
                "-count=1".into(),
                "-json".into(),
                "-run".into(),
                pattern.join("/"),
                if rel.is_empty() {
                    ".".to_string()
                } else {
                    format!("./{rel}")
                },
            ]);
            args.extend(cmd.harness.iter().flat_map(|a| a.words.clone()));
            selected = selection(file, vec![path]);
        }
        Runner::Gradle => {
            if name.contains('*') {
                return Err(SingleTestError::BadReference(format!(
                    "test name {} holds a wildcard: it would select more than one test",
                    names::shown(&name)
                )));
            }
            let filter = if name.contains('.') {
                name.clone()
            } else {
                format!("{}.{}", jvm_class(file), name.trim_end_matches("()"))
            };
            args.extend(cmd.option_words());
            args.extend(["--tests".into(), filter]);
            let method = name.rsplit(['.', '#']).next().unwrap_or(&name);
            selected = selection(file, vec![vec![method.trim_end_matches("()").to_string()]]);
        }
        Runner::Xcodebuild => {
            let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty()).collect();
            let target = file.split('/').next().unwrap_or(file);
            let stem = stem(file);
            let method = |m: &str| m.trim_end_matches("()").to_string();
            let id = match parts.as_slice() {
                [t, c, m] => format!("{t}/{c}/{}", method(m)),
                [c, m] => format!("{target}/{c}/{}", method(m)),
                _ => format!("{target}/{stem}/{}", method(&name)),
            };
            let last = id.rsplit('/').next().unwrap_or(&id).to_string();
            args.extend(cmd.option_words());
            args.push(format!("-only-testing:{id}"));
            selected = selection(file, vec![vec![last]]);
        }
        Runner::Node => {
            let r = report_file(ReportFormat::NodeTap);
            let paths = names::js_paths(&name);
            args.extend(cmd.option_words());
            args.push("--test".into());
            args.extend(node_reporters(&cmd.options)?);
            args.push("--test-reporter=tap".into());
            args.push(format!("--test-reporter-destination={}", r.path.display()));
            for p in &paths {
                if let Some(leaf) = p.last() {
                    args.push(format!("--test-name-pattern={}", names::anchored(leaf)));
                }
            }
            if file.contains(['*', '?', '[', ']', '{', '}']) {
                return Err(SingleTestError::BadReference(format!(
                    "test file {} holds a glob character: node reads its files as patterns",
                    names::shown(file)
                )));
            }
            args.push(file.to_string());
            selected = selection(file, paths);
            report_of = Some(r);
        }
    }
    Ok(OneTest {
        invocation: Invocation {
            runner: cmd.runner,
            env: cmd.env.clone(),
            program: cmd.words[0].clone(),
            args,
        },
        report: report_of,
        selected,
    })
}

/// node: the same command with a name pattern for each group of the test
/// too. node runs a test's subtests only when the test itself is selected
/// (a suite always runs to find its tests), so a subtest of `t.test()` runs
/// only with this; it runs the parent's other subtests as well. `None` for
/// other runners or a test without groups.
pub fn widen(inv: &OneTest) -> Option<OneTest> {
    if inv.invocation.runner != Runner::Node {
        return None;
    }
    let mut patterns: Vec<String> = Vec::new();
    for p in &inv.selected.paths {
        for group in p.iter().take(p.len().saturating_sub(1)) {
            let pattern = format!("--test-name-pattern={}", names::anchored(group));
            if !patterns.contains(&pattern) {
                patterns.push(pattern);
            }
        }
    }
    if patterns.is_empty() {
        return None;
    }
    let mut wide = inv.clone();
    let args = &mut wide.invocation.args;
    let at = args.len().saturating_sub(1);
    args.splice(at..at, patterns);
    Some(wide)
}

fn selection(file: &str, paths: Vec<Vec<String>>) -> Selected {
    Selected {
        file: file.to_string(),
        paths,
        every_parametrization: false,
    }
}

fn with_extension(base: &Path, ext: &str) -> PathBuf {
    let mut s = base.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// jest's and vitest's `-t`: the full name (groups and name joined by a
/// space), anchored and escaped; the spellings of an ambiguous name
/// alternated.
fn full_name_pattern(paths: &[Vec<String>]) -> String {
    let names: Vec<String> = paths
        .iter()
        .map(|p| names::regex_escape(&p.join(" ")))
        .collect();
    match names.as_slice() {
        [one] => format!("^{one}$"),
        many => format!("^(?:{})$", many.join("|")),
    }
}

/// pytest's verbosity from TEST's `-v`, `-q` and `--verbosity`.
fn verbosity(options: &[Arg]) -> i64 {
    let mut v: i64 = 0;
    for a in options {
        match a.name.as_str() {
            "--verbose" => v += 1,
            "--quiet" => v -= 1,
            "--verbosity" => v = a.value.as_deref().and_then(|x| x.parse().ok()).unwrap_or(v),
            n if n.starts_with('-') && !n.starts_with("--") && n.len() > 1 => {
                let flags = &n[1..];
                if flags.chars().all(|c| c.is_ascii_alphabetic()) {
                    v += flags.matches('v').count() as i64;
                    v -= flags.matches('q').count() as i64;
                }
            }
            _ => {}
        }
    }
    v
}

/// vitest: TEST's options with its reporters kept (the verbose reporter
/// when it names none, so that the log names each test); a `--outputFile`
/// for all reporters given to TEST's one reporter. loopwatch's own json
/// report cannot be added beside TEST's json report.
fn vitest_options(options: &[Arg]) -> Result<Vec<String>, SingleTestError> {
    let reporters: Vec<&str> = options
        .iter()
        .filter(|a| a.name == "--reporter")
        .filter_map(|a| a.value.as_deref())
        .collect();
    let clash = || {
        SingleTestError::UnknownRunner(
            "[run] test gives vitest's json reporter a file of its own; loopwatch needs that reporter for its own report: the repro test is not run".into(),
        )
    };
    if reporters.contains(&"json") || options.iter().any(|a| a.name == "--outputFile.json") {
        return Err(clash());
    }
    let mut out = Vec::new();
    for a in options {
        if a.name == "--outputFile" && a.value.is_some() {
            match reporters.as_slice() {
                [one] => out.push(format!(
                    "--outputFile.{one}={}",
                    a.value.as_deref().unwrap_or_default()
                )),
                [] => {}
                _ => {
                    return Err(SingleTestError::UnknownRunner(
                        "[run] test gives vitest one --outputFile for several reporters; loopwatch adds its own json reporter: give each its file (--outputFile.<reporter>=…): the repro test is not run".into(),
                    ));
                }
            }
            continue;
        }
        out.extend(a.words.clone());
    }
    if reporters.is_empty() {
        out.push("--reporter=verbose".into());
    }
    Ok(out)
}

/// node: TEST's reporters each with a destination (standard output when
/// TEST gives none), or the spec reporter on standard output.
fn node_reporters(options: &[Arg]) -> Result<Vec<String>, SingleTestError> {
    let count = |name: &str| options.iter().filter(|a| a.name == name).count();
    let (reporters, destinations) = (
        count("--test-reporter"),
        count("--test-reporter-destination"),
    );
    match (reporters, destinations) {
        (0, 0) => Ok(vec![
            "--test-reporter=spec".into(),
            "--test-reporter-destination=stdout".into(),
        ]),
        (n, 0) => Ok(vec!["--test-reporter-destination=stdout".to_string(); n]),
        (n, m) if n == m => Ok(Vec::new()),
        (n, m) => Err(SingleTestError::UnknownRunner(format!(
            "[run] test gives node {n} --test-reporter and {m} --test-reporter-destination; node needs one destination per reporter: the repro test is not run"
        ))),
    }
}

/// The folder of the go module that holds `dir`: the nearest folder at or
/// above it with a go.mod (empty for the worktree's top, or none).
fn go_module(tree: &dyn Worktree, dir: &str) -> String {
    let parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for n in (1..=parts.len()).rev() {
        let m = parts[..n].join("/");
        if tree.is_file(&format!("{m}/go.mod")) {
            return m;
        }
    }
    String::new()
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
