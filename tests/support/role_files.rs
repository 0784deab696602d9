//! Reading the examples of a role file back: its fenced `answer` and
//! `input` blocks, and the values of the inputs that are not one line of
//! fields (a triage's findings, a verify-by-test request).

use std::collections::BTreeMap;

use loopwatch::engine::review::verify_by_test::{self, runner};
use loopwatch::model::Finding;
use loopwatch::model::triage::TriageFinding;
use serde_json::Value;

/// One fenced example.
#[derive(Debug, Clone)]
pub struct Example {
    /// `answer` or `input`.
    pub kind: String,
    /// The claims of its info string.
    pub claims: BTreeMap<String, String>,
    /// Its content, with a final line feed.
    pub body: String,
    /// 1-based line of its opening fence in the text it was found in.
    pub line: usize,
}

/// The `answer` and `input` blocks of `text`, in order; other fences are
/// skipped. An info string that cannot be read is a problem.
pub fn examples(text: &str) -> Result<Vec<Example>, String> {
    let mut out = Vec::new();
    let mut open: Option<(Option<Example>, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        match open.as_mut() {
            None if t.starts_with("```") => {
                let info = t.trim_start_matches('`').trim();
                let mut words = shlex::split(info)
                    .ok_or_else(|| format!("line {}: unreadable info string `{info}`", i + 1))?
                    .into_iter();
                let kind = words.next().unwrap_or_default();
                let fence = t[..t.len() - t.trim_start_matches('`').len()].to_string();
                let example = if kind == "answer" || kind == "input" {
                    let mut claims = BTreeMap::new();
                    for w in words {
                        let (k, v) = w.split_once('=').ok_or_else(|| {
                            format!("line {}: claim `{w}` is not key=value", i + 1)
                        })?;
                        claims.insert(k.to_string(), v.to_string());
                    }
                    Some(Example {
                        kind,
                        claims,
                        body: String::new(),
                        line: i + 1,
                    })
                } else {
                    None
                };
                open = Some((example, fence));
            }
            None => {}
            Some((example, fence)) => {
                if t.starts_with(fence.as_str()) && t.trim_start_matches('`').trim().is_empty() {
                    if let Some(e) = example.take() {
                        out.push(e);
                    }
                    open = None;
                } else if let Some(e) = example.as_mut() {
                    e.body.push_str(line);
                    e.body.push('\n');
                }
            }
        }
    }
    if open.is_some() {
        return Err("a code fence is never closed".into());
    }
    Ok(out)
}

/// The iteration and the findings of a triage input.
pub fn triage_input(body: &str) -> Result<(u32, Vec<Finding>), String> {
    let json = body
        .lines()
        .find(|l| l.starts_with('{'))
        .ok_or("no JSON line")?;
    let v: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let iteration = v["iteration"].as_u64().ok_or("no iteration")? as u32;
    let findings = serde_json::from_value(v["findings"].clone()).map_err(|e| e.to_string())?;
    Ok((iteration, findings))
}

/// The values of a verify-by-test input, read back from its text.
pub struct VbtInput {
    pub test: String,
    pub files: Vec<String>,
    pub findings: Vec<TriageFinding>,
    pub base: String,
    pub diff: String,
}

impl VbtInput {
    pub fn read(body: &str) -> Result<VbtInput, String> {
        let test = body
            .lines()
            .find_map(|l| l.strip_prefix("TEST: "))
            .ok_or("no `TEST:` line")?
            .to_string();
        let mut files = Vec::new();
        let mut findings: Vec<TriageFinding> = Vec::new();
        let mut in_files = false;
        for line in body.lines() {
            if line.starts_with("EXISTING TESTS (") {
                in_files = true;
                continue;
            }
            if in_files {
                match line.strip_prefix("  ") {
                    Some(f) => files.push(f.to_string()),
                    None => in_files = false,
                }
            }
            if let Some(rest) = line.strip_prefix("FINDING ") {
                let (id, sev) = rest
                    .split_once(" [")
                    .ok_or("a FINDING line without [severity]")?;
                let sev = sev.trim_end_matches(']');
                findings.push(TriageFinding {
                    id: id.to_string(),
                    severity: serde_json::from_value(Value::from(sev))
                        .map_err(|e| e.to_string())?,
                    title: String::new(),
                    path: String::new(),
                    lines: String::new(),
                    claim: String::new(),
                    reviewer: String::new(),
                    reason: None,
                    verification: None,
                    extra: Default::default(),
                });
            } else if let (Some(f), Some((k, v))) = (
                findings.last_mut(),
                line.strip_prefix("  ").and_then(|l| l.split_once(": ")),
            ) && !in_files
            {
                match k {
                    "title" => f.title = v.to_string(),
                    "path" => f.path = v.to_string(),
                    "lines" => f.lines = v.to_string(),
                    "claim" => f.claim = v.to_string(),
                    _ => {}
                }
            }
        }
        let head = "\nDIFF (against ";
        let at = body.find(head).ok_or("no DIFF section")?;
        let rest = &body[at + head.len()..];
        let (base, rest) = rest
            .split_once(") of the findings' files:\n")
            .ok_or("no DIFF header")?;
        let diff = rest.split_once("\nANSWER ").ok_or("no ANSWER line")?.0;
        Ok(VbtInput {
            test,
            files,
            findings,
            base: base.to_string(),
            diff: diff.to_string(),
        })
    }

    pub fn rebuild(&self) -> String {
        let cmd = runner::detect(&self.test).map_err(|e| e.to_string());
        verify_by_test::input::compose(
            &self.test,
            cmd.as_ref().map_err(Clone::clone),
            &self.files,
            &self.findings,
            &self.base,
            &self.diff,
        )
    }
}
