//! What the fold keeps of the agents `loopwatch run` dispatched: each
//! dispatch with its finish, and the tokens and cost they used, summed per
//! gate, per iteration and for the whole run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::event::{AgentFinished, AgentRole, AgentStarted};
use crate::model::types::GateName;

/// One dispatch: its start and, once reaped, its finish.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentDispatch {
    /// The `agent.started` payload.
    #[serde(flatten)]
    pub started: AgentStarted,
    /// When it started.
    pub started_at: String,
    /// Seq of `agent.started`.
    pub started_seq: u64,
    /// The `agent.finished` payload, once recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<AgentFinished>,
    /// When it finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// The usage limit its CLI answered with, when it did (`agent.limited`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited: Option<Limited>,
}

/// A usage limit a dispatch ran into.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Limited {
    /// When it resets (RFC 3339), when the CLI said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// The CLI's words.
    #[serde(default)]
    pub message: String,
    /// Seq of `agent.limited`.
    pub seq: u64,
}

impl AgentDispatch {
    /// True while no `agent.finished` names it.
    pub fn is_running(&self) -> bool {
        self.finished.is_none()
    }

    /// True when a usage limit stopped it (it is limited, not failed).
    pub fn is_limited(&self) -> bool {
        self.limited.is_some()
    }

    /// True when it finished and succeeded.
    pub fn succeeded(&self) -> bool {
        self.finished.as_ref().is_some_and(AgentFinished::succeeded)
    }
}

/// Tokens and cost of a set of dispatches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Finished dispatches counted.
    pub dispatches: u32,
    /// Input tokens (of the dispatches that reported them).
    pub tokens_in: u64,
    /// Output tokens (of the dispatches that reported them).
    pub tokens_out: u64,
    /// Cost in US dollars of the dispatches that reported one; null when none did.
    pub cost_usd: Option<f64>,
    /// Dispatches whose cost is unknown (their cost is not in `costUsd`).
    pub unpriced: u32,
}

impl Usage {
    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.dispatches == 0
    }

    /// Adds one finished dispatch.
    pub fn add(&mut self, f: &AgentFinished) {
        self.dispatches += 1;
        self.tokens_in += f.tokens_in.unwrap_or(0);
        self.tokens_out += f.tokens_out.unwrap_or(0);
        match f.cost_usd {
            Some(c) if c.is_finite() && c >= 0.0 => {
                self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
            }
            _ => self.unpriced += 1,
        }
    }

    /// `12.3k in / 4.5k out · $0.0123` (`$?` when no dispatch reported a
    /// cost, `+?` when some did not).
    pub fn summary(&self) -> String {
        let cost = match (self.cost_usd, self.unpriced) {
            (None, _) => "$?".to_string(),
            (Some(c), 0) => format!("${c:.4}"),
            (Some(c), _) => format!("${c:.4}+?"),
        };
        format!(
            "{} in / {} out · {cost}",
            tokens(self.tokens_in),
            tokens(self.tokens_out)
        )
    }
}

