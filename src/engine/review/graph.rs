//! The finding-verifier graph: **parse** (the review text to the agent with
//! `LW_STEP=parse`, its findings list checked; two attempts, then the
//! single `pipeline-fault` verdict and straight to done) → **map** (one
//! [`lane`] per finding, at most `max_concurrency` at once,
//! each transition a `finding.lane` event) → **done** (the verdicts in the
//! findings' order, recorded as `record findings` records them, and the
//! `FINDING_VERIFIER_RESULTS` text saved beside the gate outputs).
//!
//! A resumed engine finds the parsed findings and the finished lanes in
//! the journal: only the lanes without a verdict run again.
//!
//! A usage limit is no failure: once an agent of the graph answers one, no
//! dispatch of it starts (the lanes under way finish and record their
//! verdicts), and the graph returns without its end; the engine's look
//! before the next step waits the limit out or asks a person, then the
//! graph resumes.

use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;
use serde_json::{Map, Value, json};
use tokio::sync::{Semaphore, watch};

use super::commit;
use super::lane::{self, LaneJob, LaneOutcome};
use super::verdict_gate::{self, extract_object};
use super::{Ctx, EngineError};
use crate::engine::dispatch::{self, Committer, DispatchError, Job, Record, STEP_ENV, Starts};
use crate::journal::JournalError;
use crate::model::event::{AgentRole, LaneState};
use crate::model::ledger::{self, RaisedAgain};
use crate::model::{Finding, FindingVerdict, State};
use crate::recorder::Recorder;
use crate::recorder::review::Queued;

/// The id of the single verdict recorded when the parse failed twice.
pub const PARSE_FAULT_ID: &str = "pipeline-fault";

/// The first line of the results text.
pub const RESULTS_MARKER: &str = "FINDING_VERIFIER_RESULTS";

/// What the caller of the finding verifier does with each verdict, under
/// the marker line of the results text.
pub const CALLER_CONTRACT: &str = "VERIFIED: the finding stands, with its quoted evidence. FALSE: the finding is dropped, and counted as dropped. UNVERIFIABLE: the finding stays, marked unverified, for a person to decide.";

/// A finding as the parse step returned it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedFinding {
    /// Its id (every verdict of its lane is stamped with it).
    pub id: String,
    /// The item verbatim (handed to its lane).
    pub item: Value,
    /// Settled in an earlier round (the finding ledger): never verified again.
    pub raised_again: Option<RaisedAgain>,
    /// Attempts its lane made before it was held by a usage limit.
    pub attempts: u32,
}

/// The parse step's answer, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The findings, in the review's order.
    pub findings: Vec<ParsedFinding>,
    /// The project folder the lanes verify against.
    pub project_dir: String,
    /// What was normalised to read the answer.
    pub normalized: Vec<String>,
}

/// Reads the parse step's answer: `{"findings_list":[{id, severity, path,
/// lines, claim}], "project_dir"}`, every field present, ids unique.
pub fn parse_answer(text: &[u8]) -> Result<Parsed, String> {
    let (obj, normalized) = extract_object(text)?;
    let list = match obj.get("findings_list") {
        Some(Value::Array(a)) => a,
        Some(_) => return Err("findings_list is not an array".into()),
        None => return Err("no findings_list".into()),
    };
    let project_dir = match obj.get("project_dir") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::String(_)) => return Err("project_dir is empty".into()),
        Some(_) => return Err("project_dir is not a string".into()),
        None => return Err("no project_dir".into()),
    };
    let mut findings: Vec<ParsedFinding> = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let n = i + 1;
        let Value::Object(f) = item else {
            return Err(format!("finding {n} is not an object"));
        };
        let id = match f.get("id") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            Some(Value::Number(x)) => x.to_string(),
            Some(_) => return Err(format!("finding {n}: id is not a non-empty string")),
            None => return Err(format!("finding {n}: no id")),
        };
        for key in ["severity", "path", "lines", "claim"] {
            match f.get(key) {
                Some(Value::String(_)) => {}
                Some(Value::Number(_)) if key == "lines" => {}
                Some(_) => return Err(format!("finding {n} ({id}): {key} is not a string")),
                None => return Err(format!("finding {n} ({id}): no {key}")),
            }
        }
        if findings.iter().any(|p| p.id == id) {
            return Err(format!("finding id {id} appears twice"));
        }
        findings.push(ParsedFinding {
            id,
            item: item.clone(),
            raised_again: None,
            attempts: 0,
        });
    }
    Ok(Parsed {
        findings,
        project_dir,
        normalized,
    })
}

