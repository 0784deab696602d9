//! The decision dialog of a human gate: a small state machine, testable
//! without a terminal.
//!
//! Flow: press an option's key, the cursor moves to the reason field, type
//! the reason, `Ctrl-S` confirms (`Esc` cancels, `Tab` goes back to the
//! options). Nothing is written before the confirmation: confirming yields a
//! [`DecisionRequest`], and only a successful write closes the dialog. Keys
//! arriving within [`KEY_GUARD`] of the dialog opening are dropped (a key
//! meant for the list must not decide a gate), a paste only ever lands in
//! the reason, and a gate decided elsewhere or whose evidence changed while
//! the dialog was open is shown as such.
//!
//! The evidence is the one captured when the gate opened. When the dialog
//! opens (and on `Ctrl-R`) the app has it recomputed from what is there now
//! ([`EvidenceCheck`], off the UI thread); when it differs (a file edited,
//! cited lines moved, a file vanished) the dialog says what changed, and
//! `Ctrl-R` shows the recomputed evidence instead: that text is then the one
//! saved and hashed with the decision.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::effect::{DecisionRequest, EvidenceCheck};
use crate::model::event::HumanRequest;
use crate::model::state::{DecisionRecord, ExpiryRecord};
use crate::model::{Decision, HumanGate, HumanGateKind, State};
use crate::recorder::RecordError;
use crate::recorder::evidence::lines::{evidence_hash, evidence_lines, evidence_text};
use crate::recorder::evidence::{Refreshed, Sources};
use crate::sanitize::sanitize_input;

/// Keys arriving this soon after the dialog opened are ignored.
pub const KEY_GUARD: Duration = Duration::from_millis(300);

/// Longest reason kept, in characters.
pub const REASON_MAX: usize = 2000;

/// Longest note to the developer kept, in characters.
pub const NOTE_MAX: usize = 4000;

/// Evidence lines one PageUp / PageDown moves.
pub const EVIDENCE_PAGE: usize = 20;

/// Where the keyboard goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// Option keys choose a decision.
    Options,
    /// Keys type the reason.
    Reason,
    /// Keys type the note to the developer (`Ctrl-N`).
    Note,
}

/// Where the dialog stands.
#[derive(Debug, Clone)]
pub enum Phase {
    /// Choosing and typing.
    Editing,
    /// Confirmed; waiting for the write to be durable.
    Saving,
    /// The write failed (the recorder's error, drawn in its words); the
    /// reason is kept, confirming again retries.
    Failed(Arc<RecordError>),
    /// Someone else decided this gate while the dialog was open.
    DecidedElsewhere(Box<DecisionRecord>),
    /// The gate expired while the dialog was open: nothing can be decided.
    Expired(Box<ExpiryRecord>),
}

/// What the app should do after a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Nothing more.
    Stay,
    /// The key meant nothing here (the app may treat it as a global key).
    Unhandled,
    /// Close without deciding.
    Cancel,
    /// Write this decision.
    Confirm(DecisionRequest),
    /// Recompute the evidence and show it (`Ctrl-R`).
    Refresh,
}

/// Where the dialog's evidence stands against what is there now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    /// Not compared yet.
    Unknown,
    /// Being recomputed (a refresh when `apply`).
    Checking {
        /// The recomputed evidence is to be shown when it arrives.
        apply: bool,
    },
    /// As it is now.
    Current,
    /// What changed since the gate opened (or since the last refresh).
    Changed(Vec<String>),
}