fn tokens(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 1_000 {
        format!("{:.1}k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

/// Usage of the whole run, per gate and for the dispatches that serve no gate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunUsage {
    /// Every dispatch.
    pub total: Usage,
    /// Dispatches that served GATE 1.
    pub conformity: Usage,
    /// Dispatches that served GATE 2.
    pub security: Usage,
    /// The developer's dispatches.
    pub developer: Usage,
    /// Other dispatches (the review stage).
    pub other: Usage,
}

impl RunUsage {
    /// True when no dispatch finished.
    pub fn is_empty(&self) -> bool {
        self.total.is_empty()
    }

    /// Counts a finished dispatch.
    pub fn add(&mut self, gate: Option<GateName>, role: AgentRole, f: &AgentFinished) {
        self.total.add(f);
        match (gate, role) {
            (Some(GateName::Conformity), _) => self.conformity.add(f),
            (Some(GateName::Security), _) => self.security.add(f),
            (_, AgentRole::Developer) => self.developer.add(f),
            _ => self.other.add(f),
        }
    }

    /// The usage of one gate (GATE 0 runs no agent).
    pub fn gate(&self, g: GateName) -> Option<&Usage> {
        match g {
            GateName::Floor => None,
            GateName::Conformity => Some(&self.conformity),
            GateName::Security => Some(&self.security),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::event::*;
    use crate::model::rules::{self, NextAction};
    use crate::model::*;

    fn ev(seq: u64, body: EventBody) -> Event {
        Event {
            v: 1,
            seq,
            at: format!("2026-12-01T08:00:{:02}Z", seq % 60),
            prev: None,
            body,
        }
    }

    fn started(
        dispatch: u32,
        role: AgentRole,
        iteration: u32,
        gate: Option<GateName>,
    ) -> EventBody {
        EventBody::from(AgentStarted {
            dispatch,
            role,
            iteration,
            gate,
            round: gate.map(|_| 1),
            adapter: "claude".into(),
            pid: 100 + dispatch,
            pgid: 100 + dispatch,
            input_sha256: "sha256:00".into(),
            log: format!("agents/{dispatch}-{role}.log"),
            input: None,
            extra: Default::default(),
        })
    }

    fn finished(dispatch: u32, role: AgentRole, code: i32, cost: Option<f64>) -> EventBody {
        EventBody::from(AgentFinished {
            exit_code: Some(code),
            duration_ms: 10,
            tokens_in: Some(100),
            tokens_out: Some(10),
            cost_usd: cost,
            ..AgentFinished::new(dispatch, role)
        })
    }

    fn engine_run() -> Vec<Event> {
        vec![
            ev(
                1,
                EventBody::RunStarted {
                    run: Box::new(RunInfo {
                        id: "r".into(),
                        contract: "c.md".into(),
                        engine: true,
                        ..RunInfo::default()
                    }),
                    tree: None,
                    tree_missing: None,
                },
            ),
            ev(
                2,
                EventBody::IterationStarted {
                    iteration: 1,
                    trigger: "initial".into(),
                },
            ),
        ]
    }

    #[test]
    fn usage_is_summed_per_gate_iteration_and_run() {
        let mut evs = engine_run();
        evs.push(ev(3, started(1, AgentRole::Developer, 1, None)));
        evs.push(ev(4, finished(1, AgentRole::Developer, 0, Some(0.5))));
        evs.push(ev(
            5,
            started(2, AgentRole::Verifier, 1, Some(GateName::Conformity)),
        ));
        evs.push(ev(6, finished(2, AgentRole::Verifier, 0, None)));
        // A second finish of the same dispatch is ignored.
        evs.push(ev(7, finished(2, AgentRole::Verifier, 0, Some(9.0))));
        let s = fold(&evs);
        assert_eq!(s.usage.total.dispatches, 2);
        assert_eq!(s.usage.total.tokens_in, 200);
        assert_eq!(s.usage.total.cost_usd, Some(0.5));
        assert_eq!(s.usage.total.unpriced, 1);
        assert_eq!(s.usage.conformity.dispatches, 1);
        assert_eq!(s.usage.developer.cost_usd, Some(0.5));
        assert_eq!(s.iteration(1).unwrap().usage.tokens_out, 20);
        assert_eq!(s.usage.total.summary(), "200 in / 20 out · $0.5000+?");
        assert!(s.running_agent().is_none());
    }

    #[test]
    fn an_engine_run_opens_with_the_developer() {
        let mut evs = engine_run();
        assert_eq!(fold(&evs).next.action(), NextAction::Dev);
        evs.push(ev(3, started(1, AgentRole::Developer, 1, None)));
        let s = fold(&evs);
        assert_eq!(s.next.action(), NextAction::Dev);
        assert_eq!(s.running_agent().map(|a| a.started.dispatch), Some(1));
        evs.push(ev(4, finished(1, AgentRole::Developer, 0, None)));
        let s = fold(&evs);
        assert_eq!(
            (s.next.action(), s.next.gate()),
            (NextAction::NextGate, Some(GateName::Floor))
        );
        // The same journal without the engine flag keeps the old rule.
        let mut plain = evs.clone();
        if let EventBody::RunStarted { run, .. } = &mut plain[0].body {
            run.engine = false;
        }
        assert_eq!(fold(&plain[..2]).next.action(), NextAction::NextGate);
    }

    #[test]
    fn a_developer_failing_twice_opens_a_structural_gate() {
        let mut evs = engine_run();
        evs.push(ev(3, started(1, AgentRole::Developer, 1, None)));
        evs.push(ev(4, finished(1, AgentRole::Developer, 1, None)));
        let s = fold(&evs);
        assert_eq!(s.dev_strikes, 1);
        let EventBody::AgentStarted(st) = started(2, AgentRole::Developer, 1, None) else {
            unreachable!()
        };
        let EventBody::AgentFinished(f1) = finished(1, AgentRole::Developer, 1, None) else {
            unreachable!()
        };
        let before_first = fold(&evs[..3]);
        assert!(rules::gates_for_dispatch(&before_first, &st, &f1).is_empty());
        let reqs = rules::gates_for_dispatch(&s, &st, &f1);
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].kind, HumanGateKind::Structural);
        assert_eq!(reqs[0].subject, "developer");
        assert!(
            reqs[0].summary.contains("exited with status 1"),
            "{}",
            reqs[0].summary
        );
        // Recorded, then retried by a person: the strikes are reset.
        let req = rules::assign_ids(&s, 1, reqs, "developer").remove(0);
        assert_eq!(req.id, "hg-1-developer-1");
        evs.push(ev(5, started(2, AgentRole::Developer, 1, None)));
        evs.push(ev(6, finished(2, AgentRole::Developer, 1, None)));
        evs.push(ev(7, EventBody::from(req)));
        assert_eq!(fold(&evs).next.action(), NextAction::Human);
        evs.push(ev(
            8,
            EventBody::from(HumanDecision {
                id: "hg-1-developer-1".into(),
                decision: Decision::Retry,
                reason: "flaky network".into(),
                by: "a@b".into(),
                evidence_hash: String::new(),
                contract_edit: None,
                note: None,
                extra: Default::default(),
            }),
        ));
        let s = fold(&evs);
        assert_eq!(s.dev_strikes, 0);
        assert_eq!(s.next.action(), NextAction::Dev);
    }

    #[test]
    fn interrupted_dispatches_are_not_strikes() {
        let mut evs = engine_run();
        evs.push(ev(3, started(1, AgentRole::Developer, 1, None)));
        let mut f = finished(1, AgentRole::Developer, 0, None);
        if let EventBody::AgentFinished(x) = &mut f {
            x.exit_code = None;
            x.interrupted = true;
        }
        evs.push(ev(4, f));
        let s = fold(&evs);
        assert_eq!(s.dev_strikes, 0);
        assert_eq!(s.next.action(), NextAction::Dev);
        let line = evs[3].to_line();
        assert_eq!(Event::parse_line(line.as_bytes()).unwrap(), evs[3]);
    }
}