/// The input of the parse step: the review text, and the feedback when the
/// first answer was refused.
pub fn parse_input(review: &str, feedback: Option<&str>) -> String {
    let mut s = format!("REVIEW:\n{}\n", review.trim_end());
    if let Some(f) = feedback {
        s.push('\n');
        s.push_str(f);
        s.push('\n');
    }
    s
}

/// Runs the graph for `iteration` on the reviewer's `review`. `Ok(Some(code))`
/// when a stop was asked for (the finished lanes stay recorded); `Ok(None)`
/// without the graph's end when an agent answered a usage limit.
pub async fn run(
    ctx: &Ctx<'_>,
    state: &State,
    iteration: u32,
    review: &str,
    stop: &mut watch::Receiver<Option<i32>>,
) -> Result<Option<i32>, EngineError> {
    let recorded = state
        .iteration(iteration)
        .and_then(|it| it.review.as_ref())
        .filter(|p| !p.lanes.is_empty());
    let (parsed, done) = match recorded {
        Some(p) => from_lanes(p),
        None => match parse(ctx, iteration, review, stop).await? {
            ParseOutcome::Stopped(code) => return Ok(Some(code)),
            ParseOutcome::Limited => return Ok(None),
            ParseOutcome::Fault(detail) => {
                let f = Finding {
                    id: PARSE_FAULT_ID.into(),
                    severity: String::new(),
                    path: String::new(),
                    lines: String::new(),
                    claim: String::new(),
                    verdict: FindingVerdict::Unverifiable,
                    evidence: String::new(),
                    note: verdict_gate::parse_fault_note(&detail),
                    extra: Default::default(),
                };
                record_done(ctx.recorder, iteration, vec![f])?;
                return Ok(None);
            }
            ParseOutcome::Parsed(p) => {
                let after = queue(ctx.recorder, iteration, &p)?;
                match after
                    .iteration(iteration)
                    .and_then(|it| it.review.as_ref())
                    .filter(|r| r.lanes.len() == p.findings.len())
                {
                    Some(r) => from_lanes(r),
                    None => {
                        let n = p.findings.len();
                        (p, vec![None; n])
                    }
                }
            }
        },
    };
    let verdicts = match map(ctx, iteration, &parsed, done, stop).await? {
        Mapped::Verdicts(v) => v,
        Mapped::Stopped(code) => return Ok(Some(code)),
        Mapped::Limited => return Ok(None),
    };
    let findings = parsed
        .findings
        .iter()
        .zip(verdicts)
        .map(|(p, v)| finding_of(p, v))
        .collect();
    record_done(ctx.recorder, iteration, findings)?;
    Ok(None)
}

/// The findings and the final verdicts of the lanes recorded: a resumed
/// graph runs only the lanes without one (a finding raised again has its
/// earlier verdict from the start).
fn from_lanes(p: &crate::model::state::ReviewProgress) -> (Parsed, Vec<Option<Verdict>>) {
    let parsed = Parsed {
        findings: p
            .lanes
            .iter()
            .map(|l| ParsedFinding {
                id: l.finding.clone(),
                item: l.item.clone(),
                raised_again: l.raised_again.clone(),
                // A lane held by a usage limit goes on from its attempts;
                // any other lane without a verdict starts over.
                attempts: if l.state == LaneState::Limited {
                    l.attempt
                } else {
                    0
                },
            })
            .collect(),
        project_dir: p.project_dir.clone(),
        normalized: Vec::new(),
    };
    let done = p
        .lanes
        .iter()
        .map(|l| {
            l.state.is_final().then(|| Verdict {
                verdict: l.verdict.unwrap_or(FindingVerdict::Unverifiable),
                evidence: l.evidence.clone(),
                note: l.note.clone(),
            })
        })
        .collect();
    (parsed, done)
}

