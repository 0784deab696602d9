//! `loopwatch validate FILE...`: schema check of journals, states, triage
//! files and finding verdicts, with errors naming file, line and field.
//!
//! A journal is read line by line (any size, memory bounded by the longest
//! line the readers accept); a line is judged as the readers judge it, then
//! against the schema of its type.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde_json::Value;

use super::Globals;
use super::output::{say, shown};
use crate::schema::{FileKind, for_kind};

/// `validate`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
The kind of each file is taken from --kind, else from its name (*.jsonl: journal,
state.json: state, triage*.json: triage), else from its content (an array: verdicts,
an object with schemaVersion: triage, with reviewIterations: state).

A journal is checked line by line, whatever its size; a line the readers skip (not
JSON, a seq that is not a 64-bit number, another format version, a line over 16 MiB)
is reported with the readers' own words. Other files are read whole (at most 16 MiB).

Exit codes: 0 every file is valid, 1 some file is not (each problem printed as
file:line: /json/path: message), 2 usage or unreadable file.")]
pub struct ValidateArgs {
    /// Files to check.
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
    /// Force the kind of every file.
    #[arg(long, value_enum)]
    pub kind: Option<FileKind>,
}

/// Runs `validate`.
pub fn run(a: ValidateArgs, _globals: &Globals) -> anyhow::Result<ExitCode> {
    let mut bad = 0usize;
    for path in &a.files {
        let name = path.display().to_string();
        let is_journal = a.kind == Some(FileKind::Journal)
            || (a.kind.is_none()
                && path.extension().is_some_and(|e| e == "jsonl")
                && path.as_os_str() != "-");
        let (kind, problems) = if is_journal {
            let file = crate::util::open_regular(path)
                .with_context(|| format!("read {}", path.display()))?;
            let problems = check_journal(&name, BufReader::with_capacity(256 * 1024, file))
                .with_context(|| format!("read {}", path.display()))?;
            (FileKind::Journal, problems)
        } else {
            let (_, bytes) = super::output::read_input(path)?;
            let kind = match a.kind {
                Some(k) => k,
                None => guess_kind(path, &bytes).with_context(|| {
                    format!("{name}: cannot tell what kind of file this is (pass --kind)")
                })?,
            };
            let problems = check(&name, kind, &bytes)?;
            (kind, problems)
        };
        if problems.is_empty() {
            say(&format!("{}: valid {}", shown(&name), kind_name(kind)));
        } else {
            bad += 1;
            for p in problems {
                say(&shown(&p));
            }
        }
    }
    Ok(ExitCode::from(u8::from(bad > 0)))
}

fn kind_name(k: FileKind) -> &'static str {
    match k {
        FileKind::Journal => "journal",
        FileKind::State => "state",
        FileKind::Triage => "triage file",
        FileKind::Verdicts => "finding verdicts",
    }
}

fn guess_kind(path: &Path, bytes: &[u8]) -> Option<FileKind> {
    let name = path.file_name()?.to_string_lossy().to_string();
    if name.ends_with(".jsonl") {
        return Some(FileKind::Journal);
    }
    if name == "state.json" {
        return Some(FileKind::State);
    }
    if name.starts_with("triage") && name.ends_with(".json") {
        return Some(FileKind::Triage);
    }
    match serde_json::from_slice::<Value>(bytes).ok()? {
        Value::Array(_) => Some(FileKind::Verdicts),
        Value::Object(o) if o.contains_key("schemaVersion") => Some(FileKind::Triage),
        Value::Object(o) if o.contains_key("reviewIterations") => Some(FileKind::State),
        _ => None,
    }
}

/// Every problem of one file, as `file:line: /path: message`.
pub fn check(name: &str, kind: FileKind, bytes: &[u8]) -> anyhow::Result<Vec<String>> {
    let schema = for_kind(kind);
    let validator = jsonschema::validator_for(&schema).context("compile schema")?;
    let mut out = Vec::new();
    if kind == FileKind::Journal {
        return check_journal(name, bytes).context("read the journal");
    }
    let v: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            return Ok(vec![format!(
                "{name}:{}:{}: invalid JSON: {e}",
                e.line(),
                e.column()
            )]);
        }
    };
    for e in validator.iter_errors(&v) {
        let ptr = e.instance_path().to_string();
        let line = line_of_pointer(bytes, &ptr);
        out.push(format!("{name}:{line}: {}: {e}", pointer(&ptr)));
    }
    Ok(out)
}

