//! Every kind of human gate, in one place: its options, what each option
//! does (an [`Effect`] the loop's rules act on) with the words a person
//! reads for it, its key in the decision dialog, and which evidence the
//! recorder captures when one opens. The rules, the fold, the recorder,
//! the TUI and the reports ask this table; none of them matches on a kind
//! or a decision by itself, so a new kind is one entry here (plus its
//! variant, its evidence and the rule that opens it) and a forgotten one
//! is a compile error.

use super::types::{Decision, EndStatus, GateName, HumanGateKind};

/// What deciding an option does to the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing changes: the loop goes on.
    GoOn,
    /// The run ends, with this status.
    End(EndStatus),
    /// The gate's subject goes back to the developer as a gap.
    ToDeveloper,
    /// The finding is not a problem here: the loop goes on, the finding is
    /// reported dismissed by the person, with the reason.
    Dismiss,
    /// The finding is treated as real: the review hands it to the
    /// developer as a gap, with the person's reason.
    Fix,
    /// The gate gets one more round (its cap rises by one, its structural
    /// failures and the dispatch's failures count anew).
    OneMoreRound,
    /// The gate (or the dispatch) is run again, its failures counted anew.
    RunAgain,
    /// The run may finish, but is reported partial, never complete.
    PartialDelivery,
    /// The file joins the contract's FILE SCOPE, tagged `[gated DATE]`.
    JoinScope,
    /// The contract as it is now is the one judged; GATE 0 judges again.
    AdoptContract,
    /// The contract is put back as it was judged.
    RevertContract,
    /// The budget limit that was reached rises by its configured amount
    /// again (once per decision); the loop goes on.
    RaiseBudget,
    /// The loop goes on with the rounds left: the developer gets the gaps
    /// again, with the person's note.
    Nudge,
}

/// Which evidence a gate of a kind captures when it opens (PROTOCOL §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// The file's change as hunks, against the run's base.
    FileChange,
    /// The lines a criterion or finding cites, from the iteration's snapshot.
    CitedLines,
    /// The criterion and its ABANDON line, read from the contract.
    ContractLines,
    /// Every round of the gate.
    Rounds,
    /// The failing output, or the failed dispatch's log.
    Output,
    /// What changed in the contract's judged parts, captured by the engine.
    ContractChanges,
    /// What was spent against which limit, captured by the engine.
    Spend,
    /// Two rounds' failing rows side by side with their code trees.
    Progress,
}

/// One option of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// Its token.
    pub decision: Decision,
    /// Its key in the decision dialog.
    pub key: char,
    /// What it does.
    pub effect: Effect,
}

/// A kind of human gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// The kind.
    pub kind: HumanGateKind,
    /// Its options, in the order shown.
    pub choices: &'static [Choice],
    /// What is captured when one opens.
    pub evidence: Evidence,
    /// Options earlier versions recorded on gates now read as this kind,
    /// each with the option it means now (PROTOCOL §1).
    pub renamed: &'static [(Decision, Decision)],
}

const fn choice(decision: Decision, key: char, effect: Effect) -> Choice {
    Choice {
        decision,
        key,
        effect,
    }
}

use Decision as D;
use Effect as E;

const ABANDONED: Kind = Kind {
    kind: HumanGateKind::Abandoned,
    choices: &[
        choice(D::Lift, 'l', E::ToDeveloper),
        choice(D::AcceptPartial, 'p', E::PartialDelivery),
    ],
    evidence: Evidence::ContractLines,
    renamed: &[],
};

const UNVERIFIABLE: Kind = Kind {
    kind: HumanGateKind::Unverifiable,
    choices: &[
        choice(D::Accept, 'a', E::GoOn),
        choice(D::Reject, 'x', E::End(EndStatus::NotConformant)),
    ],
    evidence: Evidence::CitedLines,
    renamed: &[],
};

const UNVERIFIABLE_FINDING: Kind = Kind {
    kind: HumanGateKind::UnverifiableFinding,
    choices: &[
        choice(D::Dismiss, 'd', E::Dismiss),
        choice(D::Fix, 'f', E::Fix),
        choice(D::Stop, 's', E::End(EndStatus::NotConformant)),
    ],
    evidence: Evidence::CitedLines,
    // Finding gates were `unverifiable` gates with `accept` and `reject`.
    renamed: &[(D::Accept, D::Dismiss), (D::Reject, D::Stop)],
};

const OUT_OF_SCOPE: Kind = Kind {
    kind: HumanGateKind::OutOfScope,
    choices: &[
        choice(D::Approve, 'a', E::JoinScope),
        choice(D::Deny, 'x', E::ToDeveloper),
    ],
    evidence: Evidence::FileChange,
    renamed: &[],
};