/// An open decision dialog.
#[derive(Debug, Clone)]
pub struct Dialog {
    /// The gate being decided.
    pub id: String,
    /// Its kind.
    pub kind: HumanGateKind,
    /// The options offered, in order.
    pub options: Vec<Decision>,
    /// The evidence shown, sanitised.
    pub evidence: Vec<String>,
    /// `sha256:<hex>` of `evidence`.
    pub evidence_hash: String,
    /// Where the keyboard goes.
    pub focus: Focus,
    /// The option chosen.
    pub chosen: Option<Decision>,
    /// The reason typed so far.
    pub reason: String,
    /// The note to the developer typed so far (optional).
    pub note: String,
    /// Where the dialog stands.
    pub phase: Phase,
    /// A one-line message (reason required, evidence changed...).
    pub message: Option<String>,
    /// First evidence line shown (scrolling).
    pub scroll: usize,
    /// The evidence shown against what is there now.
    pub freshness: Freshness,
    /// True once the evidence shown is a refresh, not the one captured.
    pub refreshed: bool,
    /// Who approved so far and who is still awaited, when the decision
    /// policy needs several people or approvals were counted.
    pub approvals: Option<String>,
    /// The request whose evidence is shown (refreshed or as captured).
    request: HumanRequest,
    /// The hash of the evidence as the journal holds it (changes only when
    /// the request itself changes).
    captured_hash: String,
    opened_at: Timestamp,
    approvals_seen: usize,
}

/// The approvals line of a gate under this person's decision policy (a
/// policy that cannot be read shows none here: deciding says why).
fn approvals_of(gate: &HumanGate) -> Option<String> {
    let policy = crate::audit::policy::Policy::load_user().ok();
    crate::audit::policy::approvals_line(gate, policy.as_ref())
}

impl Dialog {
    /// Opens the dialog of a gate at time `now`.
    pub fn open(gate: &HumanGate, now: Timestamp) -> Dialog {
        let req = &gate.request;
        let evidence = evidence_lines(req);
        let options = req
            .kind
            .options()
            .into_iter()
            .filter(|d| req.options.is_empty() || req.options.contains(d))
            .collect();
        let hash = evidence_hash(&evidence);
        let mut d = Dialog {
            id: req.id.clone(),
            kind: req.kind,
            options,
            captured_hash: hash.clone(),
            evidence_hash: hash,
            evidence,
            freshness: Freshness::Unknown,
            refreshed: false,
            approvals: approvals_of(gate),
            request: req.clone(),
            focus: Focus::Options,
            chosen: None,
            reason: String::new(),
            note: String::new(),
            phase: Phase::Editing,
            message: None,
            scroll: 0,
            opened_at: now,
            approvals_seen: gate.approvals.len(),
        };
        if let Some(rec) = &gate.decision {
            d.phase = Phase::DecidedElsewhere(Box::new(rec.clone()));
        } else if let Some(x) = &gate.expired {
            d.phase = Phase::Expired(Box::new(x.clone()));
        }
        d
    }

    /// The single-letter key of one of this gate's options.
    pub fn option_key(&self, decision: Decision) -> char {
        option_key(self.kind, decision)
    }

    /// What option `decision` does, in the rules' words (`model::kinds`).
    pub fn option_words(&self, decision: Decision) -> String {
        self.kind
            .choice(decision)
            .map(|c| c.words(self.request.gate))
            .unwrap_or_default()
    }

    /// True when a reason (or a note) has been typed that closing would lose.
    pub fn has_typed_reason(&self) -> bool {
        let typed = !self.reason.trim().is_empty() || !self.note.trim().is_empty();
        typed && !matches!(self.phase, Phase::DecidedElsewhere(_) | Phase::Expired(_))
    }