/// Every problem of a journal read line by line from `input`.
pub fn check_journal(name: &str, mut input: impl BufRead) -> anyhow::Result<Vec<String>> {
    let schema = for_kind(FileKind::Journal);
    let validator = jsonschema::validator_for(&schema).context("compile schema")?;
    let mut per_type: std::collections::HashMap<String, jsonschema::Validator> =
        std::collections::HashMap::new();
    let mut out = Vec::new();
    let mut last_seq = 0u64;
    let mut line = Vec::new();
    let mut n = 0usize;
    let mut chain = crate::journal::Chain::new();
    let max = crate::journal::MAX_LINE_BYTES as u64;
    loop {
        line.clear();
        // One byte past the cap tells an overlong line from one at the cap.
        let read = Read::by_ref(&mut input)
            .take(max + 2)
            .read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        n += 1;
        let ended = line.last() == Some(&b'\n');
        if ended {
            line.pop();
        }
        if line.len() as u64 > max {
            out.push(format!(
                "{name}:{n}: line longer than {}: skipped by readers",
                crate::util::size_text(max)
            ));
            chain.skip();
            // Skip the rest of the line without holding it.
            if !ended {
                skip_line(&mut input)?;
            }
            continue;
        }
        if !ended {
            out.push(format!(
                "{name}:{n}: last line has no newline (a write in progress, or a crashed writer)"
            ));
            break;
        }
        if let Some(b) = chain.next(&line) {
            out.push(format!("{name}:{n}: hash chain broken: {b}"));
        }
        let raw = line.strip_suffix(b"\r").unwrap_or(&line);
        check_journal_line(
            name,
            n,
            raw,
            &validator,
            &schema,
            &mut per_type,
            &mut last_seq,
            &mut out,
        )?;
    }
    Ok(out)
}

/// Consumes input up to and including the next `\n`.
fn skip_line(input: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok(());
            }
            None => {
                let len = buf.len();
                input.consume(len);
            }
        }
    }
}

#[allow(clippy::too_many_arguments)] // the state of one pass over a journal
fn check_journal_line(
    name: &str,
    n: usize,
    line: &[u8],
    validator: &jsonschema::Validator,
    schema: &Value,
    per_type: &mut std::collections::HashMap<String, jsonschema::Validator>,
    last_seq: &mut u64,
    out: &mut Vec<String>,
) -> anyhow::Result<()> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let v: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            out.push(format!("{name}:{n}:{}: invalid JSON: {e}", e.column()));
            return Ok(());
        }
    };
    let before = out.len();
    let known = v
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| crate::model::event::KNOWN_TYPES.contains(&t));
    if known {
        let t = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if !per_type.contains_key(&t) {
            per_type.insert(
                t.clone(),
                jsonschema::validator_for(&schema_of_type(schema, &t)).context("compile schema")?,
            );
        }
        let validator = per_type.get(&t).unwrap_or(validator);
        for e in validator.iter_errors(&v) {
            out.push(format!(
                "{name}:{n}: {}: {e}",
                pointer(&e.instance_path().to_string())
            ));
        }
    }
    // What the readers say of the line, when the schema said nothing: a seq
    // past 2^64 - 1 is an "integer" to the schema but no number to a reader.
    if out.len() == before {
        match crate::model::Event::parse_line(line) {
            Err(e) => out.push(format!("{name}:{n}: {e}")),
            Ok(ev) if ev.v != crate::model::event::EVENT_VERSION => {
                out.push(format!(
                    "{name}:{n}: {}",
                    crate::journal::version_problem(ev.v)
                ));
            }
            Ok(_) => {}
        }
    }
    if let Some(seq) = v.get("seq").and_then(Value::as_u64) {
        if Some(seq) != last_seq.checked_add(1) {
            out.push(format!(
                "{name}:{n}: seq {seq} follows {last_seq} (expected {})",
                last_seq.saturating_add(1)
            ));
        }
        *last_seq = (*last_seq).max(seq);
    }
    Ok(())
}

/// The event schema narrowed to one `type`, so errors name the field at fault
/// instead of "not valid under any of the schemas listed in oneOf".
fn schema_of_type(base: &Value, t: &str) -> Value {
    let mut s = base.clone();
    if let Some(o) = s.as_object_mut()
        && let Some(Value::Array(branches)) = o.remove("oneOf")
        && let Some(branch) = branches
            .into_iter()
            .find(|b| b.pointer("/properties/type/const").and_then(Value::as_str) == Some(t))
    {
        o.insert("allOf".into(), Value::Array(vec![branch]));
    }
    s
}

fn pointer(p: &str) -> &str {
    if p.is_empty() { "/" } else { p }
}

/// Best-effort line of a JSON pointer's last key in the text (1 when unknown).
fn line_of_pointer(bytes: &[u8], ptr: &str) -> usize {
    let text = String::from_utf8_lossy(bytes);
    let Some(last) = ptr
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty() && s.parse::<usize>().is_err())
    else {
        return 1;
    };
    let needle = format!("\"{last}\"");
    text.find(&needle)
        .map_or(1, |pos| text[..pos].matches('\n').count() + 1)
}
