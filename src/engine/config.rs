//! `loopwatch.toml`: which agents `loopwatch run` dispatches and how.
//!
//! The file is read whole before anything runs; every problem is a
//! [`ConfigError`] naming the file, the line and the dotted key (an unknown
//! key, a missing required agent, a command that does not exist, a bad
//! duration or number). Paths in the file are relative to its folder.
//! `[notify]` and `[expiry.<kind>]` are those of the TUI's config file,
//! for the gates the engine waits on.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::model::event::{AgentRole, ExpiryRule};
use crate::model::{Decision, HumanGateKind};
use crate::notify::{NotifySettings, RawNotify};

/// The file name looked for at the worktree root.
pub const FILE_NAME: &str = "loopwatch.toml";

/// The agents every run needs.
pub const REQUIRED: [AgentRole; 3] = [
    AgentRole::Developer,
    AgentRole::Verifier,
    AgentRole::Auditor,
];

/// A problem in `loopwatch.toml`. Displays as `<file>:<line>: <key>: <message>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {key}: {message}", path.display())]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line (1 when the problem is the file as a whole).
    pub line: usize,
    /// The dotted key at fault (`agents.verifier.timeout`).
    pub key: String,
    /// What is wrong and what was expected.
    pub message: String,
}

/// How an agent is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdapterKind {
    /// Any command: input on stdin and in `$LW_INPUT_FILE`, answer on stdout.
    Generic,
    /// Claude Code's headless mode (`claude -p --output-format stream-json`).
    Claude,
    /// Codex CLI's `codex exec --json`.
    Codex,
}

impl AdapterKind {
    /// The name used in the file and in `agent.started`.
    pub fn as_str(self) -> &'static str {
        match self {
            AdapterKind::Generic => "generic",
            AdapterKind::Claude => "claude",
            AdapterKind::Codex => "codex",
        }
    }
}

/// One `[agents.<role>]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// The role.
    pub role: AgentRole,
    /// generic: a shell command line; claude/codex: the executable.
    pub command: String,
    /// The adapter.
    pub adapter: AdapterKind,
    /// The agent's instructions, handed over with its inputs (without one,
    /// the role's built-in instructions: see [`super::roles`]).
    pub prompt_file: Option<PathBuf>,
    /// The model, for adapters that take one.
    pub model: Option<String>,
    /// How long one dispatch may run.
    pub timeout: Duration,
    /// Lanes at once (the finding verifier's map).
    pub max_concurrency: usize,
}

/// `[run]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// TEST handed to the verifier (empty: none).
    pub test: String,
    /// Base of DIFF (default: HEAD when the run starts).
    pub diff: Option<String>,
    /// Rounds per gate before a person decides.
    pub max_rounds: u32,
    /// SIGTERM → SIGKILL grace when an agent is stopped.
    pub grace: Duration,
    /// Bytes kept per agent log (the rest is counted, not written).
    pub log_limit: u64,
}

/// `[verify_by_test]` (read by the review stage).
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyByTestConfig {
    /// Whether the step runs.
    pub enabled: bool,
    /// Accepted blocking findings attempted per iteration.
    pub max_findings: u32,
    /// Bound of the whole step.
    pub step_timeout: Duration,
}

/// A whole `loopwatch.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where it was read from.
    pub path: PathBuf,
    /// `[run]`.
    pub run: RunConfig,
    /// `[agents.*]`, by role.
    pub agents: BTreeMap<AgentRole, AgentConfig>,
    /// `[verify_by_test]`.
    pub verify_by_test: VerifyByTestConfig,
    /// `[notify]`: the webhook, and when to send (`delay`, `remind`).
    pub notify: NotifySettings,
    /// `[expiry.<kind>]`: when an open gate of a kind expires, and what
    /// applies then; a kind not listed never expires.
    pub expiry: HashMap<HumanGateKind, ExpiryRule>,
}

