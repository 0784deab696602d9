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

use crate::model::HumanGateKind;
use crate::model::budget::{Budget, Limits};
use crate::model::event::{AgentRole, ExpiryRule, ExpiryTableError, expiry_table};
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
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
        self.into()
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
    /// Wait out an agent CLI's usage limit until it resets, once, instead
    /// of asking a person.
    pub wait_for_limit: bool,
    /// Rounds of a gate without progress before a person is asked
    /// (`stagnant` gate).
    pub stagnant_after: u32,
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
    /// `[budget]` and `[budget.<role>]`.
    pub budget: Budget,
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
    budget: Option<Spanned<toml::Table>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpiry {
    after: String,
    action: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRun {
    test: Option<String>,
    diff: Option<Spanned<String>>,
    max_rounds: Option<Spanned<i64>>,
    grace: Option<Spanned<String>>,
    log_limit: Option<Spanned<i64>>,
    wait_for_limit: Option<bool>,
    stagnant_after: Option<Spanned<i64>>,
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
            wait_for_limit: r.wait_for_limit.unwrap_or(false),
            stagnant_after: cx.int(r.stagnant_after.as_ref(), 1, 100)?.unwrap_or(1) as u32,
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
                n.into_inner().resolve().map_err(|m| {
                    let m = m.strip_prefix("[notify] ").unwrap_or(&m);
                    let (key, msg) = m.split_once(": ").unwrap_or(("", m));
                    cx.key_err(span.start, "notify", key, msg)
                })?
            }
        };
        let mut expiry = HashMap::new();
        for (kind, rule) in raw.expiry {
            let from = rule.span().start;
            let rule = rule.into_inner();
            let section = format!("expiry.{kind}");
            let (k, r) = expiry_table(&kind, &rule.after, &rule.action).map_err(|e| {
                let key = match e {
                    ExpiryTableError::Kind(_) => "",
                    ExpiryTableError::After(_) => "after",
                    ExpiryTableError::Action(_) => "action",
                };
                cx.key_err(from, &section, key, &e.to_string())
            })?;
            expiry.insert(k, r);
        }
        let budget = match raw.budget {
            Some(b) => cx.budget(b)?,
            None => Budget::default(),
        };
        cx.budget_priced(&budget, &agents)?;
        Ok(Config {
            path: path.to_path_buf(),
            run,
            agents,
            verify_by_test,
            notify,
            expiry,
            budget,
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

    /// `[budget]`: `usd`, `tokens`, `wall`, `hard`, and a table of the
    /// same limits per role. Spans of a parsed table's values are lost:
    /// a problem names its key, at the line that key is written on.
    fn budget(&self, b: Spanned<toml::Table>) -> Result<Budget, ConfigError> {
        let header = b.span();
        let table = b.into_inner();
        let mut out = Budget::default();
        for (k, v) in &table {
            match (k.as_str(), v) {
                ("hard", toml::Value::Boolean(h)) => out.hard = *h,
                ("hard", _) => {
                    return Err(self.key_err(
                        header.start,
                        "budget",
                        "hard",
                        "must be true or false",
                    ));
                }
                ("usd" | "tokens" | "wall", _) => {
                    self.limit(header.start, "budget", k, v, &mut out.run)?;
                }
                (role, toml::Value::Table(t)) => {
                    let r = role
                        .parse::<AgentRole>()
                        .map_err(|e| self.key_err(header.start, "budget", role, &e))?;
                    let section = format!("budget.{role}");
                    let mut limits = Limits::default();
                    for (rk, rv) in t {
                        self.limit(header.start, &section, rk, rv, &mut limits)?;
                    }
                    out.roles.insert(r, limits);
                }
                (other, _) => {
                    return Err(self.key_err(
                        header.start,
                        "budget",
                        other,
                        "unknown key (expected usd, tokens, wall, hard, or a [budget.<role>] table)",
                    ));
                }
            }
        }
        Ok(out)
    }

    /// One limit of `[section]`: a number above zero (`usd`), a whole
    /// number above zero (`tokens`), a duration (`wall`); any other key is
    /// refused.
    fn limit(
        &self,
        from: usize,
        section: &str,
        key: &str,
        v: &toml::Value,
        into: &mut Limits,
    ) -> Result<(), ConfigError> {
        let bad = |m: &str| self.key_err(from, section, key, m);
        match key {
            "usd" => {
                let n = match v {
                    toml::Value::Float(f) => *f,
                    toml::Value::Integer(i) => *i as f64,
                    _ => {
                        return Err(bad(
                            "must be a number of US dollars above zero (e.g. 5 or 2.5)",
                        ));
                    }
                };
                if !n.is_finite() || n <= 0.0 {
                    return Err(bad(&format!("{n} must be above zero")));
                }
                into.usd = Some(n);
            }
            "tokens" => match v {
                toml::Value::Integer(i) if *i > 0 => into.tokens = Some(*i as u64),
                toml::Value::Integer(i) => return Err(bad(&format!("{i} must be above zero"))),
                _ => return Err(bad("must be a whole number of tokens above zero")),
            },
            "wall" => match v {
                toml::Value::String(t) => into.wall = Some(parse_duration(t).map_err(|m| bad(&m))?),
                _ => return Err(bad("must be a duration in quotes (e.g. \"1h 30m\")")),
            },
            _ => return Err(bad("unknown key (expected usd, tokens or wall)")),
        }
        Ok(())
    }

    /// A problem of `[section] key` (of `[section]` when `key` is empty),
    /// at the line `key` is written on in that section (else at `from`'s).
    fn key_err(&self, from: usize, section: &str, key: &str, message: &str) -> ConfigError {
        let head = format!("[{section}]");
        let mut line = key_at(self.text, from).0;
        let mut inside = false;
        for (i, l) in self.text.lines().enumerate() {
            let t = l.trim();
            if t.starts_with('[') {
                inside = t.strip_prefix(head.as_str()).is_some_and(|rest| {
                    let rest = rest.trim();
                    rest.is_empty() || rest.starts_with('#')
                });
                if inside {
                    line = i + 1;
                }
                continue;
            }
            if inside
                && t.strip_prefix(key)
                    .is_some_and(|r| r.trim_start().starts_with('='))
            {
                line = i + 1;
                break;
            }
        }
        let key = match key {
            "" => section.to_string(),
            k => format!("{section}.{k}"),
        };
        self.err_at(line, key, message)
    }

    /// A dollar limit that a role can never meet: a role whose agent
    /// reports no cost (codex, generic) under a dollar limit, unless a
    /// token or agent-time limit covers it too.
    fn budget_priced(
        &self,
        b: &Budget,
        agents: &BTreeMap<AgentRole, AgentConfig>,
    ) -> Result<(), ConfigError> {
        for (role, a) in agents {
            if a.adapter == AdapterKind::Claude {
                continue;
            }
            let own = b.roles.get(role).copied().unwrap_or_default();
            let (section, usd) = match (own.usd, b.run.usd) {
                (Some(u), _) => (format!("budget.{role}"), u),
                (None, Some(u)) => ("budget".to_string(), u),
                (None, None) => continue,
            };
            let covered = own.tokens.is_some()
                || own.wall.is_some()
                || b.run.tokens.is_some()
                || b.run.wall.is_some();
            if !covered {
                return Err(self.key_err(
                    0,
                    &section,
                    "usd",
                    &format!(
                        "${usd} cannot be kept: [agents.{role}] (adapter {}) reports no cost, so its spending is unknown; add tokens or wall to [budget] (or [{section}])",
                        a.adapter.as_str()
                    ),
                ));
            }
        }
        Ok(())
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
            && let Some(problem) = command_problem(&p, base, path_env)
        {
            let msg = match (adapter, problem) {
                (_, Problem::NotExecutable(path)) => format!(
                    "command '{p}' is not executable ({}): make it so (chmod +x), or run it through its interpreter (`bash {p}`)",
                    path.display()
                ),
                (AdapterKind::Generic, Problem::NotFound) => {
                    format!("command not found: '{p}' (not a file, not on PATH)")
                }
                (AdapterKind::Claude, Problem::NotFound) => format!(
                    "command not found: '{p}' (not a file, not on PATH): the claude adapter runs Claude Code (npm @anthropic-ai/claude-code, tested with {})",
                    super::adapter::CLAUDE_TESTED
                ),
                (AdapterKind::Codex, Problem::NotFound) => format!(
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

/// A duration of the one grammar ([`crate::util::parse_duration`]:
/// `20m`, `90s`, `1h 30m`, `500ms`), above zero.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    match crate::util::parse_duration(s) {
        Ok(d) if !d.is_zero() => Ok(d),
        Err(crate::util::DurationError::NotADuration) => Err(format!(
            "'{s}' is not a duration (expected e.g. 90s, 20m, 1h 30m, 500ms)"
        )),
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
/// Why a command's program cannot be run: not there, or not executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// Not a file, not on PATH.
    NotFound,
    /// A file without the execute bit.
    NotExecutable(std::path::PathBuf),
}

/// Why `program` (a path, relative to `base`, or a name looked up in
/// `path_env`) cannot be run, when it cannot: checked when the config is
/// read, so nothing is recorded as started for a command that cannot start.
pub fn command_problem(
    program: &str,
    base: &Path,
    path_env: Option<&std::ffi::OsStr>,
) -> Option<Problem> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |m: &std::fs::Metadata| m.permissions().mode() & 0o111 != 0;
    if program.contains('/') {
        let p = Path::new(program);
        let full = if p.is_absolute() {
            p.to_path_buf()
        } else {
            base.join(p)
        };
        return match std::fs::metadata(&full) {
            Ok(m) if m.is_file() && runnable(&m) => None,
            Ok(m) if m.is_file() => Some(Problem::NotExecutable(full)),
            _ => Some(Problem::NotFound),
        };
    }
    let Some(path_env) = path_env else {
        return Some(Problem::NotFound);
    };
    let mut seen = None;
    for dir in std::env::split_paths(path_env) {
        let full = dir.join(program);
        match std::fs::metadata(&full) {
            Ok(m) if m.is_file() && runnable(&m) => return None,
            Ok(m) if m.is_file() => seen = seen.or(Some(full)),
            _ => {}
        }
    }
    Some(seen.map_or(Problem::NotFound, Problem::NotExecutable))
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