/// A lane's verdict, final.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The verdict.
    pub verdict: FindingVerdict,
    /// Its evidence.
    pub evidence: String,
    /// Its note.
    pub note: String,
}

enum ParseOutcome {
    Parsed(Parsed),
    Fault(String),
    Stopped(i32),
    /// The agent answered a usage limit: no attempt is counted.
    Limited,
}

async fn parse(
    ctx: &Ctx<'_>,
    iteration: u32,
    review: &str,
    stop: &mut watch::Receiver<Option<i32>>,
) -> Result<ParseOutcome, EngineError> {
    let agent = ctx.agent(AgentRole::FindingVerifier)?;
    let mut feedback: Option<String> = None;
    let mut detail = String::new();
    for attempt in 1..=2 {
        let job = Job {
            agent,
            iteration,
            gate: None,
            inputs: parse_input(review, feedback.as_deref()),
            dispatch: ctx.dispatches.take(),
        };
        let env = [(STEP_ENV, "parse".to_string())];
        let d = dispatch::dispatch_env(ctx.settings, job, &env, stop).await?;
        if d.finished.interrupted {
            return Ok(ParseOutcome::Stopped(stop.borrow().unwrap_or(130)));
        }
        if d.answer.limited.is_some() {
            return Ok(ParseOutcome::Limited);
        }
        let why = match d.finished.failure() {
            Some(f) => format!("the agent failed ({f})"),
            None => match parse_answer(&d.answer.text) {
                Ok(p) => return Ok(ParseOutcome::Parsed(p)),
                Err(e) => e,
            },
        };
        feedback = Some(verdict_gate::feedback(&why));
        if !detail.is_empty() {
            detail.push_str("; ");
        }
        detail.push_str(&format!("attempt {attempt}: {why}"));
    }
    Ok(ParseOutcome::Fault(detail))
}

/// One `finding.lane` per parsed finding, in one append
/// ([`Recorder::queue_lanes`]). Returns the state after it.
fn queue(rec: &Recorder, iteration: u32, p: &Parsed) -> Result<State, JournalError> {
    let findings: Vec<Queued<'_>> = p
        .findings
        .iter()
        .map(|f| Queued {
            id: &f.id,
            item: &f.item,
        })
        .collect();
    let out = rec.queue_lanes(iteration, &findings, &p.project_dir, &p.normalized)?;
    Ok(out.state)
}

/// How the lanes of [`map`] ended.
enum Mapped {
    /// Every lane's verdict, by index.
    Verdicts(Vec<Verdict>),
    /// A stop was asked for.
    Stopped(i32),
    /// An agent answered a usage limit: the lanes without a verdict were
    /// held (recorded `limited`).
    Limited,
}

/// Runs the lanes without a verdict, `max_concurrency` at once, their
/// appends grouped by one committer; the verdicts come back by index.
async fn map(
    ctx: &Ctx<'_>,
    iteration: u32,
    parsed: &Parsed,
    done: Vec<Option<Verdict>>,
    stop: &watch::Receiver<Option<i32>>,
) -> Result<Mapped, EngineError> {
    let (group, committer) = commit::group(ctx.recorder.pipeline().clone());
    let lanes = async move {
        // Dropped when the lanes are done, which ends the committer.
        let via = move |r: Record| -> BoxFuture<'static, Result<(), JournalError>> {
            let f = group.submit(r);
            Box::pin(async move { f.await.map(|_| ()) })
        };
        lanes(ctx, iteration, parsed, done, &via, stop).await
    };
    let (out, stats) = futures_util::future::join(lanes, committer).await;
    tracing::debug!(
        commits = stats.commits,
        requests = stats.requests,
        "finding lanes recorded"
    );
    out
}

