//! A stream read as a transcript: the agent's messages, each tool call on
//! one line (the tool and its command or path), the results shortened,
//! errors and retries marked, the outcome last. Lines that are not part of
//! the stream (the CLI's stderr in the log) are kept as they are. Plain
//! strings only: the TUI gives each [`EntryKind`] its colour and
//! sanitises, the pager file is [`render`]ed.

use super::codex::{self, Item, Phase};
use super::{Format, Line, claude, first_line, lines};

/// What one transcript entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// Where the session runs: CLI, version, model, tools.
    Meta,
    /// A message of the agent.
    Message,
    /// The agent's thinking or reasoning summary.
    Thinking,
    /// A tool call.
    Call,
    /// A tool's result.
    Output,
    /// A tool that failed or was refused.
    Failed,
    /// A retry, a reconnect, a non-fatal error of the CLI.
    Notice,
    /// How the session (or a turn) ended well.
    Outcome,
    /// How it ended badly.
    OutcomeFailed,
    /// A line that is not part of the stream (stderr).
    Raw,
}

/// One entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// What it is.
    pub kind: EntryKind,
    /// Its text (several lines for a message).
    pub text: String,
}

impl Entry {
    fn new(kind: EntryKind, text: impl Into<String>) -> Entry {
        Entry {
            kind,
            text: text.into(),
        }
    }

    /// The mark the entry's first line starts with.
    pub fn mark(&self) -> &'static str {
        match self.kind {
            EntryKind::Meta => "● ",
            EntryKind::Message => "◆ ",
            EntryKind::Thinking => "… ",
            EntryKind::Call => "→ ",
            EntryKind::Output => "  ← ",
            EntryKind::Failed => "  ✗ ",
            EntryKind::Notice => "⚠ ",
            EntryKind::Outcome => "■ ",
            EntryKind::OutcomeFailed => "✗ ",
            EntryKind::Raw => "  | ",
        }
    }
}

/// Characters of a tool result's first line kept in the short form.
const SHORT: usize = 160;
/// Lines of a tool result kept in the full form.
const FULL_LINES: usize = 40;

/// The transcript of a stream (or of a log holding one). `full` keeps up
/// to 40 lines of every tool result (the pager); otherwise its first line.
/// A last line cut in the middle (the agent is still writing it) is left
/// out.
pub fn transcript(format: Format, bytes: &[u8], full: bool) -> Vec<Entry> {
    let mut out = Vec::new();
    let cut = super::last_is_cut(bytes);
    let all: Vec<Line<'_>> = lines(bytes).collect();
    let n = all.len();
    let mut started: Vec<String> = Vec::new();
    for (i, line) in all.into_iter().enumerate() {
        match line {
            Line::Json(v) => match format {
                Format::ClaudeStreamJson => claude_entries(&claude::event(&v), full, &mut out),
                Format::CodexJson => codex_entries(&codex::event(&v), full, &mut started, &mut out),
            },
            Line::Raw(r) if cut && i + 1 == n && r.starts_with(b"{") => {}
            Line::Raw(r) => out.push(Entry::new(
                EntryKind::Raw,
                String::from_utf8_lossy(r).into_owned(),
            )),
        }
    }
    out
}

/// The transcript as text, one mark per entry, continuation lines indented.
pub fn render(entries: &[Entry]) -> String {
    let mut s = String::new();
    for e in entries {
        let mark = e.mark();
        let indent = " ".repeat(mark.chars().count());
        for (i, l) in e.text.split('\n').enumerate() {
            s.push_str(if i == 0 { mark } else { &indent });
            s.push_str(l.trim_end_matches('\r'));
            s.push('\n');
        }
    }
    s
}

