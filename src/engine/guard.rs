//! What the engine looks at before a step that dispatches an agent:
//! - the budget: a dispatch that would start at or past a `[budget]`
//!   limit opens a `budget` gate instead;
//! - a usage limit a dispatch ran into ([`rules::pending_limit`]: not
//!   always the last one, lanes run together): waited out once when
//!   `[run] wait_for_limit` is on and its reset time is near, else a
//!   person is asked (a `structural` gate: retry dispatches again; in the
//!   review stage, what the step had not finished);
//! - progress: before the gaps of a failed round (or of a review round)
//!   go back to the developer, rounds without progress (`[run]
//!   stagnant_after`) open a `stagnant` gate with both rounds' rows and
//!   their code trees.
//!
//! The judgements are the model's ([`crate::model::budget`],
//! [`rules::progress`], [`crate::engine::adapter::limits::waitable`]); what the
//! engine adds is what only it can see: the clock and git.

use serde_json::json;
use tokio::sync::watch;

use super::Engine;
use crate::code::{CodeSnapshot, RunTrees};
use crate::model::event::{AgentRole, HumanRequest};
use crate::model::rules::progress::{self, CodeMove};
use crate::model::rules::{self, GateRequest, ReviewStep};
use crate::model::*;
use crate::recorder::gates::Gate;

use super::EngineError;

/// What the look before a step found.
pub(super) enum Guard {
    /// Go on with the step.
    Go,
    /// A gate was opened (or a note written): fold again.
    Asked,
    /// A stop was asked for while waiting.
    Stopped(i32),
}

/// The roles a step dispatches (`None`: it dispatches no agent).
pub(super) fn roles_of(next: &Next, s: &State) -> Option<Vec<AgentRole>> {
    match next {
        Next::Dev { .. } if rules::dev_handed_off(s) => Some(vec![AgentRole::Developer]),
        Next::Gate { gate, .. } | Next::Retry { gate, .. } => {
            Gate::of(*gate).judge.map(|j| vec![j.role])
        }
        Next::Review { step, .. } => match step {
            ReviewStep::Review => Some(vec![AgentRole::Reviewer]),
            ReviewStep::Verify => Some(vec![AgentRole::FindingVerifier]),
            ReviewStep::Triage => Some(vec![AgentRole::Triage]),
            ReviewStep::VerifyByTest => Some(vec![AgentRole::VerifyByTest]),
            ReviewStep::Done | ReviewStep::Green => None,
        },
        _ => None,
    }
}

impl Engine {
    /// The look before the step `s.next`.
    pub(super) async fn guard(
        &mut self,
        s: &State,
        stop: &mut watch::Receiver<Option<i32>>,
    ) -> Result<Guard, EngineError> {
        if let Next::Dev { .. } = s.next
            && !rules::dev_handed_off(s)
            && self.stagnant(s)?
        {
            return Ok(Guard::Asked);
        }
        let Some(roles) = roles_of(&s.next, s) else {
            return Ok(Guard::Go);
        };
        let budget = self.opts.config.budget.clone();
        if let Some(c) = budget.crossed(s, &roles) {
            let who = roles
                .iter()
                .map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            let req = GateRequest {
                kind: HumanGateKind::Budget,
                gate: None,
                subject: c.key.clone(),
                summary: format!(
                    "{}: the next dispatch ({who}) waits for a person (raise adds {})",
                    c.summary(),
                    c.step
                ),
                evidence: json!({
                    "key": c.key,
                    "measure": c.measure.as_str(),
                    "spent": c.spent,
                    "limit": c.limit,
                    "raiseBy": c.step,
                    "raised": c.raises,
                    "next": who,
                    "budget": budget.lines(s),
                }),
            };
            self.recorder.engine_gate(req, "budget")?;
            return Ok(Guard::Asked);
        }
        if let Some(g) = self.limit(s, stop).await? {
            return Ok(g);
        }
        if let Some(set) = self.settings.as_mut() {
            set.left = super::dispatch::BudgetLeft::of(&budget, s);
        }
        Ok(Guard::Go)
    }

