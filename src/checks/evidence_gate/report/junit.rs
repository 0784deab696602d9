//! pytest's junit XML report (`-o junit_family=xunit1`: every `testcase`
//! names its `file`).

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use super::{Ran, ReportError, one_line, test};
use crate::checks::evidence_gate::runners::{Outcome, Runner, split_outside_brackets};

/// One `testcase` being read.
struct Case {
    file: Option<String>,
    classname: String,
    name: String,
    outcome: Outcome,
    /// The `message` of its `error`, if it has one.
    error: Option<String>,
}

fn malformed(e: impl std::fmt::Display) -> ReportError {
    ReportError::Malformed(format!("the pytest junit report is not XML: {e}"))
}

fn attribute(e: &BytesStart<'_>, key: &str) -> Result<Option<String>, ReportError> {
    for a in e.attributes() {
        let a = a.map_err(malformed)?;
        if a.key.as_ref() == key {
            let v = a
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(malformed)?;
            return Ok(Some(v.into_owned()));
        }
    }
    Ok(None)
}

/// Reads the report. A `testcase` whose only content is an `error` and
/// that names no class is a module that could not be collected: a
/// problem, not a test.
pub(super) fn read(bytes: &[u8]) -> Result<Ran, ReportError> {
    let mut reader = Reader::from_reader(bytes);
    let mut ran = Ran {
        runner: Runner::Pytest,
        tests: Vec::new(),
        problems: Vec::new(),
        complete: false,
        interrupted: false,
    };
    let mut case: Option<Case> = None;
    let mut buf = Vec::new();
    loop {
        let event = reader.read_event_into(&mut buf).map_err(malformed)?;
        let (start, empty) = match &event {
            Event::Start(e) => (Some(e.clone()), false),
            Event::Empty(e) => (Some(e.clone()), true),
            Event::End(e) => {
                match e.name().as_ref() {
                    "testcase" => {
                        if let Some(c) = case.take() {
                            finish(&mut ran, c);
                        }
                    }
                    "testsuites" | "testsuite" => ran.complete = true,
                    _ => {}
                }
                (None, false)
            }
            Event::Eof => break,
            _ => (None, false),
        };
        if let Some(e) = start {
            match e.name().as_ref() {
                "testcase" => {
                    let c = Case {
                        file: attribute(&e, "file")?,
                        classname: attribute(&e, "classname")?.unwrap_or_default(),
                        name: attribute(&e, "name")?.unwrap_or_default(),
                        outcome: Outcome::Passed,
                        error: None,
                    };
                    if empty {
                        finish(&mut ran, c);
                    } else {
                        case = Some(c);
                    }
                }
                "failure" => {
                    if let Some(c) = case.as_mut() {
                        c.outcome = Outcome::Failed;
                    }
                }
                "error" => {
                    if let Some(c) = case.as_mut() {
                        c.error = Some(attribute(&e, "message")?.unwrap_or_default());
                        if c.outcome != Outcome::Failed {
                            c.outcome = Outcome::Errored;
                        }
                    }
                }
                "skipped" => {
                    if let Some(c) = case.as_mut() {
                        let xfail = attribute(&e, "type")?.is_some_and(|t| t == "pytest.xfail");
                        c.outcome = if xfail {
                            Outcome::XFailed
                        } else {
                            Outcome::Skipped
                        };
                    }
                }
                _ => {}
            }
        }
        buf.clear();
    }
    Ok(ran)
}

/// A finished `testcase` as a test, or as a problem (a collection error).
fn finish(ran: &mut Ran, c: Case) {
    if c.classname.is_empty() && c.outcome == Outcome::Errored {
        let why = one_line(c.error.as_deref().unwrap_or(""));
        ran.problems
            .push(format!("{} could not be collected: {why}", c.name));
        return;
    }
    let mut path = classes(c.file.as_deref(), &c.classname);
    path.extend(split_outside_brackets(&c.name, "::"));
    ran.tests.push(test(c.file, path, c.outcome));
}

/// The classes of a `classname` (`tests.test_cart.TestCart.TestNested` in
/// `tests/test_cart.py` → `TestCart`, `TestNested`): what follows the
/// module the file is.
fn classes(file: Option<&str>, classname: &str) -> Vec<String> {
    let parts: Vec<&str> = classname.split('.').filter(|p| !p.is_empty()).collect();
    let stem = file
        .and_then(|f| f.rsplit('/').next())
        .map(|b| b.strip_suffix(".py").unwrap_or(b));
    let after = match stem.and_then(|s| parts.iter().rposition(|p| *p == s)) {
        Some(i) => i + 1,
        // No file to tell the module by: classes are capitalised, modules not.
        None => parts
            .iter()
            .position(|p| p.starts_with(|c: char| c.is_ascii_uppercase()))
            .unwrap_or(parts.len()),
    };
    parts[after..].iter().map(|p| p.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_module_of_the_file() {
        assert_eq!(
            classes(
                Some("tests/test_cart.py"),
                "tests.test_cart.TestCart.TestNested"
            ),
            ["TestCart", "TestNested"]
        );
        assert!(classes(Some("tests/test_cart.py"), "tests.test_cart").is_empty());
        assert_eq!(classes(None, "tests.test_cart.TestCart"), ["TestCart"]);
    }

    #[test]
    fn a_collection_error_is_a_problem_and_a_setup_error_is_no_result() {
        let xml = br#"<?xml version="1.0"?><testsuites><testsuite><testcase classname="" name="tests.test_broken"><error message="collection failure">boom</error></testcase><testcase classname="tests.test_a" name="test_s" file="tests/test_a.py"><error message="failed on setup">x</error></testcase><testcase classname="tests.test_a" name="test_x[a &amp; b]" file="tests/test_a.py"><skipped type="pytest.xfail" message="known"/></testcase></testsuite></testsuites>"#;
        let ran = read(xml).unwrap();
        assert_eq!(
            ran.problems,
            ["tests.test_broken could not be collected: collection failure"]
        );
        assert_eq!(ran.tests[0].outcome, Outcome::Errored);
        assert_eq!(ran.tests[1].path, ["test_x[a & b]"]);
        assert_eq!(ran.tests[1].outcome, Outcome::XFailed);
        assert!(ran.complete);
        assert!(
            read(b"<testsuites><testcase").is_err()
                || !read(b"<testsuites><testcase").unwrap().complete
        );
    }
}
