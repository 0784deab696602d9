//! The role definitions shipped with loopwatch: one Markdown file per role
//! under `assets/agents/`, embedded in the binary. Each says what the role
//! is for in the loop, what it may touch, the inputs loopwatch sends it and
//! the exact answer its gate accepts, with worked examples (the
//! `role_files` test reads every example with loopwatch's own parsers).
//!
//! A dispatch's instructions are, in this order of precedence:
//! 1. the agent's `prompt_file`, when `loopwatch.toml` names one;
//! 2. else, for the `claude` and `codex` adapters, the embedded role file;
//! 3. else none: a `generic` command's stdin stays exactly the inputs the
//!    loop names (a script that reads them is not handed a prompt it never
//!    asked for; `prompt_file = "agents/<role>.md"` hands it one).
//!
//! A file may be cut into steps for a role dispatched in several (the
//! finding verifier: `parse`, then `verify` once per finding): a line
//! `<!-- step: NAME -->` opens the section of step NAME, which runs to the
//! next such line. A dispatch gets the text before the first marker (shared
//! by every step) and the section of its own step (`LW_STEP`), never the
//! other steps'. Markers inside a code fence are text. A file without
//! markers is handed whole to every step.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::config::{AdapterKind, AgentConfig};
use crate::model::event::AgentRole;

/// Largest prompt file read (instructions of that size are a mistake, and
/// some adapters pass them on a command line).
pub const MAX_PROMPT_BYTES: u64 = 1024 * 1024;

/// One role file shipped with loopwatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoleFile {
    /// The role it defines.
    pub role: AgentRole,
    /// Its file name under `assets/agents/` and the `agents/` folder `init` writes.
    pub file_name: &'static str,
    /// Its text.
    pub text: &'static str,
}

/// A [`RoleFile`] of `assets/agents/<name>`.
macro_rules! role_file {
    ($role:ident, $name:literal) => {
        RoleFile {
            role: AgentRole::$role,
            file_name: $name,
            text: include_str!(concat!("../../assets/agents/", $name)),
        }
    };
}

/// Every role file, in loop order.
pub const ROLE_FILES: [RoleFile; 7] = [
    role_file!(Developer, "developer.md"),
    role_file!(Verifier, "verifier.md"),
    role_file!(Auditor, "auditor.md"),
    role_file!(Reviewer, "reviewer.md"),
    role_file!(FindingVerifier, "finding-verifier.md"),
    role_file!(Triage, "triage.md"),
    role_file!(VerifyByTest, "verify-by-test.md"),
];

/// The role file of `role`.
pub fn role_file(role: AgentRole) -> &'static RoleFile {
    // Invariant: ROLE_FILES holds one file per role (a test checks it).
    ROLE_FILES
        .iter()
        .find(|f| f.role == role)
        .unwrap_or(&ROLE_FILES[0])
}

/// The `prompt_file` value `loopwatch init` writes for `role`, relative to
/// the configuration's folder.
pub fn init_path(role: AgentRole) -> String {
    format!("agents/{}", role_file(role).file_name)
}

/// The steps a role is dispatched in, when it has more than one (`LW_STEP`).
pub fn steps(role: AgentRole) -> &'static [&'static str] {
    match role {
        AgentRole::FindingVerifier => &["parse", "verify"],
        _ => &[],
    }
}

/// Where a dispatch's instructions come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The agent's `prompt_file`.
    PromptFile(PathBuf),
    /// The role file embedded in loopwatch.
    Embedded(&'static str),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::PromptFile(p) => write!(f, "prompt_file {}", p.display()),
            Source::Embedded(name) => {
                write!(f, "loopwatch's built-in role (assets/agents/{name})")
            }
        }
    }
}

/// A dispatch's instructions and where they come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instructions {
    /// The text handed to the agent (its step's part only).
    pub text: String,
    /// Its origin.
    pub source: Source,
}