fn claude_entries(ev: &claude::Event, full: bool, out: &mut Vec<Entry>) {
    use claude::{Block, Event};
    match ev {
        Event::Init(i) => {
            let version = i.version.as_deref().unwrap_or("(version not given)");
            out.push(Entry::new(
                EntryKind::Meta,
                format!(
                    "Claude Code {version} · model {} · permission mode {} · tools: {}",
                    i.model,
                    i.permission_mode,
                    i.tools.join(", ")
                ),
            ));
        }
        Event::Retry {
            attempt,
            max,
            status,
            error,
        } => out.push(Entry::new(
            EntryKind::Notice,
            format!(
                "API call retried: {}",
                claude::retry_text(*attempt, *max, *status, error)
            ),
        )),
        Event::System { .. } | Event::Other { .. } => {}
        Event::Assistant(a) => {
            let who = if a.subagent { "[subagent] " } else { "" };
            for b in &a.blocks {
                match b {
                    Block::Text(t) if a.api_error => {
                        out.push(Entry::new(EntryKind::OutcomeFailed, t.trim().to_string()))
                    }
                    Block::Text(t) if !t.trim().is_empty() => {
                        out.push(Entry::new(EntryKind::Message, format!("{who}{}", t.trim())))
                    }
                    Block::Text(_) | Block::Other(_) => {}
                    Block::Thinking(t) => out.push(Entry::new(
                        EntryKind::Thinking,
                        if t.trim().is_empty() {
                            "thinking".to_string()
                        } else {
                            first_line(t, SHORT)
                        },
                    )),
                    Block::ToolUse { name, input, .. } => out.push(Entry::new(
                        EntryKind::Call,
                        format!(
                            "{who}{name}  {}",
                            first_line(&claude::tool_target(name, input), SHORT)
                        ),
                    )),
                }
            }
        }
        Event::ToolResults(rs) => {
            for r in rs {
                let kind = if r.is_error {
                    EntryKind::Failed
                } else {
                    EntryKind::Output
                };
                out.push(Entry::new(kind, shorten(&r.text, full)));
            }
        }
        Event::Result(o) => {
            let mut parts = vec![format!("result: {}", o.subtype)];
            if let Some(t) = o.turns {
                parts.push(format!("{t} turns"));
            }
            if let Some(ms) = o.duration_ms {
                parts.push(format!("{:.1} s", ms as f64 / 1000.0));
            }
            if o.tokens_in.is_some() || o.tokens_out.is_some() {
                parts.push(format!(
                    "{} in / {} out",
                    o.tokens_in.unwrap_or(0),
                    o.tokens_out.unwrap_or(0)
                ));
            }
            if let Some(c) = o.cost_usd {
                parts.push(format!("${c:.4}"));
            }
            if !o.denials.is_empty() {
                parts.push(format!("{} tool call(s) refused", o.denials.len()));
            }
            let failed = o.is_error || (o.subtype != "success" && !o.subtype.is_empty());
            if failed {
                let why = if o.text.trim().is_empty() {
                    o.errors.join("; ")
                } else {
                    first_line(&o.text, SHORT)
                };
                parts.push(format!("failed: {why}"));
            }
            let kind = if failed {
                EntryKind::OutcomeFailed
            } else {
                EntryKind::Outcome
            };
            out.push(Entry::new(kind, parts.join(" · ")));
        }
    }
}

fn codex_entries(ev: &codex::Event, full: bool, started: &mut Vec<String>, out: &mut Vec<Entry>) {
    use codex::Event;
    match ev {
        Event::ThreadStarted { id } => {
            out.push(Entry::new(EntryKind::Meta, format!("Codex thread {id}")))
        }
        Event::TurnStarted | Event::Other { .. } => {}
        Event::TurnCompleted {
            tokens_in,
            cached,
            tokens_out,
        } => {
            let cached = cached
                .filter(|c| *c > 0)
                .map(|c| format!(" ({c} cached)"))
                .unwrap_or_default();
            out.push(Entry::new(
                EntryKind::Outcome,
                format!(
                    "turn completed · {} in{cached} / {} out",
                    tokens_in.unwrap_or(0),
                    tokens_out.unwrap_or(0)
                ),
            ));
        }
        Event::TurnFailed { message } => out.push(Entry::new(
            EntryKind::OutcomeFailed,
            format!("turn failed: {}", first_line(message, SHORT)),
        )),
        Event::Error { message } if codex::is_reconnect(message) => {
            out.push(Entry::new(EntryKind::Notice, first_line(message, SHORT)))
        }
        Event::Error { message } => out.push(Entry::new(
            EntryKind::OutcomeFailed,
            format!("error: {}", first_line(message, SHORT)),
        )),
        Event::Item { phase, id, item } => {
            codex_item(*phase, id, item, full, started, out);
        }
    }
}

fn codex_item(
    phase: Phase,
    id: &str,
    item: &Item,
    full: bool,
    started: &mut Vec<String>,
    out: &mut Vec<Entry>,
) {
    // A call is shown once, when it starts (or when it completes without
    // a start seen: a log read from its middle, an item only completed).
    let mut call = |text: String, out: &mut Vec<Entry>| {
        if !started.iter().any(|s| s == id) {
            started.push(id.to_string());
            out.push(Entry::new(EntryKind::Call, text));
        }
    };
    match (phase, item) {
        (Phase::Updated, _) => {}
        (_, Item::Command { command, .. }) if phase == Phase::Started => call(
            format!("$ {}", first_line(codex::bare_command(command), SHORT)),
            out,
        ),
        (
            _,
            Item::Command {
                command,
                output,
                exit_code,
                status,
            },
        ) => {
            call(
                format!("$ {}", first_line(codex::bare_command(command), SHORT)),
                out,
            );
            let failed =
                exit_code.is_some_and(|c| c != 0) || status == "failed" || status == "declined";
            let head = match exit_code {
                Some(c) => format!("exit {c}"),
                None => status.clone(),
            };
            let body = shorten(output, full);
            let text = if body.is_empty() {
                head
            } else {
                format!("{head} · {body}")
            };
            let kind = if failed {
                EntryKind::Failed
            } else {
                EntryKind::Output
            };
            out.push(Entry::new(kind, text));
        }
        (Phase::Started, _) => {}
        (_, Item::AgentMessage(t)) => {
            out.push(Entry::new(EntryKind::Message, t.trim().to_string()))
        }
        (_, Item::Reasoning(t)) => out.push(Entry::new(EntryKind::Thinking, first_line(t, SHORT))),
        (_, Item::FileChange { changes, status }) => {
            let list: Vec<String> = changes
                .iter()
                .map(|(p, k)| {
                    let k = match k.as_str() {
                        "add" => "A",
                        "delete" => "D",
                        "update" => "M",
                        other => other,
                    };
                    format!("{k} {p}")
                })
                .collect();
            call(format!("apply_patch  {}", list.join(", ")), out);
            if status == "failed" {
                out.push(Entry::new(EntryKind::Failed, "the patch did not apply"));
            }
        }
        (
            _,
            Item::McpCall {
                tool,
                status,
                error,
            },
        ) => {
            call(format!("mcp {tool}"), out);
            if status == "failed" || !error.is_empty() {
                out.push(Entry::new(EntryKind::Failed, first_line(error, SHORT)));
            }
        }
        (_, Item::WebSearch(q)) => call(format!("web search  {}", first_line(q, SHORT)), out),
        (_, Item::Todo(done, all)) => out.push(Entry::new(
            EntryKind::Meta,
            format!("to-do list: {done} of {all} done"),
        )),
        (_, Item::Error(m)) => out.push(Entry::new(EntryKind::Notice, first_line(m, SHORT))),
        (_, Item::Other(_)) => {}
    }
}

