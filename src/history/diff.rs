//! What changed between two iterations: criteria states, finding verdicts,
//! verify-by-test results, triage buckets, security rows, gates decided.

use serde::Serialize;

use crate::model::*;

/// One change between two iterations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "kebab-case")]
pub enum Change {
    /// A gate's last verdict in the iteration.
    GateVerdict {
        /// Which gate.
        gate: GateName,
        /// Verdict before (absent when the gate did not run).
        before: Option<String>,
        /// Verdict after.
        after: Option<String>,
    },
    /// A criterion's state at a gate.
    Criterion {
        /// Criterion id.
        id: String,
        /// floor or conformity.
        gate: GateName,
        /// State before (absent when not judged).
        before: Option<String>,
        /// State after.
        after: Option<String>,
    },
    /// The finding verifier's verdict on a finding.
    FindingVerdict {
        /// Finding id.
        id: String,
        /// Before.
        before: Option<String>,
        /// After.
        after: Option<String>,
    },
    /// A verify-by-test result.
    VerifyResult {
        /// Finding id.
        id: String,
        /// Before.
        before: Option<String>,
        /// After.
        after: Option<String>,
    },
    /// A finding moved between accepted, deferred and rejected.
    Triage {
        /// Finding id.
        id: String,
        /// Bucket before.
        before: Option<String>,
        /// Bucket after.
        after: Option<String>,
    },
    /// A security BLOCKING row appeared.
    SecurityAdded {
        /// Severity.
        severity: String,
        /// Rule.
        rule: String,
        /// file:line.
        location: String,
    },
    /// A security BLOCKING row disappeared.
    SecurityRemoved {
        /// Severity.
        severity: String,
        /// Rule.
        rule: String,
        /// file:line.
        location: String,
    },
    /// A human gate was decided during the later iteration.
    Decided {
        /// Gate id.
        id: String,
        /// Kind.
        kind: HumanGateKind,
        /// Subject.
        subject: String,
        /// Decision.
        decision: Decision,
        /// Who.
        by: String,
        /// Why.
        reason: String,
    },
}

/// The changes from iteration `from` to iteration `to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IterationDiff {
    /// Earlier iteration.
    pub from: u32,
    /// Later iteration.
    pub to: u32,
    /// Changes, grouped by kind in the order of [`Change`].
    pub changes: Vec<Change>,
}

/// Compares two iterations of a state; `None` when either does not exist.
pub fn diff_iterations(s: &State, from: u32, to: u32) -> Option<IterationDiff> {
    let a = s.iteration(from)?;
    let b = s.iteration(to)?;
    let mut changes = Vec::new();
    for &gate in GateName::ALL {
        let x = a.last_gate(gate).map(|g| g.verdict.to_string());
        let y = b.last_gate(gate).map(|g| g.verdict.to_string());
        if x != y {
            changes.push(Change::GateVerdict {
                gate,
                before: x,
                after: y,
            });
        }
    }
    for gate in [GateName::Floor, GateName::Conformity] {
        let rows = moves(&criteria_states(a, gate), &criteria_states(b, gate));
        for (id, before, after) in rows {
            // A criterion gone without a later round of its gate is not a change.
            if after.is_some() || b.last_gate(gate).is_some() {
                changes.push(Change::Criterion {
                    id,
                    gate,
                    before,
                    after,
                });
            }
        }
    }
    let verdicts = |it: &Iteration| keyed(&it.findings, |f| (&f.id, f.verdict.as_str()));
    for (id, before, after) in moves(&verdicts(a), &verdicts(b)) {
        if after.is_some() {
            changes.push(Change::FindingVerdict { id, before, after });
        }
    }
    let results = |it: &Iteration| keyed(&it.verifications, |v| (&v.finding, v.result.as_str()));
    for (id, before, after) in moves(&results(a), &results(b)) {
        if after.is_some() {
            changes.push(Change::VerifyResult { id, before, after });
        }
    }
    if b.triage.is_some() {
        for (id, before, after) in moves(&buckets(a), &buckets(b)) {
            changes.push(Change::Triage { id, before, after });
        }
    }
    let sa = security_rows(a);
    let sb = security_rows(b);
    if b.last_gate(GateName::Security).is_some() {
        for (severity, rule, location) in sb.iter().filter(|r| !sa.contains(r)).cloned() {
            changes.push(Change::SecurityAdded {
                severity,
                rule,
                location,
            });
        }
        for (severity, rule, location) in sa.iter().filter(|r| !sb.contains(r)).cloned() {
            changes.push(Change::SecurityRemoved {
                severity,
                rule,
                location,
            });
        }
    }
    let end = s.iteration(to + 1).map_or(u64::MAX, |n| n.start_seq);
    for g in &s.human_gates {
        if let Some(d) = &g.decision
            && d.seq >= b.start_seq
            && d.seq < end
        {
            changes.push(Change::Decided {
                id: g.request.id.clone(),
                kind: g.request.kind,
                subject: g.request.subject.clone(),
                decision: d.decision.decision,
                by: d.decision.by.clone(),
                reason: d.decision.reason.clone(),
            });
        }
    }
    Some(IterationDiff { from, to, changes })
}