/// The instructions of a dispatch of `agent` serving `step` (`LW_STEP`,
/// when the dispatch has one): see the module's precedence. `None` for a
/// generic command without a `prompt_file`. The error is a prompt file that
/// cannot be read or whose step markers are wrong (its message names the line).
pub fn instructions(
    agent: &AgentConfig,
    step: Option<&str>,
) -> std::io::Result<Option<Instructions>> {
    if let Some(path) = &agent.prompt_file {
        let text = read_prompt_file(path)?;
        let part = for_step(agent.role, &text, step).map_err(invalid)?;
        return Ok(Some(Instructions {
            text: part.into_owned(),
            source: Source::PromptFile(path.clone()),
        }));
    }
    if agent.adapter == AdapterKind::Generic {
        return Ok(None);
    }
    let file = role_file(agent.role);
    let part = for_step(agent.role, file.text, step).map_err(invalid)?;
    Ok(Some(Instructions {
        text: part.into_owned(),
        source: Source::Embedded(file.file_name),
    }))
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

/// Reads a prompt file the way every file from outside is read: without
/// blocking (a FIFO is refused), a regular file, at most
/// [`MAX_PROMPT_BYTES`], UTF-8.
pub fn read_prompt_file(path: &Path) -> std::io::Result<String> {
    let bytes = crate::util::read_regular(path, MAX_PROMPT_BYTES)?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
        invalid(format!("line {line}: not UTF-8 text"))
    })
}

/// Checks the step markers of a prompt file for `role`: only the role's
/// steps, each once, all of them when there is any. The error names the line.
pub fn check(role: AgentRole, text: &str) -> Result<(), String> {
    sections(role, text).map(|_| ())
}

/// The part of `text` a dispatch of `role` serving `step` gets: the shared
/// text and the step's section, markers removed (the whole text when it has
/// no markers, or when no step is named).
pub fn for_step<'a>(
    role: AgentRole,
    text: &'a str,
    step: Option<&str>,
) -> Result<Cow<'a, str>, String> {
    let s = sections(role, text)?;
    if s.parts.is_empty() {
        return Ok(Cow::Borrowed(text));
    }
    let mut out = s.shared.trim_end().to_string();
    for (name, body) in &s.parts {
        if step.is_none_or(|st| st == *name) {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(body.trim());
        }
    }
    out.push('\n');
    Ok(Cow::Owned(out))
}

/// A text cut at its step markers.
struct Sections<'a> {
    /// Before the first marker.
    shared: &'a str,
    /// `(step, section)` in file order.
    parts: Vec<(&'a str, &'a str)>,
}

fn sections<'a>(role: AgentRole, text: &'a str) -> Result<Sections<'a>, String> {
    let mut markers: Vec<(usize, usize, usize, &'a str)> = Vec::new();
    let mut offset = 0;
    let mut fenced = false;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += raw.len();
        let line = raw.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(name) = marker(line) {
            markers.push((i + 1, start, offset, name));
        }
    }
    let known = steps(role);
    let expected = || {
        if known.is_empty() {
            format!("the {role} is dispatched in one step: remove the step markers")
        } else {
            format!("the steps of the {role} are {}", known.join(", "))
        }
    };
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for (line, _, _, name) in &markers {
        if !known.contains(name) {
            return Err(format!(
                "line {line}: `<!-- step: {name} -->` names no step of the {role} ({})",
                expected()
            ));
        }
        if let Some((_, first)) = seen.iter().find(|(n, _)| n == name) {
            return Err(format!(
                "line {line}: a second `<!-- step: {name} -->` (the first is line {first})"
            ));
        }
        seen.push((name, *line));
    }
    if let Some(missing) = known
        .iter()
        .find(|k| !markers.is_empty() && !seen.iter().any(|(n, _)| n == *k))
    {
        return Err(format!(
            "no `<!-- step: {missing} -->` section: a file with step markers needs one per step ({})",
            expected()
        ));
    }
    let shared = markers
        .first()
        .map_or(text, |(_, start, _, _)| &text[..*start]);
    let parts = markers
        .iter()
        .enumerate()
        .map(|(k, (_, _, end, name))| {
            let stop = markers.get(k + 1).map_or(text.len(), |m| m.1);
            (*name, &text[*end..stop])
        })
        .collect();
    Ok(Sections { shared, parts })
}