/// Default timeout of one dispatch.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// Default SIGTERM → SIGKILL grace.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);
/// Default bytes kept per agent log.
pub const DEFAULT_LOG_LIMIT: u64 = 64 * 1024 * 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    run: Option<RawRun>,
    agents: Option<RawAgents>,
    verify_by_test: Option<RawVerifyByTest>,
    notify: Option<Spanned<RawNotify>>,
    #[serde(default)]
    expiry: BTreeMap<String, Spanned<RawExpiry>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpiry {
    after: Spanned<String>,
    action: Spanned<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRun {
    test: Option<String>,
    diff: Option<Spanned<String>>,
    max_rounds: Option<Spanned<i64>>,
    grace: Option<Spanned<String>>,
    log_limit: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgents {
    developer: Option<Spanned<RawAgent>>,
    verifier: Option<Spanned<RawAgent>>,
    auditor: Option<Spanned<RawAgent>>,
    reviewer: Option<Spanned<RawAgent>>,
    #[serde(rename = "finding-verifier")]
    finding_verifier: Option<Spanned<RawAgent>>,
    triage: Option<Spanned<RawAgent>>,
    #[serde(rename = "verify-by-test")]
    verify_by_test: Option<Spanned<RawAgent>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    command: Option<Spanned<String>>,
    adapter: Option<Spanned<String>>,
    prompt_file: Option<Spanned<String>>,
    model: Option<String>,
    timeout: Option<Spanned<String>>,
    max_concurrency: Option<Spanned<i64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawVerifyByTest {
    enabled: Option<bool>,
    max_findings: Option<Spanned<i64>>,
    step_timeout: Option<Spanned<String>>,
}

impl Config {
    /// Reads and checks a file. `path_env` is the PATH commands are looked up in.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            path: path.to_path_buf(),
            line: 1,
            key: "(file)".into(),
            message: format!("cannot read: {e}"),
        })?;
        Config::parse(path, &text, std::env::var_os("PATH").as_deref())
    }

    /// Checks `text` as the content of `path`; commands are looked up in `path_env`.
    pub fn parse(
        path: &Path,
        text: &str,
        path_env: Option<&std::ffi::OsStr>,
    ) -> Result<Config, ConfigError> {
        let cx = Cx { path, text };
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let at = e.span().map_or(0, |s| s.start);
            let (line, key) = key_at(text, at);
            cx.err_at(line, key, e.message().trim().to_string())
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        // A missing table is one with every key left out.
        let r = raw.run.unwrap_or_default();
        let run = RunConfig {
            test: r.test.unwrap_or_default(),
            diff: match r.diff {
                Some(d) if d.get_ref().trim().is_empty() => {
                    return Err(cx.err(d.span(), "must name a git ref (or be left out)"));
                }
                Some(d) => Some(d.into_inner()),
                None => None,
            },
            max_rounds: cx.int(r.max_rounds.as_ref(), 1, 100)?.unwrap_or(3) as u32,
            grace: cx.duration(r.grace.as_ref())?.unwrap_or(DEFAULT_GRACE),
            log_limit: cx
                .int(r.log_limit.as_ref(), 1024, i64::MAX)?
                .map_or(DEFAULT_LOG_LIMIT, |n| n as u64),
        };
        let mut agents = BTreeMap::new();
        if let Some(a) = raw.agents {
            let all = [
                (AgentRole::Developer, a.developer),
                (AgentRole::Verifier, a.verifier),
                (AgentRole::Auditor, a.auditor),
                (AgentRole::Reviewer, a.reviewer),
                (AgentRole::FindingVerifier, a.finding_verifier),
                (AgentRole::Triage, a.triage),
                (AgentRole::VerifyByTest, a.verify_by_test),
            ];
            for (role, agent) in all {
                if let Some(agent) = agent {
                    agents.insert(role, cx.agent(role, agent, base, path_env)?);
                }
            }
        }
        for role in REQUIRED {
            if !agents.contains_key(&role) {
                let line = text
                    .lines()
                    .position(|l| l.trim_start().starts_with("[agents"))
                    .map_or(1, |i| i + 1);
                return Err(cx.err_at(
                    line,
                    format!("agents.{role}"),
                    format!("missing required agent: add an [agents.{role}] table with a command"),
                ));
            }
        }
        let v = raw.verify_by_test.unwrap_or_default();
        let verify_by_test = VerifyByTestConfig {
            enabled: v.enabled.unwrap_or(false),
            max_findings: cx.int(v.max_findings.as_ref(), 1, 1000)?.unwrap_or(3) as u32,
            step_timeout: cx
                .duration(v.step_timeout.as_ref())?
                .unwrap_or(Duration::from_secs(600)),
        };
        // The review stage needs its finding verifier (verify-by-test without
        // its agent or a review stage is off: `loopwatch run` says so).
        let table_line = |role: AgentRole| {
            let head = format!("[agents.{role}]");
            text.lines()
                .position(|l| l.trim_start().starts_with(&head))
                .map_or(1, |i| i + 1)
        };
        if agents.contains_key(&AgentRole::Reviewer)
            && !agents.contains_key(&AgentRole::FindingVerifier)
        {
            return Err(cx.err_at(
                table_line(AgentRole::Reviewer),
                "agents.finding-verifier".into(),
                "missing: a review stage ([agents.reviewer]) needs an [agents.finding-verifier] table with a command",
            ));
        }
        let notify = match raw.notify {
            None => NotifySettings::default(),
            Some(n) => {
                let span = n.span();
                n.into_inner()
                    .resolve()
                    .map_err(|m| cx.notify_err(span, &m))?
            }
        };
        let mut expiry = HashMap::new();
        for (kind, rule) in raw.expiry {
            let table = rule.span();
            let rule = rule.into_inner();
            let k = kind.parse::<HumanGateKind>().map_err(|e| {
                let (line, _) = key_at(text, table.start);
                cx.err_at(line, format!("expiry.{kind}"), e.to_string())
            })?;
            let action = rule
                .action
                .get_ref()
                .parse::<Decision>()
                .map_err(|e| cx.err(rule.action.span(), e.to_string()))?;
            let r = ExpiryRule::new(rule.after.get_ref(), action, k).map_err(|e| {
                let at = match e {
                    crate::model::event::ExpiryError::NotAnOption { .. } => rule.action.span(),
                    _ => rule.after.span(),
                };
                cx.err(at, e.to_string())
            })?;
            expiry.insert(k, r);
        }
        Ok(Config {
            path: path.to_path_buf(),
            run,
            agents,
            verify_by_test,
            notify,
            expiry,
        })
    }

    /// Why `[verify_by_test] enabled` has no effect, when it has none (no
    /// review stage, or no `[agents.verify-by-test]`).
    pub fn verify_by_test_off(&self) -> Option<String> {
        if !self.verify_by_test.enabled {
            return None;
        }
        let missing = [AgentRole::Reviewer, AgentRole::VerifyByTest]
            .into_iter()
            .find(|r| !self.agents.contains_key(r))?;
        Some(format!(
            "{}: [verify_by_test] enabled, but there is no [agents.{missing}]: verify-by-test is off for this run",
            self.path.display()
        ))
    }

    /// The agent of a role (the required ones are always there).
    pub fn agent(&self, role: AgentRole) -> Option<&AgentConfig> {
        self.agents.get(&role)
    }
}

