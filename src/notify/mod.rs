//! Notifications that reach the person where they are: the gate's notice
//! (the JSON that `on_human_gate` gets on stdin and a webhook receives),
//! when it is due (`delay`, `remind`), and sending it once per gate across
//! every loopwatch process watching the pipeline (`notify.sent`, claimed
//! under the writer lock before anything is sent).
//!
//! A process waiting on a gate (`await`, the engine) expires it and sends
//! its notifications through an [`Attendant`]. Terminal bytes (title,
//! OSC 9 / 777) are in [`terminal`]; writing them is
//! the TUI's job. Nothing here blocks a UI: callers run [`Notifier::announce`]
//! on a thread of their own.

pub mod attend;
pub mod hook;
pub mod settings;
pub mod terminal;
pub mod webhook;

use std::time::Duration;

use serde::Serialize;

pub use attend::{Attendant, Look};
pub use settings::{ConfigError, NotifySettings, RawNotify, TerminalNotice, UserSettings};
pub use webhook::{Webhook, WebhookFormat};

use crate::journal::Pipeline;
use crate::model::{HumanGate, State};
use crate::recorder::Recorder;

/// What a person is told about a gate. Only the gate's own subject and
/// summary come from the journal's text, scrubbed of secrets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GateNotice {
    /// Gate id.
    pub id: String,
    /// Its kind.
    pub kind: String,
    /// The run's id (empty before `run.started`).
    pub run: String,
    /// The worktree.
    pub worktree: String,
    /// Criterion, finding, path or gate (scrubbed).
    pub subject: String,
    /// One line (scrubbed).
    pub summary: String,
    /// When the gate opened.
    pub waiting_since: String,
    /// The command that opens the TUI on this pipeline.
    pub attach: String,
    /// 1 for the first notification, 2 and up for reminders.
    pub notice: u32,
}

impl GateNotice {
    /// The notice of `gate` of the run in `pipeline`.
    pub fn new(state: &State, gate: &HumanGate, pipeline: &Pipeline, notice: u32) -> Self {
        let scrub = |s: &str| crate::redact::scrub(s).into_owned();
        GateNotice {
            id: gate.request.id.clone(),
            kind: gate.request.kind.as_str().into(),
            run: state.run.as_ref().map(|r| r.id.clone()).unwrap_or_default(),
            worktree: pipeline.worktree().display().to_string(),
            subject: scrub(&gate.request.subject),
            summary: scrub(&gate.request.summary),
            waiting_since: gate.requested_at.clone(),
            attach: format!(
                "loopwatch watch {}",
                shell_quote(&pipeline.dir().display().to_string())
            ),
            notice,
        }
    }

