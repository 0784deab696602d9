//! One line saying what an event is: the words `loopwatch run --headless`
//! prints after `#seq type` and the timeline draws (with its marks and
//! tones around them), written once.

use super::{Event, EventBody};

impl Event {
    /// What the event says, on one line (fields from the journal as they
    /// are: the caller sanitises what it prints or draws).
    pub fn line(&self) -> String {
        match &self.body {
            EventBody::RunStarted { run, .. } => {
                format!("{} {} on {}", run.flow, run.id, run.branch)
            }
            EventBody::IterationStarted { iteration, trigger } => {
                format!("iteration {iteration} ({trigger})")
            }
            EventBody::GateStarted {
                gate,
                iteration,
                round,
                ..
            } => format!(
                "GATE {} {gate} iter {iteration} round {round}",
                gate.number()
            ),
            EventBody::GateFinished(g) => {
                let mut s = format!(
                    "GATE {} {} round {} {} {}",
                    g.gate.number(),
                    g.gate,
                    g.round,
                    g.verdict.kind.symbol(),
                    g.verdict
                );
                if g.degraded {
                    s.push_str(" ? DEGRADED");
                }
                if let Some(st) = &g.structural {
                    s.push_str(&format!(" structural: {st}"));
                }
                if !g.normalized.is_empty() {
                    s.push_str(&format!(" [normalised: {}]", g.normalized.join("; ")));
                }
                s
            }
            EventBody::FindingsVerified { findings, .. } => {
                format!("{} findings verified", findings.len())
            }
            EventBody::TriageRecorded { file, counts, .. } => format!(
                "{file}: {} accepted, {} deferred, {} rejected",
                counts.accepted, counts.deferred, counts.rejected
            ),
            EventBody::VerifyResult(r) => format!(
                "{} {} {} {}",
                r.finding,
                r.result.symbol(),
                r.result.as_str(),
                r.test_ref
            ),
            EventBody::VerifySummary(s) => format!(
                "verify-by-test: {} attempted, {} confirmed, {} downgraded, {} inconclusive{}",
                s.attempted,
                s.confirmed,
                s.downgraded,
                s.inconclusive,
                if s.timed_out { ", timed out" } else { "" }
            ),
            EventBody::FloorGuardFinished(f) => format!(
                "floor-guard against {}: {} counted, {} waived",
                f.base, f.counted, f.waived
            ),
            EventBody::HumanRequested(h) => format!("{} {}: {}", h.id, h.kind, h.summary),
            EventBody::AgentStarted(a) => a.summary(),
            EventBody::FindingLane(l) => l.summary(),
            EventBody::ReviewFinished(r) => r.summary(),
            EventBody::AgentFinished(f) => f.summary(),
            EventBody::AgentLimited(l) => l.summary(),
            EventBody::HumanDecided(d) => d.summary(),
            EventBody::HumanApproved(d) => format!("{} (more approvals awaited)", d.summary()),
            EventBody::HumanExpired(x) => format!(
                "⌛ {} EXPIRED after {}: {} applied (nobody decided)",
                x.id, x.after, x.action
            ),
            EventBody::NotifySent(n) if n.n > 1 => {
                format!("✉ {} reminder {} sent by {}", n.id, n.n - 1, n.by)
            }
            EventBody::NotifySent(n) => format!("✉ {} notification sent by {}", n.id, n.by),
            EventBody::DevDispatched { iteration, inputs } => format!(
                "to the developer (iter {iteration}): {} inputs",
                inputs.len()
            ),
            EventBody::RunEnded(e) => format!("run ended: {}", e.status.as_str()),
            EventBody::ContractJudged(c) => {
                format!("contract {} judged as it is: {}", c.path, c.why)
            }
            EventBody::Note { text } => text.clone(),
            EventBody::FindingSplit(x) => format!(
                "✂ {} (iteration {}) split from {} (iteration {}) by {}: {}",
                x.finding, x.iteration, x.earlier, x.earlier_iteration, x.by, x.reason
            ),
            EventBody::VerifyGreen(g) => {
                format!("red test {} of {}: {}", g.test_ref, g.finding, g.result)
            }
            EventBody::Unknown { fields, .. } => {
                serde_json::Value::Object(fields.as_ref().clone()).to_string()
            }
        }
    }
}