/// A tool's result: its first line and how many lines it had (short), or
/// its first lines (full).
fn shorten(text: &str, full: bool) -> String {
    // Blank lines around a tool's output say nothing.
    let text = text.trim_matches(|c: char| c == '\n' || c == '\r' || c.is_whitespace());
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return String::new();
    }
    if full {
        let mut s = lines
            .iter()
            .take(FULL_LINES)
            .copied()
            .collect::<Vec<_>>()
            .join("\n");
        if lines.len() > FULL_LINES {
            s.push_str(&format!("\n(… {} more lines)", lines.len() - FULL_LINES));
        }
        return s;
    }
    let first = first_line(lines[0], SHORT);
    let first = first.trim_end_matches('…');
    let cut = first.chars().count() < lines[0].trim().chars().count();
    match (lines.len(), cut) {
        (1, false) => first.to_string(),
        (1, true) => format!("{first}…"),
        (n, _) => format!("{first}… ({n} lines)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_shortened_to_their_first_line() {
        assert_eq!(shorten("ok\n", false), "ok");
        assert_eq!(shorten("one\ntwo\nthree", false), "one… (3 lines)");
        assert_eq!(shorten(&"x".repeat(200), false).chars().count(), SHORT + 1);
        assert_eq!(shorten("", false), "");
        let many: String = (0..50).map(|i| format!("l{i}\n")).collect();
        let f = shorten(&many, true);
        assert!(
            f.starts_with("l0\nl1\n") && f.ends_with("(… 10 more lines)"),
            "{f}"
        );
    }

    #[test]
    fn a_claude_session_reads_as_a_transcript() {
        let log = concat!(
            r#"{"type":"system","subtype":"init","claude_code_version":"2.1.332","model":"m","tools":["Read","Bash"],"permissionMode":"dontAsk","session_id":"s"}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"a","content":[{"type":"text","text":"Running the tests."},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"cargo test"}}]},"session_id":"s"}"#,
            "\n",
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"test result: ok\nmore","is_error":false}]}}"#,
            "\n",
            "a line of stderr\n",
            r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500 Internal server error","num_turns":2}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"b","content":[{"type":"te"#,
        );
        let t = transcript(Format::ClaudeStreamJson, log.as_bytes(), false);
        let text = render(&t);
        assert_eq!(
            text,
            "● Claude Code 2.1.332 · model m · permission mode dontAsk · tools: Read, Bash\n\
             ◆ Running the tests.\n\
             → Bash  cargo test\n  \
             ← test result: ok… (2 lines)\n  \
             | a line of stderr\n\
             ✗ result: success · 2 turns · failed: API Error: 500 Internal server error\n"
        );
    }

    #[test]
    fn a_codex_session_reads_as_a_transcript() {
        let log = concat!(
            r#"{"type":"thread.started","thread_id":"th"}"#,
            "\n",
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"error","message":"Reconnecting... 1/5 (stream disconnected)"}"#,
            "\n",
            r#"{"type":"item.started","item":{"id":"1","type":"command_execution","command":"/bin/bash -lc 'cargo test'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"1","type":"command_execution","command":"/bin/bash -lc 'cargo test'","aggregated_output":"error: x\n","exit_code":101,"status":"failed"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"2","type":"file_change","changes":[{"path":"src/a.rs","kind":"update"}],"status":"completed"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"3","type":"agent_message","text":"Done.\nAll good."}}"#,
            "\n",
            r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":2}}"#,
            "\n",
        );
        let t = transcript(Format::CodexJson, log.as_bytes(), false);
        assert_eq!(
            render(&t),
            "● Codex thread th\n\
             ⚠ Reconnecting... 1/5 (stream disconnected)\n\
             → $ cargo test\n  \
             ✗ exit 101 · error: x\n\
             → apply_patch  M src/a.rs\n\
             ◆ Done.\n  All good.\n\
             ■ turn completed · 10 in (4 cached) / 2 out\n"
        );
    }
}