impl IterationDiff {
    /// One line per change, for the terminal.
    pub fn to_text(&self) -> String {
        let mut out = format!("iteration {} → {}\n", self.from, self.to);
        if self.changes.is_empty() {
            out.push_str("  no change\n");
        }
        for c in &self.changes {
            out.push_str("  ");
            out.push_str(&c.describe());
            out.push('\n');
        }
        out
    }
}

impl Change {
    /// One line describing the change.
    pub fn describe(&self) -> String {
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "—".into());
        match self {
            Change::GateVerdict {
                gate,
                before,
                after,
            } => {
                format!(
                    "GATE {} {gate}: {} → {}",
                    gate.number(),
                    opt(before),
                    opt(after)
                )
            }
            Change::Criterion {
                id,
                gate,
                before,
                after,
            } => {
                format!(
                    "criterion {id} (GATE {} {gate}): {} → {}",
                    gate.number(),
                    opt(before),
                    opt(after)
                )
            }
            Change::FindingVerdict { id, before, after } => {
                format!("finding {id} verdict: {} → {}", opt(before), opt(after))
            }
            Change::VerifyResult { id, before, after } => {
                format!(
                    "finding {id} verify-by-test: {} → {}",
                    opt(before),
                    opt(after)
                )
            }
            Change::Triage { id, before, after } => {
                format!("finding {id} moved: {} → {}", opt(before), opt(after))
            }
            Change::SecurityAdded {
                severity,
                rule,
                location,
            } => format!("security + [{severity}] {rule} — {location}"),
            Change::SecurityRemoved {
                severity,
                rule,
                location,
            } => format!("security − [{severity}] {rule} — {location}"),
            Change::Decided {
                id,
                kind,
                subject,
                decision,
                by,
                reason,
            } => {
                format!("{id} ({kind} {subject}) decided {decision} by {by}: {reason}")
            }
        }
    }

    /// True for good news (a gate or criterion passing, a finding confirmed
    /// or dropped), false for bad news, `None` when neutral.
    pub fn is_better(&self) -> Option<bool> {
        let passing = |s: &Option<String>, floor: bool| {
            s.as_deref().map(|v| {
                let word = v.split('(').next().unwrap_or(v);
                matches!(
                    word,
                    "MET" | "MET-RECORDED" | "CONFORME" | "PASS" | "DEGRADED"
                ) || (floor && word == "ABANDONED")
            })
        };
        match self {
            Change::GateVerdict { gate, after, .. } => passing(after, *gate == GateName::Floor),
            Change::Criterion { after, .. } => passing(after, false),
            Change::FindingVerdict { before: None, .. } => None,
            Change::FindingVerdict { after, .. } => match after.as_deref() {
                Some("FALSE") => Some(true),
                Some("VERIFIED") => Some(false),
                _ => None,
            },
            Change::VerifyResult { after, .. } => match after.as_deref() {
                Some("not-reproduced") => Some(true),
                Some("confirmed") => Some(false),
                _ => None,
            },
            Change::Triage { after, .. } => after.as_deref().map(|v| v != "accepted"),
            Change::SecurityAdded { .. } => Some(false),
            Change::SecurityRemoved { .. } => Some(true),
            Change::Decided { .. } => None,
        }
    }
}

fn criteria_states(it: &Iteration, gate: GateName) -> Vec<(String, String)> {
    let Some(round) = it.last_gate(gate) else {
        return Vec::new();
    };
    match gate {
        GateName::Floor => keyed(round.floor_rows(), |r| (&r.id, r.state.as_str())),
        _ => keyed(round.criterion_rows(), |r| (&r.id, r.status.as_str())),
    }
}

fn buckets(it: &Iteration) -> Vec<(String, String)> {
    let Some(b) = it.triage.as_ref().and_then(|t| t.buckets.as_ref()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, ids) in [
        ("accepted", &b.accepted),
        ("deferred", &b.deferred),
        ("rejected", &b.rejected),
    ] {
        out.extend(ids.iter().map(|id| (id.clone(), name.to_string())));
    }
    out
}

fn security_rows(it: &Iteration) -> Vec<(String, String, String)> {
    it.last_gate(GateName::Security)
        .map(|g| {
            g.security_rows()
                .map(|r| (r.severity.clone(), r.rule.clone(), r.location.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// The `(id, value)` pairs of `items`, as [`moves`] compares them.
fn keyed<'a, T: 'a>(
    items: impl IntoIterator<Item = &'a T>,
    pair: impl Fn(&'a T) -> (&'a str, &'a str),
) -> Vec<(String, String)> {
    let owned = |(id, value): (&str, &str)| (id.to_string(), value.to_string());
    items.into_iter().map(|x| owned(pair(x))).collect()
}

/// Each id of `before` or `after` (in that order) whose value differs
/// between the two, with the value before and after (`None`: absent).
fn moves(
    before: &[(String, String)],
    after: &[(String, String)],
) -> Vec<(String, Option<String>, Option<String>)> {
    let lookup =
        |v: &[(String, String)], id: &str| v.iter().find(|(k, _)| k == id).map(|(_, s)| s.clone());
    let mut ids: Vec<&String> = Vec::new();
    for (id, _) in before.iter().chain(after) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids.into_iter()
        .map(|id| (id.clone(), lookup(before, id), lookup(after, id)))
        .filter(|(_, x, y)| x != y)
        .collect()
}