const CAP_REACHED: Kind = Kind {
    kind: HumanGateKind::CapReached,
    choices: &[
        choice(D::Extend, 'e', E::OneMoreRound),
        choice(D::TakeOver, 't', E::End(EndStatus::Stopped)),
        choice(D::Abort, 'A', E::End(EndStatus::Aborted)),
    ],
    evidence: Evidence::Rounds,
    renamed: &[],
};

const STRUCTURAL: Kind = Kind {
    kind: HumanGateKind::Structural,
    choices: &[
        choice(D::Retry, 'r', E::RunAgain),
        choice(D::Extend, 'e', E::OneMoreRound),
        choice(D::TakeOver, 't', E::End(EndStatus::Stopped)),
        choice(D::Abort, 'A', E::End(EndStatus::Aborted)),
    ],
    evidence: Evidence::Output,
    renamed: &[],
};

const CONTRACT_CHANGED: Kind = Kind {
    kind: HumanGateKind::ContractChanged,
    choices: &[
        choice(D::Adopt, 'a', E::AdoptContract),
        choice(D::Revert, 'r', E::RevertContract),
    ],
    evidence: Evidence::ContractChanges,
    renamed: &[],
};

const BUDGET: Kind = Kind {
    kind: HumanGateKind::Budget,
    choices: &[
        choice(D::Raise, 'r', E::RaiseBudget),
        choice(D::Stop, 's', E::End(EndStatus::Stopped)),
    ],
    evidence: Evidence::Spend,
    renamed: &[],
};

const STAGNANT: Kind = Kind {
    kind: HumanGateKind::Stagnant,
    choices: &[
        choice(D::Retry, 'r', E::Nudge),
        choice(D::Extend, 'e', E::OneMoreRound),
        choice(D::TakeOver, 't', E::End(EndStatus::Stopped)),
        choice(D::Abort, 'A', E::End(EndStatus::Aborted)),
    ],
    evidence: Evidence::Progress,
    renamed: &[],
};

impl HumanGateKind {
    /// Everything about this kind.
    pub fn spec(self) -> &'static Kind {
        match self {
            HumanGateKind::Abandoned => &ABANDONED,
            HumanGateKind::Unverifiable => &UNVERIFIABLE,
            HumanGateKind::UnverifiableFinding => &UNVERIFIABLE_FINDING,
            HumanGateKind::OutOfScope => &OUT_OF_SCOPE,
            HumanGateKind::CapReached => &CAP_REACHED,
            HumanGateKind::Structural => &STRUCTURAL,
            HumanGateKind::ContractChanged => &CONTRACT_CHANGED,
            HumanGateKind::Budget => &BUDGET,
            HumanGateKind::Stagnant => &STAGNANT,
        }
    }

    /// The decisions a person may take on a gate of this kind (PROTOCOL §1).
    pub fn options(self) -> Vec<Decision> {
        self.spec().choices.iter().map(|c| c.decision).collect()
    }

    /// The option `decision` of this kind, when it is one.
    pub fn choice(self, decision: Decision) -> Option<&'static Choice> {
        self.spec().choices.iter().find(|c| c.decision == decision)
    }

    /// What deciding `decision` on a gate of this kind does (`None`: not
    /// one of its options; a journal that says so is shown, never acted on).
    pub fn effect(self, decision: Decision) -> Option<Effect> {
        self.choice(decision).map(|c| c.effect)
    }

    /// The option `decision`, recorded on a gate of this kind, means now:
    /// itself, or its new name when an earlier version recorded it under
    /// another one (`accept` on a finding gate is `dismiss`).
    pub fn read_decision(self, decision: Decision) -> Decision {
        self.spec()
            .renamed
            .iter()
            .find(|(old, _)| *old == decision)
            .map_or(decision, |(_, new)| *new)
    }

    /// Every option of this kind with what it does, one per line, as
    /// `decision — words` (`gate`: the gate that asked, when one did).
    pub fn option_lines(self, gate: Option<GateName>) -> Vec<String> {
        self.spec().choices.iter().map(|c| c.said(gate)).collect()
    }
}

impl Choice {
    /// What this option does, in the words a person reads.
    pub fn words(&self, gate: Option<GateName>) -> String {
        self.effect.words(gate)
    }

    /// `decision — what it does`, e.g. `reject — stop the run: NOT-CONFORMANT`.
    pub fn said(&self, gate: Option<GateName>) -> String {
        format!("{} — {}", self.decision, self.words(gate))
    }
}