    /// Handles a key at time `now`.
    pub fn on_key(&mut self, key: &KeyEvent, now: Timestamp) -> Outcome {
        if self.too_soon(now) {
            return Outcome::Stay;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match self.phase {
            Phase::Saving => return Outcome::Stay,
            Phase::DecidedElsewhere(_) | Phase::Expired(_) => {
                return match key.code {
                    KeyCode::Esc | KeyCode::Enter => Outcome::Cancel,
                    _ => Outcome::Unhandled,
                };
            }
            Phase::Editing | Phase::Failed(_) => {}
        }
        match key.code {
            KeyCode::Esc => return Outcome::Cancel,
            KeyCode::Char('s') if ctrl => return self.confirm(),
            KeyCode::Char('r') if ctrl => return Outcome::Refresh,
            // The note to the developer: a field of its own, in and out.
            KeyCode::Char('n') if ctrl => {
                self.focus = match self.focus {
                    Focus::Note => Focus::Reason,
                    Focus::Options | Focus::Reason => Focus::Note,
                };
                return Outcome::Stay;
            }
            KeyCode::Tab | KeyCode::BackTab => {
                self.focus = match self.focus {
                    Focus::Options => Focus::Reason,
                    Focus::Reason | Focus::Note => Focus::Options,
                };
                return Outcome::Stay;
            }
            KeyCode::Up => {
                self.scroll = self.scroll.saturating_sub(1);
                return Outcome::Stay;
            }
            KeyCode::Down => {
                self.scroll_by(1);
                return Outcome::Stay;
            }
            // Long evidence (a file's hunks) is read a page at a time.
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_sub(EVIDENCE_PAGE);
                return Outcome::Stay;
            }
            KeyCode::PageDown => {
                self.scroll_by(EVIDENCE_PAGE);
                return Outcome::Stay;
            }
            _ => {}
        }
        match self.focus {
            Focus::Options => match key.code {
                KeyCode::Char(c) if !ctrl => {
                    match self.options.iter().find(|d| self.option_key(**d) == c) {
                        Some(d) => {
                            self.chosen = Some(*d);
                            self.focus = Focus::Reason;
                            self.message = None;
                            Outcome::Stay
                        }
                        None => Outcome::Unhandled,
                    }
                }
                _ => Outcome::Unhandled,
            },
            Focus::Reason | Focus::Note => {
                match key.code {
                    KeyCode::Char(c) if !ctrl => self.type_text(&c.to_string()),
                    KeyCode::Backspace => {
                        self.field_mut().pop();
                    }
                    _ => {}
                }
                Outcome::Stay
            }
        }
    }

    /// Handles a bracketed paste: it goes into the reason (the note when
    /// the note has the focus) and never confirms.
    pub fn on_paste(&mut self, text: &str, now: Timestamp) {
        if self.too_soon(now) || !matches!(self.phase, Phase::Editing | Phase::Failed(_)) {
            return;
        }
        self.type_text(text);
    }

    /// The state changed: notices a decision taken elsewhere and evidence that changed.
    pub fn on_state(&mut self, state: &State, now: Timestamp) {
        let Some(gate) = state.human_gate(&self.id) else {
            return;
        };
        if let Some(rec) = &gate.decision {
            let ours = matches!(self.phase, Phase::Saving)
                && Some(rec.decision.decision) == self.chosen
                && rec.decision.reason == self.reason.trim()
                && rec.decision.evidence_hash == self.evidence_hash;
            if !ours {
                self.phase = Phase::DecidedElsewhere(Box::new(rec.clone()));
            }
            return;
        }
        if let Some(x) = &gate.expired {
            self.phase = Phase::Expired(Box::new(x.clone()));
            return;
        }
        if gate.approvals.len() != self.approvals_seen {
            self.approvals_seen = gate.approvals.len();
            self.approvals = approvals_of(gate);
        }
        let evidence = evidence_lines(&gate.request);
        let hash = evidence_hash(&evidence);
        if hash != self.captured_hash && !matches!(self.phase, Phase::Saving) {
            self.request = gate.request.clone();
            self.captured_hash.clone_from(&hash);
            self.evidence = evidence;
            self.evidence_hash = hash;
            self.refreshed = false;
            self.freshness = Freshness::Unknown;
            self.chosen = None;
            self.focus = Focus::Options;
            self.phase = Phase::Editing;
            self.opened_at = now;
            self.message = Some(
                "the evidence changed while this dialog was open: read it again and choose".into(),
            );
        }
    }

    /// What recomputing the evidence shown needs; marks the dialog as
    /// checking (`apply`: to show the result).
    pub fn check(&mut self, sources: Sources, apply: bool) -> EvidenceCheck {
        self.freshness = Freshness::Checking { apply };
        EvidenceCheck {
            request: Box::new(self.request.clone()),
            sources,
            against: self.evidence_hash.clone(),
            apply,
        }
    }