    /// One line for a person: `loopwatch: <id> (<kind>) waits on you — …`.
    pub fn text(&self) -> String {
        let again = if self.notice > 1 { " (reminder)" } else { "" };
        let run = if self.run.is_empty() {
            String::new()
        } else {
            format!(" in {}", self.run)
        };
        format!(
            "loopwatch: {} ({}){run} waits on you{again}: {} [{}] · {}",
            self.id, self.kind, self.summary, self.subject, self.attach
        )
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Which notification of `gate` is due at `now`, if one is: the first once
/// it has waited `delay`, then one more every `remind` after the last.
pub fn due(gate: &HumanGate, now: jiff::Timestamp, s: &NotifySettings) -> Option<u32> {
    if !gate.is_open() {
        return None;
    }
    let since = |at: &str, d: Duration| -> Option<bool> {
        let t: jiff::Timestamp = at.parse().ok()?;
        let d = jiff::SignedDuration::try_from(d).ok()?;
        Some(t.checked_add(d).ok()? <= now)
    };
    if gate.notified == 0 {
        return since(&gate.requested_at, s.delay)
            .unwrap_or(true)
            .then_some(1);
    }
    let remind = s.remind?;
    let last = gate.notified_at.as_deref().unwrap_or(&gate.requested_at);
    since(last, remind)?.then_some(gate.notified + 1)
}

/// What [`Notifier::announce`] did.
#[derive(Debug, Default)]
pub struct Announced {
    /// False when another process had already sent this one (or the gate
    /// was closed meanwhile): nothing was sent from here.
    pub sent: bool,
    /// Failures of the hook and the webhook (already logged), for the UI.
    pub failures: Vec<String>,
}

/// Sends a gate's notification through the configured hook and webhook.
#[derive(Debug, Clone, Default)]
pub struct Notifier {
    /// `on_human_gate`.
    pub hook: Option<String>,
    /// `[notify]`.
    pub settings: NotifySettings,
}

impl Notifier {
    /// True when there is something to send through.
    pub fn is_active(&self) -> bool {
        self.hook.is_some() || self.settings.webhook.is_some()
    }

    /// Claims notification `n` of gate `id` in the journal, then runs the
    /// hook and POSTs the webhook. Blocks up to the hook's and the
    /// webhook's time limits: call it off any UI thread. An error means the
    /// claim could not be written (read-only pipeline, lock held too long):
    /// nothing was sent.
    pub fn announce(
        &self,
        pipeline: &Pipeline,
        id: &str,
        n: u32,
    ) -> Result<Announced, crate::recorder::RecordError> {
        let mut out = Announced::default();
        if !self.is_active() {
            return Ok(out);
        }
        let Some(state) = Recorder::new(pipeline.clone()).claim_notice(id, n)? else {
            return Ok(out);
        };
        out.sent = true;
        let Some(gate) = state.human_gate(id) else {
            return Ok(out);
        };
        let notice = GateNotice::new(&state, gate, pipeline, n);
        if let Some(cmd) = &self.hook
            && let Err(e) = hook::run(cmd, &notice, hook::HOOK_TIMEOUT)
        {
            tracing::warn!(error = %e, gate = id, "on_human_gate failed");
            out.failures.push(e.to_string());
        }
        if let Some(w) = &self.settings.webhook
            && let Err(e) = w.send(&notice)
        {
            tracing::warn!(error = %e, gate = id, "webhook failed");
            out.failures.push(e.to_string());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::event::HumanRequest;
    use crate::model::state::GateStatus;
    use crate::model::{Decision, HumanGateKind};

    fn gate(notified: u32, notified_at: Option<&str>) -> HumanGate {
        HumanGate {
            request: HumanRequest {
                id: "hg-1-manual-1".into(),
                kind: HumanGateKind::OutOfScope,
                gate: None,
                iteration: 1,
                subject: String::new(),
                summary: String::new(),
                options: vec![Decision::Approve, Decision::Deny],
                evidence: serde_json::Value::Null,
                expires: None,
                extra: Default::default(),
            },
            requested_at: "2026-01-01T10:00:00Z".into(),
            requested_seq: 1,
            status: GateStatus::Open,
            decision: None,
            approvals: Vec::new(),
            expired: None,
            notified,
            notified_at: notified_at.map(Into::into),
            contract_applied: None,
        }
    }

    #[test]
    fn delay_and_remind() {
        let at = |s: &str| -> jiff::Timestamp { s.parse().unwrap() };
        let mut s = NotifySettings::default();
        assert_eq!(due(&gate(0, None), at("2026-01-01T10:00:00Z"), &s), Some(1));
        assert_eq!(
            due(
                &gate(1, Some("2026-01-01T10:00:00Z")),
                at("2026-01-02T00:00:00Z"),
                &s
            ),
            None
        );
        s.delay = Duration::from_secs(120);
        assert_eq!(due(&gate(0, None), at("2026-01-01T10:01:59Z"), &s), None);
        assert_eq!(due(&gate(0, None), at("2026-01-01T10:02:00Z"), &s), Some(1));
        s.remind = Some(Duration::from_secs(1800));
        let sent = gate(1, Some("2026-01-01T10:02:00Z"));
        assert_eq!(due(&sent, at("2026-01-01T10:31:59Z"), &s), None);
        assert_eq!(due(&sent, at("2026-01-01T10:32:00Z"), &s), Some(2));
        let mut closed = gate(0, None);
        closed.status = GateStatus::Decided;
        assert_eq!(due(&closed, at("2026-01-02T00:00:00Z"), &s), None);
    }
}