/// The lanes of [`map`], their appends through `via`.
async fn lanes(
    ctx: &Ctx<'_>,
    iteration: u32,
    parsed: &Parsed,
    mut done: Vec<Option<Verdict>>,
    via: Committer<'_>,
    stop: &watch::Receiver<Option<i32>>,
) -> Result<Mapped, EngineError> {
    let agent = ctx.agent(AgentRole::FindingVerifier)?;
    let limit = agent.max_concurrency.max(1);
    let todo: Vec<usize> = (0..parsed.findings.len())
        .filter(|i| done.get(*i).is_none_or(Option::is_none))
        .collect();
    let mut waiting = todo
        .into_iter()
        .filter_map(|i| Some((i, parsed.findings.get(i)?)));
    // `limit` agents at once: a lane holds a slot while its agent runs and
    // gives it back once the agent was reaped, so the next lane's agent
    // starts while the finish before it is made durable. Twice as many
    // lanes are under way, the others recording their finish.
    let slots = Arc::new(Semaphore::new(limit));
    // Every lane's start is recorded before a usage limit or never made.
    let starts = Starts::default();
    let window = limit.saturating_mul(2);
    let mut running = FuturesUnordered::new();
    let mut stopped = None;
    let mut limited = false;
    let start = |(i, f): (usize, &ParsedFinding)| {
        let job = LaneJob {
            iteration,
            index: u32::try_from(i).unwrap_or(u32::MAX),
            finding: f.id.clone(),
            item: f.item.clone(),
            project_dir: parsed.project_dir.clone(),
        };
        let job = (job, f.attempts);
        let mut stop = stop.clone();
        let order = (&slots, &starts);
        async move { (i, lane::run(ctx, agent, job, via, order, &mut stop).await) }
    };
    for next in waiting.by_ref().take(window) {
        running.push(start(next));
    }
    while let Some((i, outcome)) = running.next().await {
        match outcome? {
            LaneOutcome::Final(v) => {
                if let Some(slot) = done.get_mut(i) {
                    *slot = Some(v);
                }
            }
            LaneOutcome::Stopped(code) => {
                stopped = Some(code);
                // The lanes waiting for a slot stop too.
                slots.close();
            }
            LaneOutcome::Limited => {
                // No attempt starts: the lanes under way finish theirs.
                limited = true;
                slots.close();
            }
        }
        // No new lane starts once a stop was asked for or a limit answered.
        if stopped.is_none()
            && !limited
            && stop.borrow().is_none()
            && let Some(next) = waiting.next()
        {
            running.push(start(next));
        }
    }
    if let Some(code) = stopped.or(*stop.borrow()) {
        return Ok(Mapped::Stopped(code));
    }
    if limited {
        return Ok(Mapped::Limited);
    }
    Ok(Mapped::Verdicts(
        done.into_iter()
            .map(|v| {
                v.unwrap_or_else(|| Verdict {
                    verdict: FindingVerdict::Unverifiable,
                    evidence: String::new(),
                    note: verdict_gate::lane_fault_note("the lane never ran"),
                })
            })
            .collect(),
    ))
}

/// The verified finding: every field from the parsed item, the verdict
/// from its lane.
fn finding_of(p: &ParsedFinding, v: Verdict) -> Finding {
    let obj: Map<String, Value> = p.item.as_object().cloned().unwrap_or_default();
    let text = |k: &str| match obj.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    const OWN: [&str; 8] = [
        "id", "severity", "path", "lines", "claim", "verdict", "evidence", "note",
    ];
    let mut extra: crate::model::Extra = obj
        .iter()
        .filter(|(k, _)| !OWN.contains(&k.as_str()) && k.as_str() != ledger::RAISED_AGAIN_KEY)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(r) = &p.raised_again
        && let Ok(v) = serde_json::to_value(r)
    {
        extra.insert(ledger::RAISED_AGAIN_KEY.to_string(), v);
    }
    Finding {
        id: p.id.clone(),
        severity: text("severity"),
        path: text("path"),
        lines: text("lines"),
        claim: text("claim"),
        verdict: v.verdict,
        evidence: v.evidence,
        note: v.note,
        extra,
    }
}