struct Cx<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Cx<'_> {
    fn err_at(&self, line: usize, key: String, message: impl Into<String>) -> ConfigError {
        ConfigError {
            path: self.path.to_path_buf(),
            line,
            key: if key.is_empty() {
                "(top level)".into()
            } else {
                key
            },
            message: message.into(),
        }
    }

    fn err(&self, span: std::ops::Range<usize>, message: impl Into<String>) -> ConfigError {
        let (line, key) = key_at(self.text, span.start);
        self.err_at(line, key, message)
    }

    /// A `[notify]` problem (`[notify] <key>: <message>`), at its key's line.
    fn notify_err(&self, table: std::ops::Range<usize>, message: &str) -> ConfigError {
        let rest = message.strip_prefix("[notify] ").unwrap_or(message);
        let (key, msg) = rest.split_once(": ").unwrap_or(("", rest));
        // From the table's header to the next one (its span may cover the header only).
        let start = table.start.min(self.text.len());
        let mut at = start;
        let mut offset = start;
        for (n, l) in self.text[start..].split_inclusive('\n').enumerate() {
            let t = l.trim_start();
            if n > 0 && t.starts_with('[') {
                break;
            }
            if !key.is_empty()
                && t.strip_prefix(key)
                    .is_some_and(|r| r.trim_start().starts_with('='))
            {
                at = offset + (l.len() - t.len());
                break;
            }
            offset += l.len();
        }
        let (line, _) = key_at(self.text, at);
        let key = if key.is_empty() {
            "notify".to_string()
        } else {
            format!("notify.{key}")
        };
        self.err_at(line, key, msg.to_string())
    }

    fn int(
        &self,
        v: Option<&Spanned<i64>>,
        min: i64,
        max: i64,
    ) -> Result<Option<i64>, ConfigError> {
        match v {
            None => Ok(None),
            Some(n) if (min..=max).contains(n.get_ref()) => Ok(Some(*n.get_ref())),
            Some(n) => Err(self.err(
                n.span(),
                format!("{} is out of range (expected {min} to {max})", n.get_ref()),
            )),
        }
    }

    fn duration(&self, v: Option<&Spanned<String>>) -> Result<Option<Duration>, ConfigError> {
        let Some(v) = v else { return Ok(None) };
        parse_duration(v.get_ref())
            .map(Some)
            .map_err(|m| self.err(v.span(), m))
    }

    fn agent(
        &self,
        role: AgentRole,
        a: Spanned<RawAgent>,
        base: &Path,
        path_env: Option<&std::ffi::OsStr>,
    ) -> Result<AgentConfig, ConfigError> {
        let table_span = a.span();
        let a = a.into_inner();
        // A problem of the command left out: at the table's header.
        let at_table = |message: String| {
            let (line, _) = key_at(self.text, table_span.start);
            self.err_at(line, format!("agents.{role}.command"), message)
        };
        let adapter = match &a.adapter {
            None => AdapterKind::Generic,
            Some(s) => match s.get_ref().as_str() {
                "generic" => AdapterKind::Generic,
                "claude" => AdapterKind::Claude,
                "codex" => AdapterKind::Codex,
                other => {
                    return Err(self.err(
                        s.span(),
                        format!("unknown adapter '{other}' (expected generic, claude or codex)"),
                    ));
                }
            },
        };
        let command = match (&a.command, adapter) {
            (Some(c), _) if c.get_ref().trim().is_empty() => {
                return Err(self.err(c.span(), "is empty; expected a command"));
            }
            (Some(c), _) => c.get_ref().trim().to_string(),
            (None, AdapterKind::Claude) => "claude".into(),
            (None, AdapterKind::Codex) => "codex".into(),
            (None, AdapterKind::Generic) => {
                return Err(at_table(
                    "missing: the generic adapter needs a command".into(),
                ));
            }
        };
        let program = match adapter {
            AdapterKind::Generic => first_word(&command),
            _ => Some(command.clone()),
        };
        if let Some(p) = program
            && !command_exists(&p, base, path_env)
        {
            let msg = match adapter {
                AdapterKind::Generic => {
                    format!("command not found: '{p}' (not a file, not on PATH)")
                }
                AdapterKind::Claude => format!(
                    "command not found: '{p}' (not a file, not on PATH): the claude adapter runs Claude Code (npm @anthropic-ai/claude-code, tested with {})",
                    super::adapter::CLAUDE_TESTED
                ),
                AdapterKind::Codex => format!(
                    "command not found: '{p}' (not a file, not on PATH): the codex adapter runs Codex (npm @openai/codex, tested with {})",
                    super::adapter::CODEX_TESTED
                ),
            };
            return Err(match &a.command {
                Some(c) => self.err(c.span(), msg),
                None => at_table(msg),
            });
        }
        let prompt_file = match &a.prompt_file {
            None => None,
            Some(p) => {
                let full = base.join(p.get_ref());
                if !full.is_file() {
                    return Err(self.err(
                        p.span(),
                        format!("{} is not a readable file", full.display()),
                    ));
                }
                // Read as every dispatch reads it: a file no dispatch could
                // use stops the run before anything runs.
                let text = super::roles::read_prompt_file(&full)
                    .map_err(|e| self.err(p.span(), format!("{}: {e}", full.display())))?;
                super::roles::check(role, &text)
                    .map_err(|e| self.err(p.span(), format!("{}: {e}", full.display())))?;
                Some(full)
            }
        };
        Ok(AgentConfig {
            role,
            command,
            adapter,
            prompt_file,
            model: a.model.filter(|m| !m.trim().is_empty()),
            timeout: self
                .duration(a.timeout.as_ref())?
                .unwrap_or(DEFAULT_TIMEOUT),
            max_concurrency: self.int(a.max_concurrency.as_ref(), 1, 256)?.unwrap_or(4) as usize,
        })
    }
}