    /// A usage limit nothing answered yet: waited out (once, when near and
    /// `wait_for_limit` is on), else put to a person.
    async fn limit(
        &mut self,
        s: &State,
        stop: &mut watch::Receiver<Option<i32>>,
    ) -> Result<Option<Guard>, EngineError> {
        let Some((d, in_a_row)) = rules::pending_limit(s) else {
            return Ok(None);
        };
        let n = d.started.dispatch;
        if self.waited == Some(n) {
            return Ok(None);
        }
        let until = d.limited.as_ref().and_then(|l| l.until.clone());
        let now = jiff::Timestamp::now();
        let why = if !self.opts.config.run.wait_for_limit {
            "[run] wait_for_limit is off".to_string()
        } else if in_a_row > 1 {
            format!("{in_a_row} dispatches in a row hit a usage limit")
        } else {
            // The reset time is judged against when the limit was
            // answered: an engine started again after it passed dispatches
            // at once instead of asking a person about a wait that is over.
            let answered = d
                .finished_at
                .as_deref()
                .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                .filter(|t| *t <= now)
                .unwrap_or(now);
            match crate::engine::adapter::limits::waitable(until.as_deref(), answered) {
                Ok(t) => {
                    let role = d.started.role;
                    self.recorder.note(if t > now {
                        format!(
                            "waiting for the usage limit of {role} #{n} to reset at {t} ([run] wait_for_limit); it is dispatched again then"
                        )
                    } else {
                        format!(
                            "the usage limit of {role} #{n} reset at {t} while no engine waited ([run] wait_for_limit); it is dispatched again"
                        )
                    })?;
                    let wait =
                        std::time::Duration::try_from(now.duration_until(t)).unwrap_or_default();
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        code = super::stopped(stop) => return Ok(Some(Guard::Stopped(code))),
                    }
                    self.waited = Some(n);
                    return Ok(Some(Guard::Asked));
                }
                Err(why) => why,
            }
        };
        let role = d.started.role;
        let message = d
            .limited
            .as_ref()
            .map(|l| l.message.clone())
            .unwrap_or_default();
        let subject = match d.started.gate {
            Some(g) => g.as_str(),
            None => rules::review::limit_subject(role).unwrap_or(rules::DEVELOPER_SUBJECT),
        }
        .to_string();
        let req = GateRequest {
            kind: HumanGateKind::Structural,
            gate: d.started.gate,
            subject,
            summary: format!(
                "{role} #{n} hit a usage limit ({}): {why}; retry dispatches it again",
                until
                    .as_deref()
                    .map_or("no reset time given".into(), |u| format!("resets {u}"))
            ),
            evidence: json!({
                "dispatch": n,
                "log": d.started.log,
                "limited": { "until": until, "message": message },
                "failure": format!("usage limit: {why}"),
            }),
        };
        self.recorder.engine_gate(req, "limit")?;
        Ok(Some(Guard::Asked))
    }

    /// Opens a `stagnant` gate when the failed rounds of the latest
    /// round's gate, or the review rounds that sent work back, made no
    /// progress `stagnant_after` times in a row; true when it did.
    fn stagnant(&mut self, s: &State) -> Result<bool, EngineError> {
        let Some(cur) = s.latest_round() else {
            return Ok(false);
        };
        if rules::review::sent_back(s) {
            return self.stagnant_review(s, cur.iteration);
        }
        let gate = cur.gate;
        if asked_to_stop(s, cur.iteration, |h| h.gate == Some(gate)) {
            return Ok(false);
        }
        // The gate's failed rounds, in order (at most one per iteration:
        // the last).
        let mut failed: Vec<&event::GateFinished> = Vec::new();
        for it in &s.review_iterations {
            if let Some(g) = it.gates.iter().rev().find(|g| g.gate == gate)
                && rules::round_outcome(g) == rules::RoundOutcome::Failed
            {
                failed.push(g);
            }
        }
        if failed.len() < 2 || !std::ptr::eq(*failed.last().unwrap_or(&cur), cur) {
            return Ok(false);
        }
        let rounds: Vec<Round> = failed
            .iter()
            .map(|g| Round {
                iteration: g.iteration,
                round: g.round,
                verdict: g.verdict.to_string(),
                rows: progress::failing_rows(g),
                cites: cited_files(g),
            })
            .collect();
        let title = format!("GATE {} {gate}", gate.number());
        self.judge_progress(s, &rounds, Some(gate), gate.as_str(), &title)
    }

    /// [`Engine::stagnant`] for the review rounds, when the review of
    /// iteration `n` just sent work back: its failing rows are the
    /// findings handed to the developer.
    fn stagnant_review(&mut self, s: &State, n: u32) -> Result<bool, EngineError> {
        let subject = rules::review::REVIEW_SUBJECT;
        if asked_to_stop(s, n, |h| h.gate.is_none() && h.subject == subject) {
            return Ok(false);
        }
        let sent = progress::review_rounds_sent_back(s);
        if sent.len() < 2 || sent.last().map(|it| it.iteration) != Some(n) {
            return Ok(false);
        }
        let rounds: Vec<Round> = sent
            .iter()
            .map(|it| {
                let f = it.review.as_ref().and_then(|p| p.finished.as_ref());
                Round {
                    iteration: it.iteration,
                    round: f.map_or(0, |f| f.round),
                    verdict: format!("{} gap(s)", f.map_or(0, |f| f.gaps)),
                    rows: progress::review_failing_rows(it),
                    cites: progress::review_cited_files(it),
                }
            })
            .collect();
        self.judge_progress(s, &rounds, None, subject, "the review")
    }

    /// Judges the progress of `rounds` (failed, in order, the last one
    /// the latest): opens the `stagnant` gate for `gate`/`subject` when
    /// the last `stagnant_after` of them made none; true when it did.
    fn judge_progress(
        &mut self,
        s: &State,
        rounds: &[Round],
        gate: Option<GateName>,
        subject: &str,
        title: &str,
    ) -> Result<bool, EngineError> {
        let events = crate::journal::read_all(&self.opts.pipeline.journal_path())
            .map(|b| b.events)
            .unwrap_or_default();
        let trees = RunTrees::from_events(&events);
        let worktree = self.opts.pipeline.worktree().to_path_buf();
        let tree_of = |it: u32| match trees.of(it) {
            Some(CodeSnapshot::Tree(t)) => Some(t.as_str().to_string()),
            _ => None,
        };
        // The contract is not the developer's work: GATE 0 writes its
        // EVIDENCE lines, a person may edit it.
        let contract = s
            .run
            .as_ref()
            .map(|r| r.contract.clone())
            .unwrap_or_default();
        let need = self.opts.config.run.stagnant_after as usize;
        let mut changed_last: Vec<String> = Vec::new();
        let mut without = 0usize;
        let mut first_reason = String::new();
        for (k, pair) in rounds.windows(2).enumerate().rev() {
            let (prev, now) = (&pair[0], &pair[1]);
            let code = match (tree_of(prev.iteration), tree_of(now.iteration)) {
                (Some(a), Some(b)) if a == b => CodeMove::Same,
                (Some(_), Some(_)) => match trees.changes(&worktree, prev.iteration, now.iteration)
                {
                    crate::code::CodeChanges::Files(f) => {
                        let files: Vec<String> = f
                            .iter()
                            .map(|d| d.path.clone())
                            .filter(|p| *p != contract)
                            .collect();
                        if files.is_empty() {
                            CodeMove::Same
                        } else {
                            CodeMove::Files(files)
                        }
                    }
                    crate::code::CodeChanges::Unavailable(_) => CodeMove::Unknown,
                },
                _ => CodeMove::Unknown,
            };
            if k + 2 == rounds.len()
                && let CodeMove::Files(f) = &code
            {
                changed_last = f.clone();
            }
            match progress::no_progress(&prev.rows, &now.rows, &code, &now.cites) {
                Some(reason) => {
                    if without == 0 {
                        first_reason = reason;
                    }
                    without += 1;
                }
                None => break,
            }
            if without >= need {
                break;
            }
        }
        if without < need {
            return Ok(false);
        }
        let side = |r: &Round| {
            json!({
                "iteration": r.iteration,
                "round": r.round,
                "verdict": r.verdict,
                "tree": tree_of(r.iteration),
                "rows": r.rows,
            })
        };
        let (prev, cur) = (&rounds[rounds.len() - 2], &rounds[rounds.len() - 1]);
        let req = GateRequest {
            kind: HumanGateKind::Stagnant,
            gate,
            subject: subject.to_string(),
            summary: format!("{title}: {without} round(s) without progress: {first_reason}"),
            evidence: json!({
                "reason": first_reason,
                "roundsWithoutProgress": without,
                "changedFiles": changed_last,
                "rounds": [side(prev), side(cur)],
            }),
        };
        self.recorder.engine_gate(req, "stagnant")?;
        Ok(true)
    }
}

/// True when a `stagnant` or `cap-reached` gate of iteration `n` that
/// `of` says is about these rounds was already requested.
fn asked_to_stop(s: &State, n: u32, of: impl Fn(&HumanRequest) -> bool) -> bool {
    s.human_gates.iter().any(|h| {
        h.request.iteration == n
            && matches!(
                h.request.kind,
                HumanGateKind::Stagnant | HumanGateKind::CapReached
            )
            && of(&h.request)
    })
}

/// One failed round as progress judges it: a gate's round, or a review
/// round that sent work back.
struct Round {
    iteration: u32,
    round: u32,
    verdict: String,
    rows: Vec<progress::FailingRow>,
    cites: Vec<String>,
}

/// The files a round's failing rows cite (`path:line` in a row's text,
/// a BLOCKING row's location).
fn cited_files(g: &event::GateFinished) -> Vec<String> {
    let rows = json!({ "rows": g.rows });
    let mut out: Vec<String> = crate::recorder::evidence::claim_citations(&rows)
        .into_iter()
        .map(|c| c.path)
        .collect();
    for r in g.security_rows() {
        if let Some(p) = r.location.split(':').next().filter(|p| !p.is_empty()) {
            out.push(p.to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}