impl Effect {
    /// What the effect does, in the words a person reads beside the
    /// option's key (`gate`: the gate that asked, when one did).
    pub fn words(self, gate: Option<GateName>) -> String {
        let gate_name = |g: GateName| format!("GATE {} {}", g.number(), g);
        match self {
            Effect::GoOn => "checked by hand: the loop goes on".into(),
            Effect::End(EndStatus::NotConformant) => "stop the run: NOT-CONFORMANT".into(),
            Effect::End(EndStatus::Stopped) => {
                "stop the loop: a person finishes the work (the run ends stopped)".into()
            }
            Effect::End(EndStatus::Aborted) => "abort the run (the run ends aborted)".into(),
            Effect::End(other) => format!("end the run {}", other.as_str()),
            Effect::ToDeveloper => "back to the developer as a gap to close".into(),
            Effect::Dismiss => {
                "not a problem here: the loop goes on; reported as dismissed, with your reason"
                    .into()
            }
            Effect::Fix => "treat it as real: to the developer as a gap, with your reason".into(),
            Effect::OneMoreRound => match gate {
                Some(g) => format!("one more round of {}", gate_name(g)),
                None => "one more round".into(),
            },
            Effect::RunAgain => match gate {
                Some(g) => format!("run {} again", gate_name(g)),
                None => "dispatch it again".into(),
            },
            Effect::PartialDelivery => {
                "accept a partial delivery: the run may finish, reported partial".into()
            }
            Effect::JoinScope => "add the file to FILE SCOPE, tagged [gated <date>]".into(),
            Effect::AdoptContract => "judge the contract as it is now: GATE 0 runs again".into(),
            Effect::RevertContract => "put the contract back as it was judged".into(),
            Effect::RaiseBudget => {
                "raise the limit by its configured amount again and go on".into()
            }
            Effect::Nudge => {
                "back to the developer for the rounds left, with your note (--note)".into()
            }
        }
    }

    /// The status the run ends with, when the effect ends it.
    pub fn ends(self) -> Option<EndStatus> {
        match self {
            Effect::End(s) => Some(s),
            _ => None,
        }
    }

    /// True when the failures that opened the gate count anew.
    pub fn resets_failures(self) -> bool {
        matches!(self, Effect::OneMoreRound | Effect::RunAgain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_distinct_keys_and_decisions() {
        for &kind in HumanGateKind::ALL {
            let spec = kind.spec();
            assert_eq!(spec.kind, kind);
            let mut keys: Vec<char> = spec.choices.iter().map(|c| c.key).collect();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), spec.choices.len(), "{kind}: a key twice");
            let mut ds = kind.options();
            ds.dedup();
            assert_eq!(ds.len(), spec.choices.len(), "{kind}: a decision twice");
        }
    }

    #[test]
    fn effects_say_what_they_do() {
        assert_eq!(
            HumanGateKind::Unverifiable
                .effect(Decision::Reject)
                .unwrap()
                .words(None),
            "stop the run: NOT-CONFORMANT"
        );
        assert_eq!(
            HumanGateKind::CapReached
                .effect(Decision::Extend)
                .unwrap()
                .words(Some(GateName::Conformity)),
            "one more round of GATE 1 conformity"
        );
        assert_eq!(HumanGateKind::OutOfScope.effect(Decision::Lift), None);
        assert_eq!(
            HumanGateKind::UnverifiableFinding.option_lines(None),
            [
                "dismiss — not a problem here: the loop goes on; reported as dismissed, with your reason",
                "fix — treat it as real: to the developer as a gap, with your reason",
                "stop — stop the run: NOT-CONFORMANT",
            ]
        );
    }

    #[test]
    fn the_protocol_shows_every_option_with_the_rules_words() {
        let protocol = include_str!("../../docs/protocol.md");
        for &kind in HumanGateKind::ALL {
            for c in kind.spec().choices {
                let row = format!("| `{}` ({}) | {} |", c.decision, c.key, c.words(None));
                assert!(protocol.contains(&row), "docs/protocol.md lacks {row}");
            }
        }
    }

    #[test]
    fn renamed_options_mean_what_they_meant() {
        let k = HumanGateKind::UnverifiableFinding;
        for (old, new) in k.spec().renamed {
            // What the old option did on the kind it was recorded under is
            // what the new one does: the same end (or none), nothing back
            // to the developer.
            let was = HumanGateKind::Unverifiable.effect(*old).unwrap();
            let now = k.effect(*new).unwrap();
            assert_eq!(was.ends(), now.ends(), "{old} read as {new}");
            assert!(!matches!(now, Effect::Fix | Effect::ToDeveloper));
            assert_eq!(k.read_decision(*old), *new);
        }
        assert_eq!(k.read_decision(Decision::Fix), Decision::Fix);
        assert_eq!(
            HumanGateKind::Unverifiable.read_decision(Decision::Accept),
            Decision::Accept
        );
    }
}