/// Parses `20m`, `90s`, `1h 30m`, `500ms` (jiff's friendly format); must be above zero.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d: jiff::SignedDuration = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (expected e.g. 90s, 20m, 1h 30m, 500ms)"))?;
    match Duration::try_from(d) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(format!("'{s}' must be above zero")),
    }
}

/// The 1-based line of byte `at` and the dotted key written there.
fn key_at(text: &str, at: usize) -> (usize, String) {
    let mut table = String::new();
    let mut line_no = 1;
    let mut start = 0;
    for (i, line) in text.split('\n').enumerate() {
        let end = start + line.len();
        let t = line.trim();
        let header = t
            .strip_prefix('[')
            .and_then(|r| r.split(']').next())
            .map(|h| h.trim_matches(['[', ' ']).to_string());
        if at <= end || i == text.split('\n').count() - 1 {
            line_no = i + 1;
            if let Some(h) = header {
                return (line_no, h);
            }
            let key = t.split('=').next().unwrap_or("").trim().trim_matches('"');
            if key.is_empty() || !t.contains('=') {
                return (line_no, table);
            }
            return (
                line_no,
                if table.is_empty() {
                    key.to_string()
                } else {
                    format!("{table}.{key}")
                },
            );
        }
        if let Some(h) = header {
            table = h;
        }
        start = end + 1;
    }
    (line_no, table)
}

/// The program a shell command line runs first, when it can be told
/// without a shell (a plain word: no assignment, quote, `$` or builtin).
fn first_word(command: &str) -> Option<String> {
    let w = command.split_whitespace().next()?;
    const BUILTINS: [&str; 12] = [
        "cd", "exec", "env", "set", "export", "eval", ".", "source", "test", "[", "true", "exit",
    ];
    if w.contains([
        '=', '$', '"', '\'', '`', '(', ')', '{', '}', ';', '|', '&', '<', '>',
    ]) || BUILTINS.contains(&w)
    {
        return None;
    }
    Some(w.to_string())
}

/// True when `program` is a file (relative to `base` when it has a slash)
/// or an executable on `path_env`.
pub fn command_exists(program: &str, base: &Path, path_env: Option<&std::ffi::OsStr>) -> bool {
    use std::os::unix::fs::PermissionsExt;
    if program.contains('/') {
        let p = Path::new(program);
        return if p.is_absolute() {
            p.is_file()
        } else {
            base.join(p).is_file()
        };
    }
    let Some(path_env) = path_env else {
        return false;
    };
    std::env::split_paths(path_env).any(|dir| {
        std::fs::metadata(dir.join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