/// The step a marker line opens: `<!-- step: NAME -->`.
fn marker(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("<!--")?.strip_suffix("-->")?.trim();
    let name = inner.strip_prefix("step:")?.trim();
    (!name.is_empty() && !name.contains(char::is_whitespace)).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_per_role_and_the_finding_verifier_in_two_steps() {
        for role in AgentRole::ALL {
            let f = role_file(role);
            assert_eq!(f.role, role);
            assert_eq!(f.file_name, format!("{role}.md"));
            check(role, f.text).unwrap_or_else(|e| panic!("{role}: {e}"));
        }
        let fv = role_file(AgentRole::FindingVerifier).text;
        let parse = for_step(AgentRole::FindingVerifier, fv, Some("parse")).unwrap();
        let verify = for_step(AgentRole::FindingVerifier, fv, Some("verify")).unwrap();
        // The verdict gate's feedback points at "Output format": each step has its own.
        for (step, text) in [("parse", &parse), ("verify", &verify)] {
            assert!(text.contains("## Output format"), "{step}");
            assert!(!text.contains("<!-- step:"), "{step}");
        }
        assert!(parse.contains("findings_list") && !parse.contains("Step: verify"));
        assert!(verify.contains("\"verdict\"") && !verify.contains("Step: parse"));
    }

    #[test]
    fn a_dispatch_gets_the_shared_text_and_its_own_step_only() {
        let role = AgentRole::FindingVerifier;
        let text = "Shared.\n<!-- step: parse -->\nParse it.\n```\n<!-- step: verify -->\n```\n<!-- step: verify -->\nVerify it.\n";
        assert_eq!(
            for_step(role, text, Some("parse")).unwrap(),
            "Shared.\n\nParse it.\n```\n<!-- step: verify -->\n```\n"
        );
        assert_eq!(
            for_step(role, text, Some("verify")).unwrap(),
            "Shared.\n\nVerify it.\n"
        );
        // Without markers, every step gets the whole file.
        assert_eq!(for_step(role, "All.\n", Some("parse")).unwrap(), "All.\n");
        assert_eq!(for_step(AgentRole::Verifier, "V.\n", None).unwrap(), "V.\n");
    }

    #[test]
    fn wrong_markers_are_refused_naming_the_line() {
        let role = AgentRole::FindingVerifier;
        assert_eq!(
            check(role, "a\n<!-- step: pars -->\nb\n").unwrap_err(),
            "line 2: `<!-- step: pars -->` names no step of the finding-verifier (the steps of the finding-verifier are parse, verify)"
        );
        assert_eq!(
            check(
                role,
                "<!-- step: parse -->\n<!-- step: verify -->\n<!-- step: parse -->\n"
            )
            .unwrap_err(),
            "line 3: a second `<!-- step: parse -->` (the first is line 1)"
        );
        assert!(
            check(role, "<!-- step: verify -->\nv\n")
                .unwrap_err()
                .starts_with("no `<!-- step: parse -->` section")
        );
        assert!(
            check(AgentRole::Reviewer, "<!-- step: review -->\n")
                .unwrap_err()
                .contains("the reviewer is dispatched in one step")
        );
    }

    fn agent(role: AgentRole, adapter: AdapterKind, prompt: Option<PathBuf>) -> AgentConfig {
        AgentConfig {
            role,
            command: "x".into(),
            adapter,
            prompt_file: prompt,
            model: None,
            timeout: std::time::Duration::from_secs(1),
            max_concurrency: 1,
        }
    }

    #[test]
    fn the_prompt_file_wins_then_the_embedded_role_then_nothing() {
        let d = tempfile::tempdir().unwrap();
        let own = d.path().join("mine.md");
        std::fs::write(&own, "My own verifier.\n").unwrap();
        let a = agent(AgentRole::Verifier, AdapterKind::Claude, Some(own.clone()));
        let i = instructions(&a, None).unwrap().unwrap();
        assert_eq!(i.text, "My own verifier.\n");
        assert_eq!(i.source, Source::PromptFile(own));
        let a = agent(AgentRole::Verifier, AdapterKind::Codex, None);
        let i = instructions(&a, None).unwrap().unwrap();
        assert_eq!(i.text, role_file(AgentRole::Verifier).text);
        assert_eq!(i.source, Source::Embedded("verifier.md"));
        let a = agent(AgentRole::FindingVerifier, AdapterKind::Claude, None);
        let i = instructions(&a, Some("verify")).unwrap().unwrap();
        assert!(!i.text.contains("findings_list\":[{"), "{}", i.text);
        let g = agent(AgentRole::Verifier, AdapterKind::Generic, None);
        assert_eq!(instructions(&g, None).unwrap(), None);
    }

    #[test]
    fn a_prompt_file_is_read_as_a_hostile_file() {
        let d = tempfile::tempdir().unwrap();
        let bad = d.path().join("bad.md");
        std::fs::write(&bad, b"fine\n\xff\n").unwrap();
        let e = read_prompt_file(&bad).unwrap_err();
        assert_eq!(e.to_string(), "line 2: not UTF-8 text");
        let fifo = d.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        assert!(read_prompt_file(&fifo).is_err(), "a FIFO never blocks");
        let big = d.path().join("big.md");
        std::fs::write(&big, vec![b'a'; MAX_PROMPT_BYTES as usize + 1]).unwrap();
        assert!(
            read_prompt_file(&big)
                .unwrap_err()
                .to_string()
                .contains("1 MiB")
        );
    }
}