/// `gates/<iteration>-finding-verifier.out`, relative to `.pipeline/`.
fn results_rel(iteration: u32) -> String {
    format!("gates/{iteration}-finding-verifier.out")
}

/// The results text of `iteration`, when it was saved.
pub fn results_path(rec: &Recorder, iteration: u32) -> Option<String> {
    let rel = results_rel(iteration);
    rec.pipeline().dir().join(&rel).is_file().then_some(rel)
}

/// The `FINDING_VERIFIER_RESULTS` text: the marker, the caller contract,
/// one `{id, verdict, evidence, note}` per finding in input order.
pub fn results_text(findings: &[Finding]) -> String {
    let mut s = format!("{RESULTS_MARKER}\n{CALLER_CONTRACT}\n[\n");
    for (i, f) in findings.iter().enumerate() {
        let line = json!({
            "id": f.id,
            "verdict": f.verdict.as_str(),
            "evidence": f.evidence,
            "note": f.note,
        });
        s.push_str("  ");
        s.push_str(&line.to_string());
        if i + 1 < findings.len() {
            s.push(',');
        }
        s.push('\n');
    }
    s.push_str("]\n");
    s
}

/// Saves the results text, then records the verdicts (`findings.verified`
/// and a human gate per UNVERIFIABLE finding).
fn record_done(rec: &Recorder, iteration: u32, findings: Vec<Finding>) -> Result<(), EngineError> {
    let rel = results_rel(iteration);
    let dir = rec.pipeline().gates_dir();
    let path = rec.pipeline().dir().join(&rel);
    std::fs::create_dir_all(&dir).map_err(DispatchError::io("create", &dir))?;
    crate::util::replace_in_pipeline(&path, results_text(&findings).as_bytes())
        .map_err(DispatchError::io("write", &path))?;
    rec.findings(Some(iteration), findings)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_findings_list_is_read_with_every_field_required() {
        let p = parse_answer(
            b"```json\n{\"findings_list\":[{\"id\":\"F1\",\"severity\":\"blocking\",\"path\":\"a.rs\",\"lines\":3,\"claim\":\"x\"}],\"project_dir\":\"/w\"}\n```",
        )
        .unwrap();
        assert_eq!(p.findings[0].id, "F1");
        assert_eq!(p.project_dir, "/w");
        assert_eq!(p.normalized, ["code fence removed"]);
        let missing = parse_answer(br#"{"findings_list":[{"id":"F1","severity":"x","path":"a","lines":"1"}],"project_dir":"/w"}"#);
        assert_eq!(missing.unwrap_err(), "finding 1 (F1): no claim");
        let twice = parse_answer(br#"{"findings_list":[{"id":"F1","severity":"x","path":"a","lines":"1","claim":"c"},{"id":"F1","severity":"x","path":"a","lines":"1","claim":"c"}],"project_dir":"/w"}"#);
        assert_eq!(twice.unwrap_err(), "finding id F1 appears twice");
        assert_eq!(
            parse_answer(br#"{"findings_list":[]}"#).unwrap_err(),
            "no project_dir"
        );
    }

    #[test]
    fn the_results_text_carries_the_marker_and_the_caller_contract() {
        let f = Finding {
            id: "F1".into(),
            severity: "blocking".into(),
            path: String::new(),
            lines: String::new(),
            claim: String::new(),
            verdict: FindingVerdict::Verified,
            evidence: "a.rs:1".into(),
            note: String::new(),
            extra: Default::default(),
        };
        let t = results_text(&[f.clone(), f]);
        let mut lines = t.lines();
        assert_eq!(lines.next(), Some(RESULTS_MARKER));
        assert_eq!(lines.next(), Some(CALLER_CONTRACT));
        let json: Vec<Value> = serde_json::from_str(&t[t.find('[').unwrap()..]).unwrap();
        assert_eq!(json.len(), 2);
        assert_eq!(json[0]["verdict"], "VERIFIED");
    }
}