    /// The recomputed evidence arrived. Dropped when it was computed for
    /// other evidence than the one shown, or once the gate is decided.
    /// Without `apply` the dialog says what changed; with it the recomputed
    /// evidence replaces the one shown and the choice is asked again.
    pub fn on_checked(&mut self, against: &str, apply: bool, fresh: Refreshed, now: Timestamp) {
        if against != self.evidence_hash || !matches!(self.phase, Phase::Editing | Phase::Failed(_))
        {
            return;
        }
        if fresh.changes.is_empty() {
            self.freshness = Freshness::Current;
            if apply {
                self.message = Some("the evidence is as it is now: nothing to refresh".into());
            }
            return;
        }
        if !apply {
            self.freshness = Freshness::Changed(fresh.changes);
            return;
        }
        self.request.evidence = fresh.evidence;
        self.evidence = evidence_lines(&self.request);
        self.evidence_hash = evidence_hash(&self.evidence);
        self.refreshed = true;
        self.freshness = Freshness::Current;
        self.scroll = 0;
        self.chosen = None;
        self.focus = Focus::Options;
        self.phase = Phase::Editing;
        // A key already on its way was meant for the evidence shown before.
        self.opened_at = now;
        self.message = Some("evidence refreshed: read it again and choose".into());
    }

    /// The write finished. Returns true when the dialog should close.
    pub fn on_write_result(&mut self, result: Result<(), RecordError>) -> bool {
        if !matches!(self.phase, Phase::Saving) {
            return false;
        }
        match result {
            Ok(()) => true,
            Err(e) => {
                self.phase = Phase::Failed(Arc::new(e));
                self.focus = Focus::Reason;
                false
            }
        }
    }

    fn scroll_by(&mut self, n: usize) {
        self.scroll = (self.scroll + n).min(self.evidence.len().saturating_sub(1));
    }

    fn too_soon(&self, now: Timestamp) -> bool {
        now < self.armed_at()
    }

    /// When keys start to count (the dialog opened, or its evidence was
    /// refreshed, [`KEY_GUARD`] before). Until then the options are drawn
    /// as not yet ready, so what a person sees says when a key counts.
    pub fn armed_at(&self) -> Timestamp {
        let guard = jiff::SignedDuration::try_from(KEY_GUARD).unwrap_or(jiff::SignedDuration::MAX);
        self.opened_at.checked_add(guard).unwrap_or(Timestamp::MAX)
    }

    /// True once keys count.
    pub fn armed(&self, now: Timestamp) -> bool {
        !self.too_soon(now)
    }

    fn type_text(&mut self, text: &str) {
        let clean = sanitize_input(text);
        let max = if self.focus == Focus::Note {
            NOTE_MAX
        } else {
            REASON_MAX
        };
        let field = self.field_mut();
        let room = max.saturating_sub(field.chars().count());
        field.extend(clean.chars().take(room));
        self.message = None;
    }

    /// The field keys type into: the note when it has the focus, else the reason.
    fn field_mut(&mut self) -> &mut String {
        if self.focus == Focus::Note {
            &mut self.note
        } else {
            &mut self.reason
        }
    }

    fn confirm(&mut self) -> Outcome {
        let Some(decision) = self.chosen else {
            self.message = Some("choose an option first".into());
            self.focus = Focus::Options;
            return Outcome::Stay;
        };
        let reason = self.reason.trim();
        if reason.is_empty() {
            self.message = Some("a reason is required".into());
            self.focus = Focus::Reason;
            return Outcome::Stay;
        }
        self.phase = Phase::Saving;
        self.message = None;
        Outcome::Confirm(DecisionRequest {
            id: self.id.clone(),
            decision,
            reason: reason.to_string(),
            evidence_hash: self.evidence_hash.clone(),
            evidence: evidence_text(&self.evidence),
            note: Some(self.note.trim().to_string()).filter(|n| !n.is_empty()),
        })
    }
}

/// The single-letter key of option `decision` of a gate of `kind` (`?`
/// when it is not one of its options).
pub fn option_key(kind: HumanGateKind, decision: Decision) -> char {
    kind.choice(decision).map_or('?', |c| c.key)
}

#[cfg(test)]
mod tests;
